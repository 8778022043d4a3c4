import { createHash } from 'node:crypto';
import { MAX_JSON_DEPTH, MetnosError } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import { callHash, canonicalJson } from './call-hash.ts';
import { EXECUTORS, proposedCall } from './test/index.ts';

/** `{ "next": … 'x' }`, `levels` objects deep. */
function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let level = 0; level < levels; level++) value = { next: value };
  return value;
}

describe('canonicalJson: equal values give equal text, different values different text', () => {
  it('writes scalars as JSON does', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(-1.5)).toBe('-1.5');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson('')).toBe('""');
  });

  it('writes non-finite numbers, undefined, functions and symbols as null', () => {
    expect(canonicalJson(Number.NaN)).toBe('null');
    expect(canonicalJson(Number.POSITIVE_INFINITY)).toBe('null');
    expect(canonicalJson(Number.NEGATIVE_INFINITY)).toBe('null');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(() => 1)).toBe('null');
    expect(canonicalJson(Symbol('s'))).toBe('null');
  });

  it('writes a bigint as its decimal string', () => {
    expect(canonicalJson(12345678901234567890n)).toBe('"12345678901234567890"');
    expect(canonicalJson({ n: 2n })).toBe('{"n":"2"}');
  });

  it('keeps array order and writes holes, undefined and functions inside arrays as null', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson([undefined, () => 0, Number.NaN, 'a'])).toBe('[null,null,null,"a"]');
    expect(canonicalJson([[1], [2, [3]]])).toBe('[[1],[2,[3]]]');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('sorts object keys at every depth and separates members with commas', () => {
    expect(canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] })).toBe(
      '{"a":[true,{"c":"x","d":null}],"b":1}',
    );
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson({ z: { y: 1, x: 2 } })).toBe('{"z":{"x":2,"y":1}}');
    expect(canonicalJson({ b: 2, a: 1 })).toBe(canonicalJson({ a: 1, b: 2 }));
  });

  it('drops undefined, function and symbol members, keeps null members', () => {
    expect(canonicalJson({ a: undefined, b: 1, c: () => 2, d: Symbol('x'), e: null })).toBe(
      '{"b":1,"e":null}',
    );
    expect(canonicalJson({ a: undefined })).toBe('{}');
  });

  it('quotes keys as JSON strings, so a key cannot forge structure', () => {
    expect(canonicalJson({ 'a":1,"b': 2 })).toBe('{"a\\":1,\\"b":2}');
    expect(canonicalJson({ 'a":1,"b': 2 })).not.toBe(canonicalJson({ a: 1, b: 2 }));
  });

  it('uses toJSON when a value has one, at any depth', () => {
    const when = new Date('2026-05-02T10:00:00Z');
    expect(canonicalJson(when)).toBe('"2026-05-02T10:00:00.000Z"');
    expect(canonicalJson({ at: when })).toBe('{"at":"2026-05-02T10:00:00.000Z"}');
    expect(canonicalJson({ toJSON: () => ({ b: 1, a: 2 }) })).toBe('{"a":2,"b":1}');
    expect(canonicalJson({ toJSON: 'not a function', a: 1 })).toBe('{"a":1,"toJSON":"not a function"}');
  });

  it('tells apart values JSON would confuse only by type', () => {
    expect(canonicalJson('1')).not.toBe(canonicalJson(1));
    expect(canonicalJson([1])).not.toBe(canonicalJson({ 0: 1 }));
    expect(canonicalJson('null')).not.toBe(canonicalJson(null));
  });
});

describe('callHash binds an approval to the exact call', () => {
  const base = proposedCall({
    executor: EXECUTORS.telegram_send,
    args: { chat: 'me', text: 'hi' },
    turnId: 't1',
    stepIndex: 1,
  });

  it('is the SHA-256 of the canonical identity', () => {
    const identity = {
      executor: base.executor.name,
      version: base.executor.version,
      args: base.args,
      turnId: 't1',
      stepIndex: 1,
    };
    expect(callHash(base)).toBe(createHash('sha256').update(canonicalJson(identity)).digest('hex'));
  });

  it('does not depend on key order or on the request text', () => {
    const reordered = { ...base, args: { text: 'hi', chat: 'me' }, request: 'something else' };
    expect(callHash(reordered)).toBe(callHash(base));
  });

  it('changes with the executor name, version, arguments, turn and step', () => {
    const hash = callHash(base);
    expect(callHash({ ...base, executor: { ...base.executor, name: 'other' } })).not.toBe(hash);
    expect(callHash({ ...base, executor: { ...base.executor, version: '9.9.9' } })).not.toBe(hash);
    expect(callHash({ ...base, args: { chat: 'me', text: 'hi!' } })).not.toBe(hash);
    expect(callHash({ ...base, args: { chat: 'me', text: 'hi', extra: null } })).not.toBe(hash);
    expect(callHash({ ...base, turnId: 't2' })).not.toBe(hash);
    expect(callHash({ ...base, stepIndex: 2 })).not.toBe(hash);
  });

  it('reads a missing turn, step or arguments as null, the same as an explicit null', () => {
    const bare = { executor: base.executor, args: undefined, turnId: undefined, stepIndex: undefined };
    const nulls = { executor: base.executor, args: null, turnId: null, stepIndex: null } as never;
    expect(callHash(bare)).toBe(callHash(nulls));
    expect(callHash(bare)).not.toBe(callHash({ ...bare, turnId: 'null' }));
    expect(callHash({ ...bare, stepIndex: 0 })).not.toBe(callHash(bare));
  });

  it('takes arguments exactly MAX_JSON_DEPTH deep and refuses one level more with a typed error', () => {
    expect(callHash({ ...base, args: nested(MAX_JSON_DEPTH - 1) })).toMatch(/^[0-9a-f]{64}$/);
    let thrown: unknown;
    try {
      callHash({ ...base, args: nested(MAX_JSON_DEPTH + 1) });
    } catch (error) {
      thrown = error;
    }
    expect(MetnosError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'arguments_too_deep' });
    expect((thrown as Error).message).toContain(`${MAX_JSON_DEPTH} levels`);
  });
});
