import { z } from 'zod';

/** Rule pack ids: `rules.<name>.v<major>`, the name in lower case with dots or dashes. */
export const RULE_PACK_ID = /^rules\.[a-z0-9]+(?:[.-][a-z0-9]+)*\.v(\d+)$/;

const evidenceId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1 to 64)');
const cites = z.array(evidenceId).max(64).optional();

/**
 * The typed shape of a plain final answer: the message Metnos would send,
 * and optionally the ids of the evidence it rests on.
 */
export const answerCandidateSchema = z
  .object({
    kind: z.literal('answer'),
    message: z.string().max(8000),
    cites,
  })
  .strict();

/** A mail Metnos is about to send, with the message it would show the person. */
export const mailCandidateSchema = z
  .object({
    kind: z.literal('mail'),
    message: z.string().max(8000),
    mail: z
      .object({
        to: z.array(z.string().max(320)).min(1).max(50),
        cc: z.array(z.string().max(320)).max(50).optional(),
        bcc: z.array(z.string().max(320)).max(50).optional(),
        subject: z.string().max(998),
        body: z.string().max(100_000),
      })
      .strict(),
    cites,
  })
  .strict();

export type AnswerCandidate = z.infer<typeof answerCandidateSchema>;
export type MailCandidate = z.infer<typeof mailCandidateSchema>;

/**
 * A candidate of any kind. The built-in kinds are `answer` and `mail`;
 * `createVerifier({ kinds })` adds more, each with its own schema.
 */
export type Candidate = AnswerCandidate | MailCandidate | { kind: string; [field: string]: unknown };

/** The candidate shapes the verifier knows without settings. */
export const BUILT_IN_KINDS: Readonly<Record<string, z.ZodType>> = Object.freeze({
  answer: answerCandidateSchema,
  mail: mailCandidateSchema,
});

const resultMetadata = z.record(z.string(), z.unknown()).optional();

/**
 * One step result the candidate may rest on: the planner's executed step,
 * with the executor's `sideEffects` flag and the vaglio's approval.
 */
export const evidenceSchema = z
  .object({
    /** `step1`, `step2`, … as the plan's placeholders name them. */
    id: evidenceId,
    tool: z.string().min(1).max(128),
    args: z.unknown().optional(),
    /** The executor changes something outside itself (writes, sends, deletes). */
    sideEffects: z.boolean().default(false),
    /** The vaglio's verdict on the call; `false` when it did not let the call run. */
    approved: z.boolean().default(true),
    /**
     * The executor's result. Other fields (the SDK's `isolation` record) are
     * dropped: they describe the machine, not the answer, and would make
     * the same turn hash differently elsewhere.
     */
    result: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true), content: z.unknown().optional(), metadata: resultMetadata }),
      z.object({
        ok: z.literal(false),
        error: z.object({ class: z.string().min(1).max(64), message: z.string().max(8000) }),
        metadata: resultMetadata,
      }),
    ]),
  })
  .strict();

export type Evidence = z.infer<typeof evidenceSchema>;
/** Evidence as a caller writes it: `sideEffects` and `approved` may be left out. */
export type EvidenceInput = z.input<typeof evidenceSchema>;

/**
 * The plan step that asks for verification, for the planner's grammar:
 * `{ kind: 'verify', rulePack: 'rules.answer.v1' }`.
 *
 * @example
 * verifyStepSchema.parse({ id: 'v1', kind: 'verify', rulePack: 'rules.files.v1' });
 */
export const verifyStepSchema = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/)
      .optional(),
    kind: z.literal('verify'),
    rulePack: z.string().regex(RULE_PACK_ID, 'a rule pack id such as rules.answer.v1'),
  })
  .strict();

export type VerifyStep = z.infer<typeof verifyStepSchema>;

/** What `verifier.verify` takes. */
export interface VerifyInput {
  /** The pack to run, as the plan's verify step names it. */
  rulePack: string;
  /** The candidate result: its `kind` selects the schema it must match. */
  candidate: unknown;
  /** The step results the candidate rests on. */
  evidence: readonly EvidenceInput[];
  /** The user's request: words in it count as grounded. */
  request?: string;
  /** The turn's pinned runtime values (actor, lang, channel, now): they count as grounded too. */
  runtime?: Readonly<Record<string, string>>;
}
