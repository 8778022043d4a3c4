import { createHash } from 'node:crypto';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { validRange } from 'semver';
import { z } from 'zod';

/** Step arguments of any depth are read only after this check; every later walk is recursive. */
export const stepArgsSchema = z
  .record(z.string(), z.unknown())
  .refine((args) => !exceedsJsonDepth(args), `arguments nest deeper than ${MAX_JSON_DEPTH} levels`);

const stepId = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ or - (1 to 32)');
const depends = z
  .array(z.union([z.string(), z.number().int().positive()]))
  .max(32)
  .optional();

/** A run-memory key a step's output is kept under, e.g. `evidence.s1` (one to four dotted parts). */
export const MEMORY_KEY = /^[A-Za-z][A-Za-z0-9_]{0,31}(?:\.[A-Za-z0-9_]{1,32}){0,3}$/;

/** `<step id>.exception.<ErrorClass>` or `<step id>.exception.*`: what `policy.abortOn` and `branch.on` match. */
export const EXCEPTION_PATTERN = /^([A-Za-z0-9_-]{1,32})\.exception\.([A-Za-z][A-Za-z0-9_]{0,63}|\*)$/;

/** Rule pack ids as `@metnos/vaglio` names them: `rules.<name>.v<major>`. */
const RULE_PACK = /^rules\.[a-z0-9]+(?:[.-][a-z0-9]+)*\.v\d+$/;

/**
 * A semver range over the executor's manifest version: `">=2.0.0 <3"`,
 * `"^1.2"`, `"~0.4.1"`; commas also separate comparators (`">=2.0.0,<3"`).
 */
export const versionRangeSchema = z
  .string()
  .min(1)
  .max(64)
  .refine((range) => validRange(normalizeRange(range)) !== null, 'not a semver range such as ">=1.0.0 <2"');

/** Commas between comparators become the spaces semver reads as "and". */
export function normalizeRange(range: string): string {
  return range.replace(/\s*,\s*/g, ' ').trim();
}

/** A call to one executor: the common step. `kind` may be left out. */
export const toolStepSchema = z
  .object({
    id: stepId.optional(),
    kind: z.literal('tool').optional(),
    tool: z.string().min(1).max(128),
    /** Which versions of the executor the plan was made for. */
    version: versionRangeSchema.optional(),
    args: stepArgsSchema.default({}),
    /** The run-memory key the step's output is kept under, for `$ref`. */
    produces: z.string().regex(MEMORY_KEY, 'a key such as evidence.s1').optional(),
    depends,
  })
  .strict();

/**
 * Asks the verifier to rule the plan's candidate (the decision's draft, or
 * the final message) with a rule pack. Verify steps run after every other
 * step, whatever their place: they judge what the plan would emit.
 */
export const verifyStepSchema = z
  .object({
    id: stepId.optional(),
    kind: z.literal('verify'),
    rulePack: z.string().regex(RULE_PACK, 'a rule pack id such as rules.answer.v1'),
    depends,
  })
  .strict();

/**
 * The plan's candidate result: `draft` is a template (`${stepN…}`,
 * `$ref:key`) or a typed candidate object (`{ "kind": "mail", … }`);
 * `evidence` names the run-memory keys or step ids it rests on.
 */
export const decisionStepSchema = z
  .object({
    id: stepId.optional(),
    kind: z.literal('decision'),
    draft: z.union([z.string().min(1).max(8000), stepArgsSchema]),
    evidence: z.array(z.string().min(1).max(64)).max(32).optional(),
    depends,
  })
  .strict();

/** `when` a step fails with a class, skip what depends on it and run `goto` (a step only a branch starts). */
export const branchSchema = z
  .object({
    on: z.string().regex(EXCEPTION_PATTERN, 'a step exception such as s1.exception.NotFound'),
    goto: stepId,
    /** The final message when this branch was taken (default: the plan's). */
    final_message: z.string().max(8000).optional(),
  })
  .strict();

export const planPolicySchema = z
  .object({
    /** Step exceptions that end the plan at once: no Recovery, straight to the Terminator. */
    abortOn: z
      .array(z.string().regex(EXCEPTION_PATTERN, 'a step exception such as s1.exception.NotFound'))
      .max(32)
      .default([]),
    branch: z.array(branchSchema).max(8).default([]),
  })
  .strict();

