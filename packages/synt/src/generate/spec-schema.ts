import {
  declaredProfileSchema,
  HOST_ONLY_ERROR_CLASSES,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  RUNTIME_ERROR_CLASSES,
} from '@metnos/executor-sdk';
import { z } from 'zod';

/** A path inside a birth case's workspace: relative, no `..`, no hidden segment. */
const casePath = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(?!\/)(?!.*(^|\/)\.)[A-Za-z0-9._ /-]+$/, 'a relative path such as "data/expenses.csv"');

/** What a birth case expects: success (and optionally part of the content) or one error class. */
const expectationSchema = z.union([
  z.object({ ok: z.literal(true), content: z.unknown().optional() }).strict(),
  z.object({ ok: z.literal(false), error_class: z.string().regex(/^[A-Z][A-Za-z0-9]*$/) }).strict(),
]);

/**
 * One birth case: the files its workspace holds, the arguments, what must
 * come back. Run through the real sandbox, in a fresh workspace each.
 */
export const birthCaseSchema = z
  .object({
    name: z.string().min(1).max(120),
    args: z.record(z.string(), z.unknown()),
    files: z.record(casePath, z.string().max(64 * 1024)).default({}),
    expect: expectationSchema,
  })
  .strict();
export type BirthCase = z.infer<typeof birthCaseSchema>;

const objectSchema = z.record(z.string(), z.unknown());

/**
 * The specification stage 2 drafts (the wise tier) and the person approves or
 * edits: name, summary, contract, error classes, a profile guess (never exec:
 * the synt does not make executors that run programs) and birth cases.
 */
export const specificationSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{1,47}$/, 'a lowercase identifier such as "csv_sum"'),
    summary: z.string().min(8).max(300),
    affinity: z
      .array(z.string().regex(/^[a-z0-9]{2,32}$/))
      .min(1)
      .max(16),
    input: objectSchema,
    output: objectSchema,
    error_classes: z
      .array(z.string().regex(/^[A-Z][A-Za-z0-9]{1,39}$/))
      .min(1)
      .max(12),
    idempotent: z.boolean().default(true),
    side_effects: z.boolean().default(false),
    profile: z
      .object({
        fs_read: z.array(z.string()).max(8).default([]),
        fs_write: z.array(z.string()).max(8).default([]),
        network: z.array(z.string()).max(8).default([]),
        max_duration_ms: z.number().int().min(100).max(30_000).default(2000),
        max_memory_mb: z.number().int().min(32).max(1024).default(128),
      })
      .strict(),
    birth_tests: z.array(birthCaseSchema).min(1).max(12),
  })
  .strict();
export type Specification = z.infer<typeof specificationSchema>;

/** A refusal of model output or of an edited spec: data, with the reason in words. */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * The JSON object in a model's answer: the whole text, or the one fenced
 * block that holds it. Depth-checked before parsing; never trusted further
 * than `schema` says.
 *
 * @example
 * readModelJson('```json\n{"name":"csv_sum"}\n```', z.object({ name: z.string() })); // { ok: true, value: { name: 'csv_sum' } }
 */
export function readModelJson<T>(text: string, schema: z.ZodType<T>): Checked<T> {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(text);
  const body = (fenced ? fenced[1]! : text).trim();
  if (body.length > 256 * 1024) return { ok: false, reason: 'the answer is larger than 256 KiB' };
  if (jsonTextDepth(body) > MAX_JSON_DEPTH)
    return { ok: false, reason: `the answer nests deeper than ${MAX_JSON_DEPTH} levels` };
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the answer is not one JSON object' };
  }
  const parsed = schema.safeParse(data);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: issueText(parsed.error) };
}

type Json = Record<string, unknown>;

/** Contract rules every generated executor keeps (executors/README.md): closed, described input. */
function contractProblems(spec: Specification): string[] {
  const problems: string[] = [];
  const input = spec.input as Json;
  if (input.type !== 'object') problems.push('input: the type must be "object"');
  if (input.additionalProperties !== false) problems.push('input: additionalProperties must be false');
  const properties = (input.properties ?? {}) as Record<string, Json>;
  if (typeof properties !== 'object' || Object.keys(properties).length === 0)
    problems.push('input: no properties');
  for (const [name, property] of Object.entries(properties)) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) problems.push(`input.${name}: a lowercase field name`);
    if (typeof property?.description !== 'string' || property.description.length < 3)
      problems.push(`input.${name}: every field is described`);
  }
  const required = Array.isArray(input.required) ? (input.required as unknown[]) : [];
  for (const name of required)
    if (typeof name !== 'string' || !Object.hasOwn(properties, name))
      problems.push(`input.required names "${String(name)}", which is not a property`);
  if ((spec.output as Json).type !== 'object') problems.push('output: the type must be "object"');
  return problems;
}

/** Birth cases must use the declared arguments and classes, and at least one must succeed. */
function caseProblems(spec: Specification): string[] {
  const problems: string[] = [];
  const properties = Object.keys(((spec.input as Json).properties ?? {}) as Json);
  const classes = new Set<string>([...spec.error_classes, 'InvalidInput']);
  if (!spec.birth_tests.some((test) => test.expect.ok))
    problems.push('birth_tests: at least one case must succeed');
  for (const test of spec.birth_tests) {
    for (const arg of Object.keys(test.args))
      if (!properties.includes(arg)) problems.push(`birth_tests "${test.name}": unknown argument ${arg}`);
    if (!test.expect.ok && !classes.has(test.expect.error_class))
      problems.push(
        `birth_tests "${test.name}": ${test.expect.error_class} is not one of the declared error classes`,
      );
  }
  return problems;
}

/**
 * Checks a specification beyond its shape: a new name, declarable error
 * classes, a closed and described input, a profile guess the sandbox would
 * accept, birth cases that use the declared contract.
 *
 * @example
 * checkSpecification(spec, { existing: new Set(['fs_read']) }); // { ok: true, value: spec } or { ok: false, reason }
 */
export function checkSpecification(
  spec: Specification,
  options: { existing: ReadonlySet<string> },
): Checked<Specification> {
  const problems: string[] = [];
  if (options.existing.has(spec.name)) problems.push(`name: an executor named ${spec.name} exists already`);
  for (const name of spec.error_classes) {
    if ((HOST_ONLY_ERROR_CLASSES as readonly string[]).includes(name))
      problems.push(`error_classes: ${name} is the host's to emit`);
    if ((RUNTIME_ERROR_CLASSES as readonly string[]).includes(name))
      problems.push(`error_classes: ${name} is a runtime class, not the executor's`);
  }
  problems.push(...contractProblems(spec));
  const profile = declaredProfileSchema.safeParse({
    profile: 'guess',
    max_duration_ms: spec.profile.max_duration_ms,
    max_memory_mb: spec.profile.max_memory_mb,
    max_output_bytes: 1024 * 1024,
    fs: { read: spec.profile.fs_read, write: spec.profile.fs_write },
    network: { mode: spec.profile.network.length > 0 ? 'allowlist' : 'none', domains: spec.profile.network },
  });
  if (!profile.success) problems.push(`profile: ${issueText(profile.error)}`);
  if (spec.profile.network.some((domain) => domain.startsWith('$CREDENTIAL:')))
    problems.push('profile: a synthesised executor is offered no credentials');
  problems.push(...caseProblems(spec));
  return problems.length === 0 ? { ok: true, value: spec } : { ok: false, reason: problems.join('; ') };
}
