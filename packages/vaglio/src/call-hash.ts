import { createHash } from 'node:crypto';
import { exceedsJsonDepth, MAX_JSON_DEPTH, MetnosError } from '@metnos/executor-sdk';
import type { ProposedCall } from './types.ts';

/**
 * JSON with object keys sorted at every depth, so equal values always give
 * equal text. `undefined` object members are dropped and non-finite numbers
 * become `null`, as `JSON.stringify` does.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] }); // '{"a":[true,{"c":"x","d":null}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
    if (typeof value === 'bigint') return JSON.stringify(value.toString());
    return JSON.stringify(value);
  }
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return canonicalJson(withJson.toJSON());
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => {
      const member = (value as Record<string, unknown>)[key];
      return member !== undefined && typeof member !== 'function' && typeof member !== 'symbol';
    })
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${members.join(',')}}`;
}

/**
 * The identity of one call for approvals: SHA-256 (hex) over the canonical
 * JSON of executor name, version, arguments, turn id and step. Any change to
 * any of them gives another hash. Arguments nested deeper than
 * `MAX_JSON_DEPTH` have no identity (no executor would take them): a
 * `MetnosError` with code `arguments_too_deep`, before anything recurses.
 *
 * @example
 * callHash({ executor, args: { chat: 'me', text: 'hi' }, request: 'say hi', turnId: 't1', stepIndex: 1 }); // '3f1c…'
 */
export function callHash(call: Pick<ProposedCall, 'executor' | 'args' | 'turnId' | 'stepIndex'>): string {
  if (exceedsJsonDepth(call.args)) {
    throw new MetnosError({
      code: 'arguments_too_deep',
      message: `the call's arguments nest deeper than ${MAX_JSON_DEPTH} levels; it cannot be approved`,
    });
  }
  const identity = {
    executor: call.executor.name,
    version: call.executor.version,
    args: call.args ?? null,
    turnId: call.turnId ?? null,
    stepIndex: call.stepIndex ?? null,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}
