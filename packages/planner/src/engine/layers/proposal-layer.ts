import type { ExecutionOutcome } from '../executor.ts';
import type { Intent } from '../intent.ts';
import { type Layer, pass } from '../layer.ts';
import { learnPlan, observeTurn, recordPlanFailure } from '../memory.ts';
import type { Plan } from '../plan.ts';
import { proposeValidPlan, templateHash } from '../propose.ts';
import type { TerminationCause } from '../terminator.ts';
import { finishTurn, pendingApproval, type TurnContext } from '../turn-context.ts';
import type { EngineResult } from '../types.ts';

/** A proposed plan that ran: remembered, observed, answered. */
export async function answerWithPlan(
  turn: TurnContext,
  layer: 'engine' | 'recovery',
  plan: Plan,
  intent: Intent,
  outcome: Extract<ExecutionOutcome, { ok: true }>,
): Promise<EngineResult> {
  const hash = await learnPlan(turn, plan, intent);
  await observeTurn(turn, { layer, outcome: 'success', intentHash: intent.hash, planHash: hash, plan });
  return finishTurn(turn, {
    layer,
    finalKind: 'answer',
    finalMessage: outcome.finalMessage,
    plan,
    steps: outcome.steps,
    intent,
    ...(outcome.advisories.length > 0 ? { advisories: outcome.advisories } : {}),
  });
}

/** The cause an out-of-scope step failure ends the turn with. */
export function outOfScopeCause(outcome: Extract<ExecutionOutcome, { ok: false }>): TerminationCause {
  if (outcome.aborted) return 'aborted';
  switch (outcome.error.class) {
    case 'Blocked':
      return 'blocked';
    case 'BudgetExhausted':
      return 'budget_exhausted';
    case 'VerificationBlocked':
      return 'verification_blocked';
    default:
      return 'out_of_scope';
  }
}

/**
 * L3 with L2: the Proposer's one-shot plan (plans in force as
 * anti-autopaths for the intent, and those the turn must avoid, excluded),
 * checked by the Validator, run by the deterministic Executor. A plan that
 * ran is learned; one that failed is counted towards its anti-autopath and
 * left on the turn for Recovery.
 */
export const proposalLayer: Layer = {
  name: 'proposal',
  async run(turn) {
    if (turn.executors.length === 0) {
      turn.termination = { cause: 'empty_catalog', detail: 'the catalog is empty' };
      return pass('the catalog is empty');
    }
    const intent = await turn.intent();
    const excluded = [
      ...turn.parts.settings.autopath.antiFor(intent.hash).map((anti) => anti.planHash),
      ...turn.avoid.planHashes,
    ];
    const proposed = await proposeValidPlan(turn, intent, { planHashes: excluded });
    if ('termination' in proposed) {
      turn.termination = proposed.termination;
      return pass(`no plan to run: ${proposed.termination.cause}`);
    }
    const { plan } = proposed;
    const outcome = await turn.execute(plan);
    if (outcome.ok) return { answer: await answerWithPlan(turn, 'engine', plan, intent, outcome) };
    if (outcome.kind === 'pending_approval')
      return { answer: pendingApproval(turn, 'engine', plan, outcome) };
    const hash = templateHash(plan, turn.request);
    await recordPlanFailure(turn, 'engine', { intentHash: intent.hash, planHash: hash, plan }, outcome);
    turn.failure = { plan, planHash: hash, outcome };
    if (outcome.recovery === 'out_of_scope')
      turn.termination = {
        cause: outOfScopeCause(outcome),
        detail: `${outcome.tool}: ${outcome.error.message}`,
        tool: outcome.tool,
        plan,
        steps: outcome.steps,
      };
    return pass(`the plan failed at ${outcome.tool} (${outcome.recovery}): ${outcome.error.message}`);
  },
};
