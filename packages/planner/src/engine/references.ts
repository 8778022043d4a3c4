import { exceedsJsonDepth, MAX_JSON_DEPTH, MetnosError } from '@metnos/executor-sdk';

const marker = Symbol.for('metnos.error.ReferenceError');

/** A placeholder that cannot be resolved: a missing step, field, filler, runtime key or slot. */
export class PlanReferenceError extends MetnosError {
  private readonly [marker] = true;
  readonly placeholder: string;

  constructor(placeholder: string, message: string) {
    super({ code: 'plan_reference', message });
    this.name = 'PlanReferenceError';
    this.placeholder = placeholder;
  }

  static override isInstance(error: unknown): error is PlanReferenceError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

/** `${step2.content.items[*].name}`, `${step1.content.length}`, `${FILLER:x}`, `${RUNTIME:now}`, `${SLOT:path_1}`. */
export const PLACEHOLDER =
  /\$\{\s*(?:step(\d+)((?:\.[A-Za-z0-9_-]+|\[\d+\]|\[\*\])*)(\|count)?|FILLER:([A-Za-z0-9_]+)|RUNTIME:([a-z_]+)|SLOT:([a-z]+_\d+))\s*\}/g;

/** A whole value that reads run memory: `"$ref:evidence.s1.items[0]"`. */
const REF_STRING = /^\$ref:([A-Za-z0-9_.*[\]/:@-]{1,256})$/;

/**
 * The run-memory path a value refers to, if it is a reference: the string
 * `"$ref:<path>"` or the object `{ "$ref": "<path>" }` (that one key only).
 */
export function refOf(value: unknown): string | undefined {
  if (typeof value === 'string') return REF_STRING.exec(value)?.[1];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== '$ref') return undefined;
  const path = (value as { $ref?: unknown }).$ref;
  return typeof path === 'string' ? (REF_STRING.exec(`$ref:${path}`)?.[1] ?? undefined) : undefined;
}

/** What placeholders resolve against. */
export interface ReferenceScope {
  /** Reads a `$ref` path from run memory; throws a {@link PlanReferenceError} when it cannot. */
  refs?: (path: string, text: string) => unknown;
  /** Observations of the steps that ran, by step number − 1 (holes for steps not run yet). */
  observations: ReadonlyArray<Record<string, unknown> | undefined>;
  fillers?: Readonly<Record<string, string>>;
  runtime?: Readonly<Record<string, string>>;
  slots?: Readonly<Record<string, string>>;
}

/** The parsed parts of a placeholder occurrence. */
export interface PlaceholderMatch {
  text: string;
  kind: 'step' | 'filler' | 'runtime' | 'slot' | 'ref';
  step?: number;
  path?: string[];
  count?: boolean;
  name?: string;
}

function parseMatch(match: RegExpMatchArray): PlaceholderMatch {
  const [text, step, path, count, filler, runtime, slot] = match;
  if (step !== undefined) {
    return {
      text,
      kind: 'step',
      step: Number(step),
      path: (path ?? '').match(/[A-Za-z0-9_-]+|\*/g) ?? [],
      count: count !== undefined,
    };
  }
  if (filler !== undefined) return { text, kind: 'filler', name: filler };
  if (runtime !== undefined) return { text, kind: 'runtime', name: runtime };
  return { text, kind: 'slot', name: slot! };
}

/** Every placeholder in a value, at any depth, in document order. Walks with a stack, never recursion. */
export function findPlaceholders(value: unknown): PlaceholderMatch[] {
  const found: PlaceholderMatch[] = [];
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    const ref = refOf(node);
    if (ref !== undefined) {
      found.push({ text: `$ref:${ref}`, kind: 'ref', name: ref });
      continue;
    }
    if (typeof node === 'string') {
      for (const match of node.matchAll(PLACEHOLDER)) found.push(parseMatch(match));
    } else if (node !== null && typeof node === 'object' && !seen.has(node)) {
      seen.add(node);
      const children = Array.isArray(node) ? node : Object.values(node);
      for (let index = children.length - 1; index >= 0; index--) pending.push(children[index]);
    }
  }
  return found;
}

