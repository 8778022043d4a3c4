/**
 * The planner's view of the vaglio: it reviews each call (local mode) or the
 * whole plan (online mode) before anything runs. `@metnos/vaglio` implements it.
 */
export interface ReviewedCall {
  executor: {
    name: string;
    version: string;
    capabilities: string[];
    sideEffects: boolean;
    idempotent: boolean;
  };
  args: unknown;
  request: string;
  stepIndex: number;
  turnId: string;
}

export interface ReviewVerdict {
  approved: boolean;
  reason: string;
  score: number;
  blocked_by: 'guard' | 'judge' | 'confirmation' | null;
  judge_kind?: string;
  ts?: string;
  pending?: { id: string; callHash: string; expiresAt: string };
}

export interface ReviewContext {
  home: string;
  workspace: string;
}

export interface CallReviewer {
  evaluate(call: ReviewedCall, context: ReviewContext): ReviewVerdict | Promise<ReviewVerdict>;
}

/** Checks that a pending approval was granted for exactly this call. */
export interface ApprovalChecker {
  check(
    id: string,
    call: ReviewedCall,
  ): { ok: true } | { ok: false; reason: string } | Promise<{ ok: true } | { ok: false; reason: string }>;
}
