import { candidateTexts } from '../candidate-text.ts';
import { evidenceTexts } from '../evidence.ts';
import { listSome } from '../reasons.ts';
import { hidesInstructions, type InjectionSignature, signatureFamilies } from '../signatures.ts';
import type { Rule, RuleResult } from '../types.ts';

type Family = InjectionSignature['family'];

function familiesOf(texts: readonly string[]): Set<Family> {
  const families = new Set<Family>();
  for (const text of texts) for (const family of signatureFamilies(text)) families.add(family);
  return families;
}

/**
 * Prompt-injection signatures in the evidence (instruction overrides, role
 * or system-prompt markers, requests to leak secrets). Visible ones warn: the
 * page may be about injections. Hidden ones (invisible characters, HTML
 * comments, hidden elements, Unicode tag characters) block, and so does a
 * candidate that repeats a family found in the evidence. Reasons name the
 * step and the family, never the text.
 */
export const injectionProbe: Rule = {
  id: 'probe.injection',
  description: 'no prompt-injection signature in the evidence, hidden or carried into the candidate',
  check({ candidate, evidence }): RuleResult {
    const hidden: string[] = [];
    const visible: string[] = [];
    const evidenceFamilies = new Set<Family>();
    for (const item of evidence) {
      const texts = evidenceTexts(item);
      if (texts.some(hidesInstructions)) hidden.push(item.id);
      const families = familiesOf(texts);
      if (families.size > 0) visible.push(`${item.id} (${[...families].join(', ')})`);
      for (const family of families) evidenceFamilies.add(family);
    }
    const ownTexts = candidateTexts(candidate);
    const own = familiesOf(ownTexts);
    const carried = [...own].filter((family) => evidenceFamilies.has(family));
    const blocks: string[] = [];
    if (hidden.length > 0)
      blocks.push(
        `${listSome(hidden)} ${hidden.length === 1 ? 'hides' : 'hide'} instructions from the reader`,
      );
    if (ownTexts.some(hidesInstructions)) blocks.push('the candidate hides instructions from the reader');
    if (carried.length > 0)
      blocks.push(`the candidate repeats ${carried.join(', ')} text found in the evidence`);
    if (blocks.length > 0) return { outcome: 'block', reason: blocks.join('; ') };
    const warnings: string[] = [];
    if (visible.length > 0) warnings.push(`injection signatures in ${listSome(visible)}`);
    if (own.size > 0) warnings.push(`the candidate holds ${[...own].join(', ')} text`);
    if (warnings.length > 0) return { outcome: 'warn', reason: warnings.join('; ') };
    return { outcome: 'pass' };
  },
};