/**
 * The plan grammar the Proposer must produce and the Executor runs. Steps are
 * numbered from 1 in the order written; references use those numbers:
 * - `"from_step": N` as an argument: the entries step N produced,
 * - `${stepN.field}` with nested paths, `[*]` projections and `.length`,
 * - `$ref:key.field` (a whole argument, type kept): a value from run memory
 *   (`produces` keys, `input`, `runtime.now`, `pinned/<subject>/<property>`),
 * - `${FILLER:name}`: a small answer from the filler's tier (cached) or the filler's default,
 * - `${RUNTIME:key}`: actor, lang, channel, now (pinned at turn start).
 * Steps are tools (`kind` may be left out), `verify` or `decision`.
 */
export const planStepSchema = z.union([toolStepSchema, verifyStepSchema, decisionStepSchema]);

export const fillerSchema = z
  .object({
    prompt: z.string().min(1).max(2000),
    default: z.string().max(2000).optional(),
    tier: z.enum(['fast', 'middle', 'wise']).default('fast'),
  })
  .strict();

export const planSchema = z
  .object({
    version: z.literal('1').default('1'),
    steps: z.array(planStepSchema).max(16),
    fillers: z.record(z.string().regex(/^[A-Za-z0-9_]{1,64}$/), fillerSchema).default({}),
    final_message: z.string().max(8000).default(''),
    policy: planPolicySchema.optional(),
    /** Set by the Proposer instead of steps when no tool can serve the request. */
    out_of_scope: z.string().max(500).optional(),
  })
  .strict()
  .refine((plan) => plan.steps.some(isToolStep) || plan.out_of_scope !== undefined, {
    message: 'a plan needs at least one tool step, or "out_of_scope" with the reason',
    path: ['steps'],
  });

export type PlanStep = z.infer<typeof planStepSchema>;
export type ToolStep = z.infer<typeof toolStepSchema>;
export type VerifyStep = z.infer<typeof verifyStepSchema>;
export type DecisionStep = z.infer<typeof decisionStepSchema>;
export type PlanPolicy = z.infer<typeof planPolicySchema>;

/** A step that calls an executor (`kind` absent or `tool`). */
export function isToolStep(step: PlanStep): step is ToolStep {
  return step.kind === undefined || step.kind === 'tool';
}

/** The id a step is named by in `depends`, `policy` and `evidence`: its `id`, else `s<number>`. */
export function stepIdOf(step: PlanStep, number: number): string {
  return step.id ?? `s${number}`;
}

/** Step numbers by id (explicit ids and the implicit `s<number>`). */
export function stepNumbers(plan: Plan): Map<string, number> {
  const ids = new Map<string, number>();
  plan.steps.forEach((step, index) => {
    ids.set(`s${index + 1}`, index + 1);
  });
  plan.steps.forEach((step, index) => {
    if (step.id !== undefined) ids.set(step.id, index + 1);
  });
  return ids;
}
export type Plan = z.infer<typeof planSchema>;

/** A plan that failed to parse, with what was wrong. */
export type PlanParseResult = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/**
 * Reads a plan out of model text (bare JSON or a fenced block) and validates
 * it with the grammar. Never throws; garbage gives `{ ok: false }`.
 *
 * @example
 * const parsed = parsePlan('{"steps":[{"tool":"time_now","args":{}}],"final_message":"It is ${step1.content.iso}"}');
 */
export function parsePlan(text: string): PlanParseResult {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const start = text.indexOf('{');
  const body = fenced ? fenced[1]! : start === -1 ? '' : text.slice(start, text.lastIndexOf('}') + 1);
  if (!body.trim()) return { ok: false, errors: ['the answer holds no JSON object'] };
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (error) {
    return { ok: false, errors: [`the JSON does not parse: ${(error as Error).message}`] };
  }
  return validatePlanShape(data);
}

/** Validates an already-parsed value against the grammar. */
export function validatePlanShape(data: unknown): PlanParseResult {
  const parsed = planSchema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues
        .slice(0, 8)
        .map((issue) => `${issue.path.join('.') || '(plan)'}: ${issue.message}`),
    };
  }
  return { ok: true, plan: parsed.data };
}

/** Canonical JSON: object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A stable identity for a plan (or plan template). */
export function planHash(plan: unknown): string {
  return createHash('sha256').update(canonicalJson(plan)).digest('hex').slice(0, 32);
}

/** The tools a plan uses, in order, without repeats. */
export function planTools(plan: Plan): string[] {
  return [...new Set(plan.steps.filter(isToolStep).map((step) => step.tool))];
}
