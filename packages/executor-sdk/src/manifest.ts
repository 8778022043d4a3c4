import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { readPlainToml } from '../runtime/plain-toml.mjs';
import { ManifestError } from './errors.ts';
import { manifestShape } from './manifest-shape.ts';
import { declaredProfileSchema } from './profile.ts';
import { HOST_ONLY_ERROR_CLASSES } from './result.ts';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-.]+)?(?:\+[0-9A-Za-z-.]+)?$/;
const NAME = /^[a-z][a-z0-9_]{1,63}$/;

const timestamp = z.preprocess(
  (value) => (value instanceof Date ? value.toISOString() : value),
  z.iso.datetime({ offset: true, message: 'an RFC 3339 timestamp such as 2026-04-25T08:12:00Z' }),
);

const schemaRef = z.string().regex(/^schema\.json#\/(definitions|\$defs)\/[A-Za-z0-9_]+$/, {
  message: 'a reference such as "schema.json#/definitions/Input"',
});

/** The zod schema of `manifest.toml`. Unknown keys are refused so typos surface. */
export const manifestSchema = z
  .object({
    executor: z
      .object({
        name: z.string().regex(NAME, { message: 'a lowercase identifier such as "fs_read" (a-z, 0-9, _)' }),
        version: z.string().regex(SEMVER, { message: 'a semantic version such as "1.0.0"' }),
        created_at: timestamp,
        created_by: z.string().regex(/^(seed|user|synt:[A-Za-z0-9_-]+)$/, {
          message: '"seed", "user" or "synt:<run_id>"',
        }),
        summary: z.string().min(1, { message: 'a one-line summary' }).max(500),
        affinity: z.array(z.string().min(1)).default([]),
        capabilities: z
          .array(z.string().regex(/^[a-z]+:[a-z_]+$/, { message: 'a capability such as "fs:read"' }))
          .default([]),
        entry: z
          .string()
          .regex(/^[A-Za-z0-9_-]+\.(ts|mjs|js)$/, { message: 'a code file name such as "main.ts"' })
          .default('main.ts'),
      })
      .strict(),
    contract: z
      .object({
        input_schema: schemaRef,
        output_schema: schemaRef,
        error_classes: z.array(
          z
            .string()
            .regex(/^[A-Z][A-Za-z0-9]*$/, { message: 'PascalCase error class names' })
            .refine((name) => !(HOST_ONLY_ERROR_CLASSES as readonly string[]).includes(name), {
              message: `error classes the host alone emits (${HOST_ONLY_ERROR_CLASSES.join(', ')}) cannot be declared`,
            }),
        ),
        idempotent: z.boolean(),
        side_effects: z.boolean(),
      })
      .strict(),
    sandbox: declaredProfileSchema.extend({
      hash: z
        .string()
        .regex(/^blake3:[0-9a-f]{64}$/, {
          message: 'a profile hash "blake3:<64 hex>" (written by `metnos executor sign`)',
        })
        .optional(),
    }),
    audit: z.object({ trace_topic: z.string().min(1) }).strict(),
  })
  .strict();

export type Manifest = z.infer<typeof manifestSchema>;

/** Compares two semantic versions (pre-release tags sort before the release). */
export function compareVersions(left: string, right: string): number {
  // the usual answer when a catalog sorts its versions, without splitting either
  if (left === right) return 0;
  const split = (version: string) => {
    const [core = '', pre] = version.split('+')[0]!.split(/-(.*)/s);
    return { parts: core.split('.').map(Number), pre };
  };
  const a = split(left);
  const b = split(right);
  for (let index = 0; index < 3; index++) {
    const difference = (a.parts[index] ?? 0) - (b.parts[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  if (a.pre === b.pre) return 0;
  if (a.pre === undefined) return 1;
  if (b.pre === undefined) return -1;
  // Pre-release identifiers, left to right: numbers compare as numbers and sort
  // before words; a shorter list that is a prefix of the longer sorts first.
  const leftIds = a.pre.split('.');
  const rightIds = b.pre.split('.');
  for (let index = 0; index < Math.max(leftIds.length, rightIds.length); index++) {
    const x = leftIds[index];
    const y = rightIds[index];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xNumeric = /^\d+$/.test(x);
    const yNumeric = /^\d+$/.test(y);
    if (xNumeric && yNumeric) return Math.sign(Number(x) - Number(y));
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function describeExpected(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `no unknown keys (found ${issue.keys.join(', ')})`;
  if (issue.code === 'invalid_value')
    return `one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
  if (issue.code === 'invalid_type') {
    return issue.message.startsWith('Invalid input') ? `a value of type ${issue.expected}` : issue.message;
  }
  return issue.message;
}

/**
 * Parses and validates the text of a `manifest.toml`. Throws a
 * {@link ManifestError} naming the file, the field and what is expected.
 *
 * @example
 * const manifest = parseManifest(await readFile(path, 'utf8'), path);
 * manifest.executor.name; // 'fs_read'
 */
export function parseManifest(text: string, file: string): Manifest {
  // Metnos's own plain layout without a general parser's garbage; smol-toml reads the rest
  let data: unknown = readPlainToml(text);
  try {
    data ??= parseToml(text);
  } catch (error) {
    const line = (error as { line?: number }).line;
    throw new ManifestError({
      file,
      field: line === undefined ? '(syntax)' : `(syntax, line ${line})`,
      expected: `valid TOML (${(error as Error).message.split('\n')[0]})`,
      cause: error,
    });
  }
  // the common case, a valid manifest, without the schema's warm-up; the schema decides the rest
  const checked = manifestShape(data);
  if (checked) return checked;
  const result = manifestSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new ManifestError({ file, field, expected: describeExpected(issue), cause: result.error });
  }
  return result.data;
}
