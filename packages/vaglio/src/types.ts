/**
 * The executor contract the vaglio sees: identity plus the flags that decide
 * how careful it must be. The planner fills it from the executor's manifest.
 */
export interface ExecutorContract {
  name: string;
  version: string;
  /** Manifest capabilities, e.g. `fs:read`, `net:http`, `code:exec`. */
  capabilities: string[];
  /** The call changes something outside the executor (writes, sends, deletes). */
  sideEffects: boolean;
  /** Running the call twice has the same effect as running it once. */
  idempotent: boolean;
}

/**
 * One call the planner proposes: which executor, with which arguments, for
 * which request. `request` is the user's own words, nothing else.
 */
export interface ProposedCall {
  executor: ExecutorContract;
  args: unknown;
  request: string;
  /** 1-based step number inside the turn. */
  stepIndex?: number;
  turnId?: string;
}

/** How much the person lets Metnos do without asking. Never relaxes the guard. */
export type Autonomy = 'ask' | 'normal' | 'full';

/** Where the call will run: the user's home and the Metnos workspace, as absolute paths. */
export interface EvaluationContext {
  home: string;
  workspace: string;
  /**
   * Host paths that decide what Metnos trusts and loads (its `metnos.toml`,
   * trusted key files, executors folder). A side-effecting call that names
   * one, or a folder holding one, is refused by the guard.
   */
  protect?: readonly string[];
  /** Default `normal`. */
  autonomy?: Autonomy;
}

/** Which part of the vaglio stopped a call; `null` when it was approved. */
export type BlockedBy = 'guard' | 'judge' | 'confirmation' | null;

/** Which kind of judge scored the call. */
export type JudgeKind = 'rules' | 'llm';

/** A paused call waiting for the person's explicit approval. */
export interface PendingApproval {
  id: string;
  /** SHA-256 (hex) of the canonical call; see {@link callHash}. */
  callHash: string;
  /** ISO 8601; after it the approval can no longer be given or used. */
  expiresAt: string;
}

/**
 * The vaglio's decision on one call. A verdict is data: a blocked call is an
 * expected outcome, never an exception. Reasons never quote argument values.
 */
export interface Verdict {
  approved: boolean;
  reason: string;
  /** The judge's score in [0, 1]; 0 when the guard stopped the call or the judge failed. */
  score: number;
  blocked_by: BlockedBy;
  judge_kind: JudgeKind;
  /** ISO 8601, from the vaglio's clock. */
  ts: string;
  /** Present when `blocked_by` is `confirmation` and a pending approval was opened. */
  pending?: PendingApproval;
}