/** Follows a path with `*` projections; `length` of an array or string counts it. */
export function followPath(root: unknown, path: readonly string[], placeholder: string): unknown {
  let node = root;
  for (let index = 0; index < path.length; index++) {
    const part = path[index]!;
    if (part === '*') {
      if (!Array.isArray(node)) throw new PlanReferenceError(placeholder, `${placeholder}: [*] needs a list`);
      const rest = path.slice(index + 1);
      return node.map((item) => followPath(item, rest, placeholder));
    }
    if (part === 'length' && (Array.isArray(node) || typeof node === 'string')) {
      node = node.length;
      continue;
    }
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) {
      throw new PlanReferenceError(
        placeholder,
        `${placeholder}: no field "${path.slice(0, index + 1).join('.')}"`,
      );
    }
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function resolveOne(match: PlaceholderMatch, scope: ReferenceScope): unknown {
  switch (match.kind) {
    case 'step': {
      const observation = scope.observations[match.step! - 1];
      if (!observation)
        throw new PlanReferenceError(
          match.text,
          `${match.text}: step ${match.step} has not produced a result`,
        );
      let root: unknown = observation;
      const first = match.path![0];
      if (first !== undefined && !Object.hasOwn(observation, first)) {
        const content = observation.content;
        if (content !== null && typeof content === 'object') root = content;
      }
      const value = followPath(root, match.path!, match.text);
      if (match.count)
        return Array.isArray(value) ? value.length : typeof value === 'string' ? value.length : value ? 1 : 0;
      return value;
    }
    case 'filler': {
      const value = scope.fillers?.[match.name!];
      if (value === undefined)
        throw new PlanReferenceError(match.text, `${match.text}: the filler has no value`);
      return value;
    }
    case 'runtime': {
      const value = scope.runtime?.[match.name!];
      if (value === undefined) throw new PlanReferenceError(match.text, `${match.text}: unknown runtime key`);
      return value;
    }
    case 'slot': {
      const value = scope.slots?.[match.name!];
      if (value === undefined)
        throw new PlanReferenceError(match.text, `${match.text}: the request has no value for this slot`);
      return value;
    }
  }
}

/**
 * Resolves every placeholder in `value`. A placeholder that is the whole
 * string keeps the referenced value's type; inside a longer string it is
 * spliced in as text (lists joined with ", ", objects as JSON). A value
 * nested deeper than `MAX_JSON_DEPTH` is refused with a
 * {@link PlanReferenceError} before it is walked.
 *
 * @example
 * resolvePlaceholders('Found ${step1.content.matches|count} matches', { observations: [obs] });
 */
export function resolvePlaceholders(value: unknown, scope: ReferenceScope): unknown {
  if (exceedsJsonDepth(value)) {
    throw new PlanReferenceError(
      '(arguments)',
      `the arguments nest deeper than ${MAX_JSON_DEPTH} levels; placeholders are not resolved in them`,
    );
  }
  return resolveWithin(value, scope);
}

function resolveWithin(value: unknown, scope: ReferenceScope): unknown {
  const ref = refOf(value);
  if (ref !== undefined) {
    if (!scope.refs)
      throw new PlanReferenceError(`$ref:${ref}`, `$ref:${ref}: run memory is not available here`);
    return scope.refs(ref, `$ref:${ref}`);
  }
  if (typeof value === 'string') {
    const matches = [...value.matchAll(PLACEHOLDER)];
    if (matches.length === 1 && matches[0]![0] === value.trim())
      return resolveOne(parseMatch(matches[0]!), scope);
    return value.replace(PLACEHOLDER, (...groups) => {
      const found = resolveOne(parseMatch(groups as unknown as RegExpMatchArray), scope);
      if (typeof found === 'string') return found;
      if (Array.isArray(found) && found.every((item) => typeof item !== 'object' || item === null))
        return found.join(', ');
      return JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((item) => resolveWithin(item, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveWithin(item, scope)]));
  }
  return value;
}

/** The entries a step produced, for `from_step`: a list content, or the one list inside an object content. */
export function entriesOf(observation: Record<string, unknown>): unknown[] {
  const content = observation.content;
  if (Array.isArray(content)) return content;
  if (content !== null && typeof content === 'object') {
    const lists = Object.values(content).filter(Array.isArray);
    if (lists.length === 1) return lists[0] as unknown[];
  }
  return content === undefined ? [] : [content];
}

/** The step numbers a step depends on through `from_step` and `${stepN…}`. */
export function referencedStepNumbers(args: Record<string, unknown>): number[] {
  const numbers = new Set<number>();
  if (typeof args.from_step === 'number') numbers.add(args.from_step);
  for (const match of findPlaceholders(args)) if (match.kind === 'step') numbers.add(match.step!);
  return [...numbers].sort((a, b) => a - b);
}
