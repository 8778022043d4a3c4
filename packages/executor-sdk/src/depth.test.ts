import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, jsonTextDepth, MAX_JSON_DEPTH } from './depth.ts';

/** `levels` arrays inside each other, built without recursion. */
function nestedArrays(levels: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < levels; level++) value = [value];
  return value;
}

describe('the nesting limit', () => {
  it('is 64 levels, the top-level object counting as one', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(exceedsJsonDepth(nestedArrays(64))).toBe(false);
    expect(exceedsJsonDepth(nestedArrays(65))).toBe(true);
    expect(exceedsJsonDepth({ a: { b: 1 } }, 2)).toBe(false);
    expect(exceedsJsonDepth({ a: { b: [1] } }, 2)).toBe(true);
    expect(exceedsJsonDepth('text', 0)).toBe(false);
    expect(exceedsJsonDepth(null, 0)).toBe(false);
  });

  it('answers for values far deeper than the call stack allows, without a RangeError', () => {
    const deep = nestedArrays(200_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(exceedsJsonDepth(deep)).toBe(true);
    expect(exceedsJsonDepth(JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`))).toBe(true);
  });

  it('counts a value that contains itself as too deep, and walks shared parts without blowing up', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(exceedsJsonDepth(cycle)).toBe(true);
    // 2^60 paths through 60 shared levels: still answered at once.
    let shared: unknown = {};
    for (let level = 0; level < 60; level++) shared = [shared, shared];
    expect(exceedsJsonDepth(shared)).toBe(false);
    expect(exceedsJsonDepth([[shared]], 61)).toBe(true);
  });

  it('measures JSON text by its brackets outside strings, before parsing', () => {
    expect(jsonTextDepth('{"a":[1,"[[["]}')).toBe(2);
    expect(jsonTextDepth('"\\"[[" ')).toBe(0);
    expect(jsonTextDepth('{"a\\\\":[{}]}')).toBe(3);
    expect(jsonTextDepth(`${'['.repeat(500_000)}${']'.repeat(500_000)}`)).toBe(500_000);
    expect(jsonTextDepth('17')).toBe(0);
  });
});
