import type { ExecutorContract, JudgeKind } from './types.ts';

/**
 * What a judge sees: the user's request, the executor's contract and the
 * arguments. Nothing of the proposer's conversation, so the judge cannot
 * confirm the proposer's own reasoning back to it.
 */
export interface JudgeInput {
  request: string;
  executor: ExecutorContract;
  args: unknown;
  /**
   * Where the call runs, for judges that weigh paths (the rules judge).
   * The LLM judge does not put it in its prompt.
   */
  place?: { home: string; workspace: string };
}

/** Why a judge could not score a call. The vaglio fails closed on every one. */
export type JudgeFailure = 'unreadable' | 'model_error' | 'timeout';

/** A judge's answer: a score in [0, 1] with its reason, or a typed failure. */
export type Judgement =
  | { ok: true; score: number; reason: string }
  | { ok: false; failure: JudgeFailure; reason: string };

/**
 * The teleological half of the vaglio: how well a call serves what the person
 * asked, as a score in [0, 1]. Implementations never throw for a bad call or
 * a bad model answer; they return `{ ok: false }`.
 *
 * @example
 * const judge: Judge = { kind: 'rules', judge: () => ({ ok: true, score: 0.8, reason: 'fine' }) };
 */
export interface Judge {
  readonly kind: JudgeKind;
  judge(input: JudgeInput): Judgement | Promise<Judgement>;
}
