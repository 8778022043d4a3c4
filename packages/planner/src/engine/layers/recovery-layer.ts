import { quietly } from '../../passages.ts';
import type { RecoveryClass } from '../executor.ts';
import type { Intent } from '../intent.ts';
import { type Layer, type LayerOutcome, pass } from '../layer.ts';
import { recordPlanFailure } from '../memory.ts';
import { missingToolsOf } from '../passages.ts';
import type { Plan } from '../plan.ts';
import { type Exclusion, proposeValidPlan, templateHash } from '../propose.ts';
import type { TerminationCause } from '../terminator.ts';
import { pendingApproval, type TurnContext } from '../turn-context.ts';
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
 * and, for a wrong tool, that tool. When nothing ran because the plans
 * named a tool that does not exist, reactive compose first (see
 * `composeMissingTool`). No loops: if the alternative fails too, the
 * Terminator has the floor.
 */
export const recoveryLayer: Layer = {
  name: 'recovery',
  async run(turn) {
    const failure = turn.failure;
    if (!failure) return (await composeMissingTool(turn)) ?? pass('nothing failed to recover from');
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
    return runAlternative(turn, intent, proposed.plan);
  },
};

/** Runs the one alternative plan: its answer, its pause for approval, or why it failed too. */
async function runAlternative(turn: TurnContext, intent: Intent, plan: Plan): Promise<LayerOutcome> {
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
}

/**
 * Before giving up on plans that named a tool that does not exist: reactive
 * compose (the settings' `composer`) looks for a chain of existing tools
 * that does what it was wished for. Found, the Proposer is told the chain
 * (the plan is not rewritten behind its back: which arguments go where is
 * its call) and the one alternative runs; not found, the road is closed:
 * the Terminator says no executor can do it (`no_capability`) and the gap
 * log counts it so. No composer, nothing missing, or a composer
 * that fails: undefined, and Recovery passes as before.
 */
async function composeMissingTool(turn: TurnContext): Promise<LayerOutcome | undefined> {
  const composer = turn.parts.settings.composer;
  const [missing] = missingToolsOf(turn);
  if (!composer || !missing || turn.termination?.cause !== 'plan_unreadable') return undefined;
  const report = quietly(() =>
    composer.compose({ from: missing.from, desired: missing.desired, executors: turn.executors }),
  );
  if (!report) return undefined;
  if (report.state !== 'composed' || report.chain.length === 0) {
    // the road is closed: an honest "no executor can do this", and the gap log counts it as such
    turn.termination = {
      cause: 'no_capability',
      detail: `${missing.tool} does not exist, and no chain of the existing executors does it`,
      tool: missing.tool,
    };
    return pass(`${missing.tool} does not exist and no chain of existing tools does it: the road is closed`);
  }
  const intent = await turn.intent();
  const proposed = await proposeValidPlan(turn, intent, {
    tools: [missing.tool],
    planHashes: [
      ...turn.parts.settings.autopath.antiFor(intent.hash).map((anti) => anti.planHash),
      ...turn.avoid.planHashes,
    ],
    reason: `${missing.tool} does not exist; the existing tools ${report.chain.join(' → ')} do the same in a chain: use them in its place, starting with ${report.first_hop}`,
  });
  if ('termination' in proposed) {
    turn.termination = proposed.termination;
    return pass(`no plan with the chain ${report.chain.join(' → ')}: ${proposed.termination.cause}`);
  }
  return runAlternative(turn, intent, proposed.plan);
}
