import { rankExecutors } from '../prefilter.ts';
import type { Intent } from './intent.ts';
import { noteMissingTools } from './passages.ts';
import { type Plan, planHash } from './plan.ts';
import { createProposer, type ProposeResult } from './proposer.ts';
import { templatize } from './slots.ts';
import type { Termination, TurnContext } from './turn-context.ts';
import { validatePlan } from './validator.ts';

/** What a proposal must stay away from. */
export interface Exclusion {
  tools?: string[];
  planHashes?: string[];
  reason?: string;
}

/** The hash a plan is remembered and excluded by: its template's, so it does not depend on slot values. */
export function templateHash(plan: Plan, request: string): string {
  return planHash(templatize(plan, request).template);
}

/**
 * L3 Proposer and L2 Validator together: one proposal for the whole plan,
 * checked without running anything (tools exist, arguments fit, references
 * point at earlier steps, and the plan is not one excluded); on errors one
 * re-proposal with the errors in the prompt. Returns the plan, or why the
 * turn has to end.
 */
export async function proposeValidPlan(
  turn: TurnContext,
  intent: Intent,
  exclude: Exclusion,
): Promise<{ plan: Plan } | { termination: Termination }> {
  const candidates = rankExecutors(turn.request, turn.executors, turn.parts.settings.prefilter).executors;
  const proposer = createProposer({ model: turn.models.wise });
  const ask = (retry?: { errors: string[]; previous: Plan }) =>
    proposer.propose({ request: turn.request, candidates, intent, exclude, signal: turn.signal, ...retry });
  let proposal: ProposeResult = await ask();
  for (let attempt = 0; ; attempt++) {
    if (!proposal.ok) {
      const spent = turn.budget.exhausted();
      if (spent) return { termination: { cause: 'budget_exhausted', detail: spent.message } };
      const cause = proposal.cause === 'model' ? 'model_unreachable' : 'plan_unreadable';
      return { termination: { cause, detail: proposal.reason } };
    }
    const plan = proposal.plan;
    if (plan.out_of_scope !== undefined && plan.steps.length === 0)
      return { termination: { cause: 'out_of_scope', detail: plan.out_of_scope } };
    const errors = validatePlan(plan, turn.executors);
    noteMissingTools(turn, plan);
    if ((exclude.planHashes ?? []).includes(templateHash(plan, turn.request)))
      errors.push('this plan already failed for this request; propose a different one');
    if (errors.length === 0) return { plan };
    if (attempt >= 1)
      return { termination: { cause: 'plan_unreadable', detail: errors.slice(0, 3).join('; ') } };
    proposal = await ask({ errors, previous: plan });
  }
}
