import { describe, expect, it } from 'vitest';
import { checkToolCall, hardenToolArgs, MAX_ARGS_DEPTH, TOOL_UNAVAILABLE } from './tool-args.ts';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = { child: value };
  return value;
}

describe('hardenToolArgs', () => {
  it('strips __proto__, constructor and prototype keys at every depth, without polluting anything', () => {
    const raw =
      '{"path":"a","__proto__":{"polluted":true},"nested":{"constructor":{"prototype":{"x":1}},"list":[{"prototype":1,"ok":2}]}}';
    const result = hardenToolArgs(raw);
    expect(result).toEqual({ ok: true, args: { path: 'a', nested: { list: [{ ok: 2 }] } } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const fromObject = JSON.parse('{"keep":1,"__proto__":{"polluted":true}}');
    expect(hardenToolArgs(fromObject)).toEqual({ ok: true, args: { keep: 1 } });
  });

  it('accepts 64 levels and refuses 65', () => {
    expect(hardenToolArgs(nested(MAX_ARGS_DEPTH)).ok).toBe(true);
    expect(hardenToolArgs(nested(MAX_ARGS_DEPTH + 1))).toMatchObject({ ok: false, code: 'too_deep' });
    const deepText = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    expect(hardenToolArgs(deepText)).toMatchObject({ ok: false, code: 'too_deep' });
  });

  it('refuses cycles as too deep rather than looping', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(hardenToolArgs(cycle)).toMatchObject({ ok: false, code: 'too_deep' });
  });

  it('passes non-plain objects through untouched', () => {
    const when = new Date(0);
    const bytes = Buffer.from('hi');
    const result = hardenToolArgs({ when, bytes });
    expect(result.ok && result.args.when).toBe(when);
    expect(result.ok && result.args.bytes).toBe(bytes);
  });

  it('turns empty arguments into {} and refuses what is not a JSON object', () => {
    expect(hardenToolArgs('')).toEqual({ ok: true, args: {} });
    expect(hardenToolArgs(undefined)).toEqual({ ok: true, args: {} });
    expect(hardenToolArgs('{"a": ')).toMatchObject({ ok: false, code: 'not_json' });
    expect(hardenToolArgs('[1,2]')).toMatchObject({ ok: false, code: 'not_object' });
    expect(hardenToolArgs('"a string"')).toMatchObject({ ok: false, code: 'not_object' });
    expect(hardenToolArgs(42)).toMatchObject({ ok: false, code: 'not_object' });
  });
});

describe('checkToolCall', () => {
  it('answers an unknown tool with the generic message and keeps the name for operators only', () => {
    const checked = checkToolCall({ id: 'c1', name: 'exfiltrate_keys', args: {} }, ['fs_read']);
    expect(checked).toMatchObject({ ok: false, id: 'c1', message: TOOL_UNAVAILABLE, code: 'unknown_tool' });
    expect(checked.ok === false && checked.message).not.toContain('exfiltrate');
    expect(checked.ok === false && checked.detail).toContain('exfiltrate_keys');
  });

  it('answers unusable arguments with the same generic message', () => {
    const checked = checkToolCall({ id: 'c2', name: 'fs_read', args: nested(100) }, [
      { name: 'fs_read', description: '', parameters: {} },
    ]);
    expect(checked).toMatchObject({ ok: false, message: TOOL_UNAVAILABLE, code: 'too_deep' });
  });

  it('returns hardened arguments for an offered tool', () => {
    expect(
      checkToolCall({ id: 'c3', name: 'fs_read', args: '{"path":"x","constructor":1}' }, ['fs_read']),
    ).toEqual({
      ok: true,
      id: 'c3',
      name: 'fs_read',
      args: { path: 'x' },
    });
  });
});
