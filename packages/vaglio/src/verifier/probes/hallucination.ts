import { candidateTexts, citesOf } from '../candidate-text.ts';
import { listSome, quote } from '../reasons.ts';
import type { Sources } from '../sources.ts';
import { emailsIn, filePathsIn, numbersIn, quotedIn, urlsIn, withoutLinks } from '../text-patterns.ts';
import type { Rule, RuleResult } from '../types.ts';

/** Numbers with fewer digits are counts and ordinals an answer may form itself ("2 files"). */
const MIN_NUMBER_DIGITS = 2;

/** The things a text names that the sources do not hold, as `file "x"`, `number "42"`, … */
function ungrounded(text: string, sources: Sources): string[] {
  const missing: string[] = [];
  for (const url of urlsIn(text)) if (!sources.mentions(url)) missing.push(`link ${quote(url)}`);
  for (const email of emailsIn(text)) if (!sources.mentions(email)) missing.push(`address ${quote(email)}`);
  const paths = filePathsIn(text);
  for (const path of paths) if (!sources.hasPath(path)) missing.push(`file ${quote(path)}`);
  let rest = withoutLinks(text);
  for (const path of paths) rest = rest.split(path).join(' ');
  for (const number of numbersIn(rest)) {
    if (number.replace(/\D/g, '').length < MIN_NUMBER_DIGITS) continue;
    if (!sources.hasNumber(number)) missing.push(`number ${quote(number)}`);
  }
  for (const name of quotedIn(text)) if (!sources.mentions(name)) missing.push(`name ${quote(name)}`);
  return missing;
}

/**
 * Obvious hallucination patterns. Citing evidence that does not exist
 * blocks. Naming a link, address, file, number (two digits or more) or
 * quoted name that neither the evidence, the request nor the runtime values
 * hold warns: the answer may still be right, but it says more than it saw.
 */
export const hallucinationProbe: Rule = {
  id: 'probe.hallucination',
  description: 'the candidate cites existing evidence and names only what the evidence holds',
  check({ candidate, evidence, sources }): RuleResult {
    const ids = new Set(evidence.map((item) => item.id));
    const unknown = citesOf(candidate).filter((cite) => !ids.has(cite));
    if (unknown.length > 0)
      return {
        outcome: 'block',
        reason: `cites evidence that does not exist: ${listSome(unknown.map(quote))}`,
      };
    const missing = [...new Set(candidateTexts(candidate).flatMap((text) => ungrounded(text, sources)))];
    if (missing.length > 0)
      return { outcome: 'warn', reason: `names what no evidence holds: ${listSome(missing)}` };
    return { outcome: 'pass' };
  },
};
