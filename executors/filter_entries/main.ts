import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

type Op = 'equals' | 'not_equals' | 'contains' | 'in' | 'gt' | 'gte' | 'lt' | 'lte' | 'exists';

interface Condition {
  path?: string;
  op?: Op;
  value?: unknown;
  case_sensitive?: boolean;
  all?: Condition[];
  any?: Condition[];
}

interface Args {
  entries: unknown[];
  where?: Condition;
  where_field?: string;
  where_value?: unknown;
  limit?: number;
}

interface Output {
  entries: unknown[];
  count: number;
  total: number;
}

/** A condition checked once, before any entry is read. */
type Compiled =
  | { kind: 'all' | 'any'; parts: Compiled[] }
  | { kind: 'test'; path: string[]; op: Op; value: unknown; caseSensitive: boolean };

const MAX_PATH_PARTS = 16;
const MAX_CONDITION_DEPTH = 6;
const MAX_CONDITIONS = 64;

/**
 * Splits a dotted path (`headers.x-spam-flag`, `classes.spam`, `to.0`) into
 * its keys. Keys are read as own properties only, so `__proto__` or
 * `constructor` simply find nothing.
 */
function parsePath(path: string): string[] {
  const parts = path.trim().split('.');
  if (path.trim() === '' || parts.some((part) => part === ''))
    throw new ExecutorFailure(
      'BadPath',
      `"${path.slice(0, 80)}" is not a dotted path such as "headers.subject"`,
    );
  if (parts.length > MAX_PATH_PARTS)
    throw new ExecutorFailure('BadPath', `"${path.slice(0, 80)}" has more than ${MAX_PATH_PARTS} parts`);
  return parts;
}

const MISSING = Symbol('missing');

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

/**
 * The value at `path` in an entry. A bare name the entry does not have is
 * looked up in its `classes` (the labels `classify_entries` adds), so
 * `where_field: "spam"` reads `classes.spam`.
 */
function valueAt(entry: unknown, path: readonly string[]): unknown {
  let current: unknown = entry;
  for (const key of path) {
    current = step(current, key);
    if (current === MISSING) break;
  }
  if (current === MISSING && path.length === 1) return step(step(entry, 'classes'), path[0]!);
  return current;
}

function compile(condition: Condition, depth: number, counter: { count: number }): Compiled {
  if (++counter.count > MAX_CONDITIONS)
    throw new ExecutorFailure('BadCondition', `more than ${MAX_CONDITIONS} conditions`);
  if (depth > MAX_CONDITION_DEPTH)
    throw new ExecutorFailure('BadCondition', `conditions nest deeper than ${MAX_CONDITION_DEPTH} levels`);
  const groups = (['all', 'any'] as const).filter((kind) => condition[kind] !== undefined);
  if (groups.length > 0) {
    if (groups.length > 1 || condition.path !== undefined || condition.op !== undefined)
      throw new ExecutorFailure(
        'BadCondition',
        'a condition is either a test (path, op, value), or all, or any',
      );
    const kind = groups[0]!;
    return { kind, parts: condition[kind]!.map((part) => compile(part, depth + 1, counter)) };
  }
  if (condition.path === undefined || condition.op === undefined)
    throw new ExecutorFailure('BadCondition', 'a test needs a path and an op');
  const op = condition.op;
  if (op === 'in' && !Array.isArray(condition.value))
    throw new ExecutorFailure('BadCondition', `"in" needs a list as its value (at ${condition.path})`);
  if (op !== 'exists' && condition.value === undefined)
    throw new ExecutorFailure('BadCondition', `"${op}" needs a value (at ${condition.path})`);
  return {
    kind: 'test',
    path: parsePath(condition.path),
    op,
    value: condition.value,
    caseSensitive: condition.case_sensitive === true,
  };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const MAIL_DATE =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s+(?:[+-]\d{4}|[A-Z]{1,5}))?/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** A value as something ordered: a number, a date (ms), or text; undefined when it is neither. */
