import { createHash } from 'node:crypto';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { z } from 'zod';

/** Step arguments of any depth are read only after this check; every later walk is recursive. */
export const stepArgsSchema = z
  .record(z.string(), z.unknown())
  .refine((args) => !exceedsJsonDepth(args), `arguments nest deeper than ${MAX_JSON_DEPTH} levels`);

/**
 * The plan grammar the Proposer must produce and the Executor runs. Steps are
 * numbered from 1 in the order written; references use those numbers:
 * - `"from_step": N` as an argument: the entries step N produced,
 * - `${stepN.field}` with nested paths, `[*]` projections and `.length`,
 * - `${FILLER:name}`: a small fast-tier answer (cached) or the filler's default,
 * - `${RUNTIME:key}`: actor, lang, channel, now (pinned at turn start).
 */
export const planStepSchema = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/)
      .optional(),
    tool: z.string().min(1).max(128),
    args: stepArgsSchema.default({}),
    depends: z
      .array(z.union([z.string(), z.number().int().positive()]))
      .max(32)
      .optional(),
  })
  .strict();

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
    steps: z.array(planStepSchema).max(12),
    fillers: z.record(z.string().regex(/^[A-Za-z0-9_]{1,64}$/), fillerSchema).default({}),
    final_message: z.string().max(8000).default(''),
    /** Set by the Proposer instead of steps when no tool can serve the request. */
    out_of_scope: z.string().max(500).optional(),
  })
  .strict()
  .refine((plan) => plan.steps.length > 0 || plan.out_of_scope !== undefined, {
    message: 'a plan needs at least one step, or "out_of_scope" with the reason',
    path: ['steps'],
  });

export type PlanStep = z.infer<typeof planStepSchema>;
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
  return [...new Set(plan.steps.map((step) => step.tool))];
}
