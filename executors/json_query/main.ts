import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

interface Args {
  json?: string;
  data?: unknown;
  fields: string[];
}

interface Result {
  path: string;
  found: boolean;
  value?: unknown;
}

type Step = { kind: 'key'; key: string } | { kind: 'index'; index: number } | { kind: 'all' };

const MISSING = Symbol('missing');
type Value = unknown | typeof MISSING;

/** Splits a path such as `items[0].tags[*]` or `headers["content-type"]` into steps. */
function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  let rest = path.trim().replace(/^\$(?=\.|\[|$)/, '');
  if (rest.startsWith('.')) rest = rest.slice(1);
  const bad = (why: string): never => {
    throw new ExecutorFailure('BadPath', `"${path}": ${why}`);
  };
  while (rest.length > 0) {
    if (rest.startsWith('[')) {
      const quoted = /^\[\s*(["'])((?:\\.|(?!\1).)*)\1\s*\]/.exec(rest);
      const bracket = /^\[\s*(\*|-?\d+)\s*\]/.exec(rest);
      if (quoted) {
        steps.push({ kind: 'key', key: quoted[2]!.replace(/\\(.)/g, '$1') });
        rest = rest.slice(quoted[0].length);
      } else if (bracket) {
        steps.push(bracket[1] === '*' ? { kind: 'all' } : { kind: 'index', index: Number(bracket[1]) });
        rest = rest.slice(bracket[0].length);
      } else {
        bad('a "[" must hold an index, "*" or a quoted key');
      }
    } else {
      const match = /^[^.[]+/.exec(rest);
      if (!match) bad('an empty key (two dots in a row?)');
      const key = match![0];
      if (key === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(key)) steps.push({ kind: 'index', index: Number(key) });
      else steps.push({ kind: 'key', key });
      rest = rest.slice(key.length);
    }
    if (rest.startsWith('.')) {
      rest = rest.slice(1);
      if (rest.length === 0) bad('it ends with a dot');
    } else if (rest.length > 0 && !rest.startsWith('[')) {
      bad(`unexpected "${rest[0]}"`);
    }
  }
  return steps;
}

/** Follows `steps` from `value`; a wildcard maps the rest of the path over every element. */
function follow(value: unknown, steps: readonly Step[]): Value {
  let current: unknown = value;
  for (let position = 0; position < steps.length; position++) {
    const step = steps[position]!;
    if (step.kind === 'all') {
      let elements: unknown[];
      if (Array.isArray(current)) elements = current;
      else if (current !== null && typeof current === 'object') elements = Object.values(current);
      else return MISSING;
      const rest = steps.slice(position + 1);
      return elements.map((element) => follow(element, rest)).filter((item) => item !== MISSING);
    }
    if (step.kind === 'index') {
      if (Array.isArray(current)) {
        const index = step.index < 0 ? current.length + step.index : step.index;
        if (index < 0 || index >= current.length) return MISSING;
        current = current[index];
        continue;
      }
      // A numeric key on an object ("errors.404") is a key, not an index.
      const key = String(step.index);
      if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return MISSING;
      current = (current as Record<string, unknown>)[key];
      continue;
    }
    if (
      current === null ||
      typeof current !== 'object' ||
      Array.isArray(current) ||
      !Object.hasOwn(current, step.key)
    ) {
      return MISSING;
    }
    current = (current as Record<string, unknown>)[step.key];
  }
  return current;
}

export default defineExecutor<Args, { results: Result[] }>({
  run(args) {
    const hasJson = args.json !== undefined;
    const hasData = Object.hasOwn(args, 'data');
    if (hasJson === hasData) {
      throw new ExecutorFailure(
        'MissingInput',
        'give the document either as `json` (text) or as `data` (a value), exactly one',
      );
    }
    let document: unknown = args.data;
    if (hasJson) {
      try {
        document = JSON.parse(args.json!);
      } catch (error) {
        throw new ExecutorFailure('InvalidJson', `the json text does not parse: ${(error as Error).message}`);
      }
    }
    const results = args.fields.map((path): Result => {
      const value = follow(document, parsePath(path));
      return value === MISSING ? { path, found: false } : { path, found: true, value };
    });
    return ok({ results });
  },
});
