import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

interface Args {
  entries: unknown[];
  by?: string;
  top?: number;
}

interface Group {
  value: unknown;
  count: number;
}

interface Output {
  total: number;
  groups: Group[];
  distinct: number;
  missing: number;
}

const MAX_PATH_PARTS = 16;
const MISSING = Symbol('missing');

/**
 * Splits a dotted path (`from`, `headers.list-id`, `classes.spam`) into its
 * keys. Keys are read as own properties only, so `__proto__` or
 * `constructor` simply find nothing.
 */
function parsePath(path: string): string[] {
  const parts = path.trim().split('.');
  if (path.trim() === '' || parts.some((part) => part === ''))
    throw new ExecutorFailure(
      'BadPath',
      `"${path.slice(0, 80)}" is not a dotted path such as "classes.spam"`,
    );
  if (parts.length > MAX_PATH_PARTS)
    throw new ExecutorFailure('BadPath', `"${path.slice(0, 80)}" has more than ${MAX_PATH_PARTS} parts`);
  return parts;
}

function step(value: unknown, key: string): unknown {
  if (Array.isArray(value)) {
    if (!/^\d+$/.test(key)) return MISSING;
    const index = Number(key);
    return index < value.length ? value[index] : MISSING;
  }
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, key))
    return (value as Record<string, unknown>)[key];
  return MISSING;
}

/** The value at `path`; a bare name the entry does not have is read from its `classes`. */
function valueAt(entry: unknown, path: readonly string[]): unknown {
  let current: unknown = entry;
  for (const key of path) {
    current = step(current, key);
    if (current === MISSING) break;
  }
  if (current === MISSING && path.length === 1) return step(step(entry, 'classes'), path[0]!);
  return current;
}

export default defineExecutor<Args, Output>({
  run(args) {
    const total = args.entries.length;
    if (args.by === undefined) return ok({ total, groups: [], distinct: 0, missing: 0 });
    const path = parsePath(args.by);
    // a Map keyed by the value's JSON: no key of any entry can reach an object's prototype
    const groups = new Map<string, Group>();
    let missing = 0;
    const add = (value: unknown) => {
      const key = JSON.stringify(value) ?? 'null';
      const group = groups.get(key);
      if (group) group.count++;
      else groups.set(key, { value, count: 1 });
    };
    for (const entry of args.entries) {
      const value = valueAt(entry, path);
      if (value === MISSING || value === null || value === undefined) {
        missing++;
        continue;
      }
      // a list (flags, labels) counts once under each of its distinct elements
      if (Array.isArray(value)) for (const item of new Set(value)) add(item);
      else add(value);
    }
    const sorted = [...groups.values()].sort((left, right) => right.count - left.count);
    return ok({ total, groups: sorted.slice(0, args.top ?? 100), distinct: groups.size, missing });
  },
});
