import type { VerifiedExecutor } from '@metnos/executor-sdk';

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

/**
 * What the vaglio needs to know about an executor, read from its manifest.
 *
 * @example
 * reviewer.evaluate({ executor: executorContract(catalog.get('fs_write')!), args, request, stepIndex: 1, turnId }, context);
 */
export function executorContract(executor: VerifiedExecutor): ReviewedCall['executor'] {
  return {
    name: executor.name,
    version: executor.version,
    capabilities: executor.manifest.executor.capabilities,
    sideEffects: executor.manifest.contract.side_effects,
    idempotent: executor.manifest.contract.idempotent,
  };
}
