import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';

/** What a field carries, as far as chaining cares. */
export type FieldKind = 'text' | 'entries' | 'other';

/** One top-level field of an executor's input or output. */
export interface Field {
  name: string;
  kind: FieldKind;
}

/** An executor's contract as the composer reads it: the fields it needs and the fields it gives. */
export interface Contract {
  /** Required input fields. */
  needs: Field[];
  /** Every input field, required or not. */
  takes: Field[];
  /** Output fields; a whole-string output is one `content` text field, a whole-array one `entries`. */
  gives: Field[];
}

const TEXT_NAMES = new Set(['content', 'text', 'body', 'markdown', 'html', 'csv', 'json']);

type Schema = Record<string, unknown>;

function kindOf(name: string, schema: Schema | undefined): FieldKind {
  const type = schema?.type;
  if (type === 'array') return 'entries';
  if (type === 'string' && (schema?.format === 'text' || TEXT_NAMES.has(name))) return 'text';
  if (type === undefined && TEXT_NAMES.has(name)) return 'text';
  return 'other';
}

function fieldsOf(schema: Schema | undefined): Field[] {
  const properties = schema?.properties;
  if (properties === null || typeof properties !== 'object') return [];
  return Object.entries(properties as Record<string, Schema>).map(([name, property]) => ({
    name,
    kind: kindOf(name, property),
  }));
}

/**
 * The fields of an executor's contract, from its signed `schema.json`. A
 * `$ref` property, or a schema without properties, gives no fields; the
 * composer then does not connect through it (conservative: it never guesses).
 *
 * @example
 * contractOf(catalog.get('fs_read')!).gives; // [{ name: 'path', kind: 'other' }, { name: 'content', kind: 'text' }, …]
 */
export function contractOf(executor: VerifiedExecutor): Contract {
  const input = contractSchema(executor, 'input');
  const output = contractSchema(executor, 'output');
  const takes = fieldsOf(input);
  const required = new Set(Array.isArray(input?.required) ? (input.required as string[]) : []);
  const gives =
    output?.type === 'string'
      ? [{ name: 'content', kind: 'text' as const }]
      : output?.type === 'array'
        ? [{ name: 'entries', kind: 'entries' as const }]
        : fieldsOf(output);
  return { needs: takes.filter((field) => required.has(field.name)), takes, gives };
}

/**
 * Whether `given` (fields in hand) can fill `field`: the same name, text into
 * a text field, or a list into an `entries` field (the engine's `from_step`).
 */
export function fills(given: Field, field: Field): boolean {
  if (given.name === field.name) return true;
  if (field.kind === 'text' && given.kind === 'text') return true;
  return field.name === 'entries' && given.kind === 'entries';
}