function orderable(value: unknown): { kind: 'number' | 'date' | 'text'; key: number | string } | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'number', key: value };
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (NUMBER.test(text)) return { kind: 'number', key: Number(text) };
  if (ISO_DATE.test(text) || MAIL_DATE.test(text)) {
    const time = Date.parse(text);
    if (Number.isFinite(time)) return { kind: 'date', key: time };
  }
  return { kind: 'text', key: text };
}

/** Compares `left` with `right` as numbers, dates or text; undefined when they are not comparable. */
function compare(left: unknown, right: unknown, caseSensitive: boolean): number | undefined {
  const a = orderable(left);
  const b = orderable(right);
  if (!a || !b) return undefined;
  if (a.kind === b.kind && a.kind !== 'text') return (a.key as number) - (b.key as number);
  // a number is never ordered against a word; a date against text is compared as text
  if (a.kind === 'number' || b.kind === 'number') return undefined;
  const x = caseSensitive ? String(left) : String(left).toLowerCase();
  const y = caseSensitive ? String(right) : String(right).toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function same(left: unknown, right: unknown, caseSensitive: boolean): boolean {
  if (typeof left === 'string' && typeof right === 'string')
    return caseSensitive ? left === right : left.toLowerCase() === right.toLowerCase();
  if (typeof left === 'number' || typeof right === 'number') {
    const a = orderable(left);
    const b = orderable(right);
    return a?.kind === 'number' && b?.kind === 'number' && a.key === b.key;
  }
  return left === right;
}

function holds(test: Extract<Compiled, { kind: 'test' }>, entry: unknown): boolean {
  const value = valueAt(entry, test.path);
  const present = value !== MISSING && value !== null && value !== undefined;
  const { op, caseSensitive } = test;
  switch (op) {
    case 'exists':
      return present === (test.value === undefined ? true : test.value === true);
    case 'equals':
      return present && same(value, test.value, caseSensitive);
    case 'not_equals':
      return !present || !same(value, test.value, caseSensitive);
    case 'in':
      return present && (test.value as unknown[]).some((option) => same(value, option, caseSensitive));
    case 'contains': {
      if (!present) return false;
      if (Array.isArray(value)) return value.some((item) => same(item, test.value, caseSensitive));
      if (typeof value !== 'string') return false;
      const needle = String(test.value);
      return caseSensitive ? value.includes(needle) : value.toLowerCase().includes(needle.toLowerCase());
    }
    default: {
      if (!present) return false;
      const order = compare(value, test.value, caseSensitive);
      if (order === undefined) return false;
      return op === 'gt' ? order > 0 : op === 'gte' ? order >= 0 : op === 'lt' ? order < 0 : order <= 0;
    }
  }
}

function matches(condition: Compiled, entry: unknown): boolean {
  if (condition.kind === 'test') return holds(condition, entry);
  return condition.kind === 'all'
    ? condition.parts.every((part) => matches(part, entry))
    : condition.parts.some((part) => matches(part, entry));
}

export default defineExecutor<Args, Output>({
  run(args) {
    let condition: Condition;
    if (args.where !== undefined) {
      if (args.where_field !== undefined)
        throw new ExecutorFailure('BadCondition', 'give either where, or where_field and where_value');
      condition = args.where;
    } else if (args.where_field !== undefined) {
      condition =
        args.where_value === undefined
          ? { path: args.where_field, op: 'exists' }
          : { path: args.where_field, op: 'equals', value: args.where_value };
    } else {
      throw new ExecutorFailure('BadCondition', 'no condition: give where, or where_field and where_value');
    }
    const compiled = compile(condition, 0, { count: 0 });
    const kept: unknown[] = [];
    for (const entry of args.entries) {
      if (args.limit !== undefined && kept.length >= args.limit) break;
      if (matches(compiled, entry)) kept.push(entry);
    }
    return ok({ entries: kept, count: kept.length, total: args.entries.length });
  },
});
