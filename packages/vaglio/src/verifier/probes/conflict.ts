import { canonicalJson } from '../../call-hash.ts';
import { callKey } from '../evidence.ts';
import { listSome } from '../reasons.ts';
import type { Rule, RuleResult } from '../types.ts';

/**
 * Conflicting evidence: two successful runs of the same read (same tool,
 * same arguments, no side effects) that returned different results, with no
 * successful step with side effects between them that could explain the
 * change. Warns: the answer rests on facts that disagree.
 */
export const conflictProbe: Rule = {
  id: 'probe.conflict',
  description: 'no two runs of the same read disagree',
  check({ evidence }): RuleResult {
    const conflicts: string[] = [];
    const lastRead = new Map<string, { id: string; content: string; index: number }>();
    evidence.forEach((item, index) => {
      if (!item.result.ok || item.sideEffects) return;
      const key = callKey(item);
      const content = canonicalJson(item.result.content ?? null);
      const earlier = lastRead.get(key);
      lastRead.set(key, { id: item.id, content, index });
      if (!earlier || earlier.content === content) return;
      const between = evidence.slice(earlier.index + 1, index);
      if (between.some((step) => step.sideEffects && step.result.ok)) return;
      conflicts.push(`${earlier.id} and ${item.id} (${item.tool})`);
    });
    if (conflicts.length === 0) return { outcome: 'pass' };
    return {
      outcome: 'warn',
      reason: `the same call returned different results in ${listSome(conflicts)}`,
    };
  },
};
