import type { RecoveryClass } from '../executor.ts';
import { type Layer, pass } from '../layer.ts';
import { recordPlanFailure } from '../memory.ts';
import { type Exclusion, proposeValidPlan, templateHash } from '../propose.ts';
import type { TerminationCause } from '../terminator.ts';
import { pendingApproval } from '../turn-context.ts';
import { answerWithPlan, outOfScopeCause } from './proposal-layer.ts';

/** What the alternative must stay away from, by the failed step's recovery class. */
export function recoveryExclusion(recovery: RecoveryClass, tool: string, message: string): Exclusion {
  switch (recovery) {
    case 'wrong_tool':
      return { tools: [tool], reason: `${tool} failed: ${message}` };
    case 'wrong_args':
      return {
        reason: `${tool} was given wrong arguments: ${message}; use canonical arguments and explicit references`,
      };
    default:
      return { reason: `${tool} lacked an input: ${message}; choose another way` };
  }
}

const causeOf = (recovery: RecoveryClass): TerminationCause =>
  recovery === 'missing_input'
    ? 'missing_input'
    : recovery === 'out_of_scope'
      ? 'out_of_scope'
      : 'recovery_failed';

/**
 * Recovery: when the proposed plan failed at a step that is not out of
 * scope, one alternative — excluding the failed plan (and the anti-autopaths)
 * and, for a wrong tool, that tool. No loops: if it fails too, the
 * Terminator has the floor.
 */
export const recoveryLayer: Layer = {
  name: 'recovery',
  async run(turn) {
    const failure = turn.failure;
    if (!failure) return pass('nothing failed to recover from');
    const { outcome } = failure;
    if (outcome.recovery === 'out_of_scope')
      return pass(`${outcome.tool} needs what no alternative can give`);
    const intent = await turn.intent();
    const excluded = [
      ...turn.parts.settings.autopath.antiFor(intent.hash).map((anti) => anti.planHash),
      ...turn.avoid.planHashes,
      failure.planHash,
    ];
    const exclusion = recoveryExclusion(outcome.recovery, outcome.tool, outcome.error.message);
    const proposed = await proposeValidPlan(turn, intent, { ...exclusion, planHashes: excluded });
    if ('termination' in proposed) {
      turn.termination = {
        cause: outcome.recovery === 'missing_input' ? 'missing_input' : 'recovery_failed',
        detail: outcome.error.message,
        tool: outcome.tool,
        plan: failure.plan,
        steps: outcome.steps,
      };
      return pass(`no alternative plan: ${proposed.termination.cause}`);
    }
    const { plan } = proposed;
    const retry = await turn.execute(plan);
    if (retry.ok) return { answer: await answerWithPlan(turn, 'recovery', plan, intent, retry) };
    if (retry.kind === 'pending_approval') return { answer: pendingApproval(turn, 'recovery', plan, retry) };
    const hash = templateHash(plan, turn.request);
    await recordPlanFailure(turn, 'recovery', { intentHash: intent.hash, planHash: hash, plan }, retry);
    turn.termination = {
      cause: retry.recovery === 'out_of_scope' ? outOfScopeCause(retry) : causeOf(retry.recovery),
      detail: `${retry.tool}: ${retry.error.message}`,
      tool: retry.tool,
      plan,
      steps: retry.steps,
    };
    return pass(`the alternative failed at ${retry.tool}: ${retry.error.message}`);
  },
};
