const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 64;

export { TOOL_UNAVAILABLE } from './llm/tool-args.ts';

/**
 * Cleans tool arguments from a model: prototype keys are dropped at every
 * depth, nesting past 64 levels is refused. Returns `undefined` when the
 * arguments cannot be used.
 */
export function hardenArgs(
  raw: unknown,
): { ok: true; args: Record<string, unknown> } | { ok: false; reason: string } {
  const clean = (value: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw new RangeError('arguments nested too deeply');
    if (Array.isArray(value)) return value.map((item) => clean(item, depth + 1));
    if (value !== null && typeof value === 'object') {
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return value;
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        if (!FORBIDDEN_KEYS.has(key)) result[key] = clean(item, depth + 1);
      }
      return result;
    }
    return value;
  };
  let args = raw;
  if (typeof args === 'string') {
    try {
      args = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      return { ok: false, reason: 'arguments are not JSON' };
    }
  }
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args))
    return { ok: false, reason: 'arguments must be an object' };
  try {
    return { ok: true, args: clean(args, 0) as Record<string, unknown> };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}
