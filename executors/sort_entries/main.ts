import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

interface Key {
  path: string;
  order?: 'asc' | 'desc';
}

interface Args {
  entries: unknown[];
  by: string | Key[];
  order?: 'asc' | 'desc';
  limit?: number;
}

interface Output {
  entries: unknown[];
  count: number;
  total: number;
}

const MAX_PATH_PARTS = 16;
const MISSING = Symbol('missing');

/**
 * Splits a dotted path (`date`, `headers.x-priority`, `classes.spam`) into
 * its keys. Keys are read as own properties only, so `__proto__` or
 * `constructor` simply find nothing.
 */
function parsePath(path: string): string[] {
  const parts = path.trim().split('.');
  if (path.trim() === '' || parts.some((part) => part === ''))
    throw new ExecutorFailure(
      'BadPath',
      `"${path.slice(0, 80)}" is not a dotted path such as "headers.date"`,
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

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const MAIL_DATE =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s+(?:[+-]\d{4}|[A-Z]{1,5}))?/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** Ranks of the kinds of value: numbers, then dates, then text, then true/false, then anything else. */
type SortKey = { rank: 0 | 1 | 2 | 3 | 4; key: number | string } | undefined;

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

function sortKey(value: unknown): SortKey {
  if (value === MISSING || value === null || value === undefined) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? { rank: 0, key: value } : undefined;
  if (typeof value === 'boolean') return { rank: 3, key: value ? 1 : 0 };
  if (typeof value === 'string') {
    const text = value.trim();
    if (NUMBER.test(text)) return { rank: 0, key: Number(text) };
    if (ISO_DATE.test(text) || MAIL_DATE.test(text)) {
      const time = Date.parse(text);
      if (Number.isFinite(time)) return { rank: 1, key: time };
    }
    return { rank: 2, key: text };
  }
  return { rank: 4, key: JSON.stringify(value) ?? '' };
}

function compareKeys(left: SortKey, right: SortKey): number {
  // missing values go last, whichever the order
  if (!left || !right) return left ? -1 : right ? 1 : 0;
  if (left.rank !== right.rank) return left.rank - right.rank;
  if (typeof left.key === 'number' && typeof right.key === 'number') return left.key - right.key;
  return collator.compare(String(left.key), String(right.key));
}

export default defineExecutor<Args, Output>({
  run(args) {
    const keys: Key[] = typeof args.by === 'string' ? [{ path: args.by, order: args.order }] : args.by;
    if (keys.length === 0) throw new ExecutorFailure('BadPath', 'sort by at least one path');
    const plan = keys.map((key) => ({
      path: parsePath(key.path),
      sign: (key.order ?? args.order ?? 'asc') === 'desc' ? -1 : 1,
    }));
    const rows = args.entries.map((entry, index) => ({
      entry,
      index,
      keys: plan.map(({ path }) => sortKey(valueAt(entry, path))),
    }));
    rows.sort((left, right) => {
      for (const [position, { sign }] of plan.entries()) {
        const a = left.keys[position];
        const b = right.keys[position];
        if (!a || !b) {
          const missing = compareKeys(a, b);
          if (missing !== 0) return missing;
          continue;
        }
        const order = compareKeys(a, b) * sign;
        if (order !== 0) return order;
      }
      return left.index - right.index;
    });
    const sorted = rows.slice(0, args.limit ?? rows.length).map((row) => row.entry);
    return ok({ entries: sorted, count: sorted.length, total: args.entries.length });
  },
});
