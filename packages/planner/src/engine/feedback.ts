import { fingerprint } from './slots.ts';
import type { EngineResult, EngineSettings, TurnOptions } from './types.ts';

/** What the user said about a turn: right, wrong, or "try again without that plan". */
export type FeedbackKind = 'up' | 'down' | 'retry';

/** What feedback did to memory, and for `retry` the new turn. */
export interface FeedbackOutcome {
  turnId: string;
  kind: FeedbackKind;
  /** False when memory has no turn with this id. */
  recorded: boolean;
  /** The request of the turn, as memory kept it. */
  request?: string;
  /** L0 shortcuts dropped (down, retry). */
  droppedShortcuts: string[];
  /** True when the plan is now an anti-autopath for the intent: never replayed, never accepted again. */
  anti: boolean;
  /** The re-run of the request (retry): through L3, without memory, excluding the plan. */
  retry?: EngineResult;
}

/**
 * The one path feedback takes, whoever gives it (the CLI, an HTTP API):
 *
 * - `up`: the plan counts for the intent and is promoted to its cluster's
 *   champion when its qualifier group has none;
 * - `down`: the L0 shortcuts that replay the plan for the intent are
 *   dropped, the L1 autopath loses its championship, and the failure counts
 *   towards an anti-autopath — the second down on the same plan for the same
 *   intent makes one, which is never replayed and never accepted from the
 *   Proposer again (until it expires);
 * - `retry`: as `down`, then the request runs again through L3, skipping
 *   memory and excluding the plan.
 *
 * @example
 * const outcome = await applyFeedback(settings, turnId, 'down', engine.runTurn);
 * if (!outcome.recorded) console.error('no such turn');
 */
export async function applyFeedback(
  settings: EngineSettings,
  turnId: string,
  kind: FeedbackKind,
  rerun: (request: string, options: TurnOptions) => Promise<EngineResult>,
): Promise<FeedbackOutcome> {
  const { autopath, fastpath } = settings;
  const original = autopath.observations(turnId).findLast((row) => row.feedback === null);
  const outcome: FeedbackOutcome = { turnId, kind, recorded: false, droppedShortcuts: [], anti: false };
  if (!original || !autopath.feedback(turnId, kind)) return outcome;
  outcome.recorded = true;
  outcome.request = original.request;
  const { intentHash, planHash } = original;
  if (kind !== 'up' && intentHash && planHash) {
    outcome.droppedShortcuts = fastpath.removePlan(intentHash, planHash);
    const own = fastpath.byFingerprint(fingerprint(original.request));
    if (own && own.planHash === undefined && fastpath.remove(own.id)) outcome.droppedShortcuts.push(own.id);
  }
  outcome.anti = intentHash !== null && planHash !== null && autopath.isAnti(intentHash, planHash);
  if (kind === 'retry')
    outcome.retry = await rerun(original.request, {
      avoid: { memory: true, planHashes: planHash ? [planHash] : [] },
    });
  return outcome;
}
