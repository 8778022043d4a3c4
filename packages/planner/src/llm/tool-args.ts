import { exceedsJsonDepth, jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { z } from 'zod';
import type { ToolCall, ToolSpec } from './types.ts';

/**
 * The only thing a model is told when it names a tool it was not offered or
 * sends arguments that cannot be used. It never echoes the name, so a hostile
 * provider cannot enumerate the host's tools by probing.
 */
export const TOOL_UNAVAILABLE = 'tool unavailable';

/** Deepest nesting accepted in tool arguments (the top-level object is depth 1): the SDK's `MAX_JSON_DEPTH`. */
export const MAX_ARGS_DEPTH = MAX_JSON_DEPTH;

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Why arguments were refused. */
export type ToolArgsFailureCode = 'not_json' | 'not_object' | 'too_deep';

/** The outcome of {@link hardenToolArgs}: data, never an exception. */
export type HardenedArgs =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; code: ToolArgsFailureCode; reason: string };

const argumentsSchema = z.record(z.string(), z.unknown());

const TOO_DEEP: HardenedArgs = {
  ok: false,
  code: 'too_deep',
  reason: `arguments nest deeper than ${MAX_ARGS_DEPTH} levels`,
};

/** Recursive, so it runs only on values whose depth was checked first. */
function scrub(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const isArray = Array.isArray(value);
  const prototype = Object.getPrototypeOf(value);
  // Dates, Maps, Buffers, class instances: not the model's JSON, passed through untouched.
  if (!isArray && prototype !== Object.prototype && prototype !== null) return value;
  if (isArray) return value.map(scrub);
  const clean: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (!FORBIDDEN_KEYS.has(key)) clean[key] = scrub((value as Record<string, unknown>)[key]);
  }
  return clean;
}

/**
 * Makes a model's tool arguments safe to hand on: raw JSON text is parsed,
 * `__proto__` / `constructor` / `prototype` keys are dropped from plain
 * objects at every depth, nesting beyond 64 levels is refused (text before it
 * is parsed, values before anything walks them), and the result must be an
 * object. Empty or missing arguments become `{}`.
 *
 * @example
 * hardenToolArgs('{"path":"a","__proto__":{"admin":true}}'); // { ok: true, args: { path: 'a' } }
 */
export function hardenToolArgs(raw: unknown): HardenedArgs {
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') return { ok: true, args: {} };
    if (jsonTextDepth(value) > MAX_ARGS_DEPTH) return TOO_DEEP;
    try {
      // JSON.parse makes `__proto__` an own key rather than a prototype; scrub drops it next.
      value = JSON.parse(value);
    } catch {
      return { ok: false, code: 'not_json', reason: 'arguments are not valid JSON' };
    }
  }
  if (value === undefined || value === null) return { ok: true, args: {} };
  if (exceedsJsonDepth(value, MAX_ARGS_DEPTH)) return TOO_DEEP;
  const clean = scrub(value);
  const parsed = argumentsSchema.safeParse(clean);
  if (!parsed.success || Array.isArray(clean))
    return { ok: false, code: 'not_object', reason: 'arguments must be a JSON object' };
  return { ok: true, args: parsed.data };
}

/** The outcome of {@link checkToolCall}. */
export type CheckedToolCall =
  | { ok: true; id: string; name: string; args: Record<string, unknown> }
  | {
      ok: false;
      id: string;
      /** What to send back to the model as the observation: always {@link TOOL_UNAVAILABLE}. */
      message: typeof TOOL_UNAVAILABLE;
      code: ToolArgsFailureCode | 'unknown_tool';
      /** For operators' logs only: may name the tool. Never send it to the model. */
      detail: string;
    };

/**
 * The loop's gate for one tool call: the name must be among the tools offered
 * and the arguments must harden. On failure the model gets the generic
 * `tool unavailable`; the operator gets `detail`.
 *
 * @example
 * const checked = checkToolCall(call, tools);
 * if (!checked.ok) history.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: checked.message });
 */
export function checkToolCall(call: ToolCall, offered: Iterable<string | ToolSpec>): CheckedToolCall {
  const names = new Set<string>();
  for (const entry of offered) names.add(typeof entry === 'string' ? entry : entry.name);
  if (typeof call.name !== 'string' || !names.has(call.name)) {
    return {
      ok: false,
      id: call.id,
      message: TOOL_UNAVAILABLE,
      code: 'unknown_tool',
      detail: `the model called a tool it was not offered: ${JSON.stringify(String(call.name)).slice(0, 200)}`,
    };
  }
  const hardened = hardenToolArgs(call.args);
  if (!hardened.ok) {
    return {
      ok: false,
      id: call.id,
      message: TOOL_UNAVAILABLE,
      code: hardened.code,
      detail: `${call.name}: ${hardened.reason}`,
    };
  }
  return { ok: true, id: call.id, name: call.name, args: hardened.args };
}
