import { messageOf } from '../candidate-text.ts';
import { describeFailure, unrecoveredFailures } from '../evidence.ts';
import { listSome, quote } from '../reasons.ts';
import { defineRulePack } from '../rule-pack.ts';
import { actionClaimsIn, mentionsFailure, placeholdersIn } from '../text-patterns.ts';
import type { Rule } from '../types.ts';

const nonEmpty: Rule = {
  id: 'answer.non-empty',
  description: 'the final message says something',
  check: ({ candidate }) =>
    messageOf(candidate).trim()
      ? { outcome: 'pass' }
      : { outcome: 'block', reason: 'the final message is empty' },
};

const noPlaceholders: Rule = {
  id: 'answer.no-placeholders',
  description: 'the final message holds no unresolved ${…} placeholder',
  check: ({ candidate }) => {
    const found = placeholdersIn(messageOf(candidate));
    return found.length === 0
      ? { outcome: 'pass' }
      : { outcome: 'block', reason: `unresolved placeholders: ${listSome(found.map(quote))}` };
  },
};

const claimedAction: Rule = {
  id: 'answer.claimed-action',
  description:
    'an action the message claims ("I sent", "saved") was reported by a successful step with side effects',
  check: ({ candidate, evidence }) => {
    const claims = actionClaimsIn(messageOf(candidate));
    if (claims.length === 0) return { outcome: 'pass' };
    const acting = evidence.filter((item) => item.sideEffects);
    if (acting.some((item) => item.result.ok)) return { outcome: 'pass' };
    const said = listSome(claims.map(quote));
    if (acting.length === 0)
      return { outcome: 'block', reason: `claims ${said}, but no step with side effects ran` };
    return {
      outcome: 'block',
      reason: `claims ${said}, but every step with side effects failed: ${listSome(acting.map(describeFailure))}`,
    };
  },
};

const failureAcknowledged: Rule = {
  id: 'answer.failure-acknowledged',
  description: 'when a step failed for good, the message says something went wrong',
  check: ({ candidate, evidence }) => {
    const failed = unrecoveredFailures(evidence);
    if (failed.length === 0 || mentionsFailure(messageOf(candidate))) return { outcome: 'pass' };
    return {
      outcome: 'warn',
      reason: `${listSome(failed.map(describeFailure))} failed and the message does not say so`,
    };
  },
};

/**
 * `rules.answer.v1`: the final message is there, fully resolved, and claims
 * only actions a step reported.
 *
 * @example
 * createVerifier({ packs: [answerRules] }).verify({ rulePack: 'rules.answer.v1', candidate, evidence });
 */
export const answerRules = defineRulePack({
  id: 'rules.answer.v1',
  version: '1.0.0',
  description: 'the final message is non-empty, resolved, and claims only reported actions',
  rules: [nonEmpty, noPlaceholders, claimedAction, failureAcknowledged],
});
