import { MetnosError } from '@metnos/executor-sdk';

const marker = Symbol.for('metnos.error.PipingError');

/** A `{{stepN.field}}` reference that points at nothing. */
export class PipingError extends MetnosError {
  private readonly [marker] = true;
  readonly reference: string;

  constructor(reference: string, message: string) {
    super({ code: 'piping_unresolved', message });
    this.name = 'PipingError';
    this.reference = reference;
  }

  static override isInstance(error: unknown): error is PipingError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

const WHOLE = /^\s*\{\{\s*step(\d+)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)\s*\}\}\s*$/;
const INNER = /\{\{\s*step(\d+)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)\s*\}\}/g;

function lookup(
  observations: readonly unknown[],
  stepText: string,
  path: string,
  reference: string,
): unknown {
  const step = Number(stepText);
  if (step < 1 || step > observations.length) {
    throw new PipingError(
      reference,
      `${reference} points at step ${step}, but only ${observations.length} step(s) ran before`,
    );
  }
  let node: unknown = observations[step - 1];
  const parts = path.match(/[A-Za-z0-9_-]+/g) ?? [];
  const first = parts[0];
  if (first !== undefined && node !== null && typeof node === 'object' && !Object.hasOwn(node, first)) {
    const content = (node as Record<string, unknown>).content;
    if (content !== null && typeof content === 'object' && Object.hasOwn(content, first)) node = content;
  }
  for (const part of parts) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) {
      throw new PipingError(reference, `${reference}: step ${step} has no field "${parts.join('.')}"`);
    }
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** True when `value` holds at least one `{{stepN…}}` reference anywhere. */
export function hasReferences(value: unknown): boolean {
  if (typeof value === 'string') return /\{\{\s*step\d+/.test(value);
  if (Array.isArray(value)) return value.some(hasReferences);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasReferences);
  return false;
}

/** The step numbers `value` refers to. */
export function referencedSteps(value: unknown): number[] {
  const found = new Set<number>();
  const visit = (node: unknown) => {
    if (typeof node === 'string') for (const match of node.matchAll(INNER)) found.add(Number(match[1]));
    else if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') Object.values(node).forEach(visit);
  };
  visit(value);
  return [...found].sort((a, b) => a - b);
}

/**
 * Replaces `{{stepN.field.path}}` references with values from earlier
 * observations (1-indexed). A reference that is the whole value keeps the
 * referenced value's type; one inside a longer string is spliced in as text
 * (objects as JSON). A reference to a missing step or field throws
 * {@link PipingError}. A field missing from the observation is looked up in
 * its `content` too, so `{{step1.bytes_written}}` reads `content.bytes_written`.
 *
 * @example
 * resolveReferences({ content: '{{step1.content}}' }, [{ ok: true, content: 'hi' }]); // { content: 'hi' }
 */
export function resolveReferences(value: unknown, observations: readonly unknown[]): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return lookup(observations, whole[1]!, whole[2]!, value.trim());
    return value.replace(INNER, (reference, step: string, path: string) => {
      const found = lookup(observations, step, path, reference);
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((item) => resolveReferences(item, observations));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveReferences(item, observations)]),
    );
  }
  return value;
}
