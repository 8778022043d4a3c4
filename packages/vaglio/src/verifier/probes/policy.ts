import { candidateTexts, citesOf } from '../candidate-text.ts';
import { describeFailure, isRefused } from '../evidence.ts';
import { listSome } from '../reasons.ts';
import { mentionsFailure } from '../text-patterns.ts';
import type { Rule, RuleResult } from '../types.ts';

/**
 * Out-of-policy verdicts: a candidate that rests on, or stays silent about, a
 * step policy refused. Blocks when a step the vaglio did not approve carries
 * a result anyway, when the candidate cites a refused step, or when a step
 * was refused (not approved, or failed with a policy class such as
 * `PolicyViolation` or `Forbidden`) and the candidate does not say so.
 */
export const policyProbe: Rule = {
  id: 'probe.policy',
  description: 'the candidate neither rests on nor hides a step policy refused',
  check({ candidate, evidence }): RuleResult {
    const problems: string[] = [];
    const ranAnyway = evidence.filter((item) => !item.approved && item.result.ok).map((item) => item.id);
    if (ranAnyway.length > 0)
      problems.push(
        `${listSome(ranAnyway)} ${ranAnyway.length === 1 ? 'carries' : 'carry'} a result although the vaglio did not approve the call`,
      );
    const refused = evidence.filter(isRefused);
    const refusedIds = new Set(refused.map((item) => item.id));
    const cited = citesOf(candidate).filter((cite) => refusedIds.has(cite));
    if (cited.length > 0) problems.push(`the candidate cites ${listSome(cited)}, which policy refused`);
    if (refused.length > 0 && !candidateTexts(candidate).some(mentionsFailure))
      problems.push(
        `${listSome(refused.map(describeFailure))} ${refused.length === 1 ? 'was' : 'were'} refused and the candidate does not say so`,
      );
    return problems.length > 0 ? { outcome: 'block', reason: problems.join('; ') } : { outcome: 'pass' };
  },
};
