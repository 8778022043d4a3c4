import { messageOf } from '../candidate-text.ts';
import { describeFailure } from '../evidence.ts';
import { listSome, quote } from '../reasons.ts';
import { defineRulePack } from '../rule-pack.ts';
import type { Evidence } from '../shapes.ts';
import { indexSources } from '../sources.ts';
import { actionClaimsIn, filePathsIn, mentionsFailure } from '../text-patterns.ts';
import type { Rule, VerificationContext } from '../types.ts';

/** Claims that a file changed, in English and Italian; sending is not among them. */
const FILE_CHANGE =
  /^(?:wrote|written|saved|created|stored|appended|updated|edited|renamed|moved|copied|uploaded|deleted|removed|erased|scritt|salvat|creat|eliminat|cancellat|rimoss|spostat|rinominat|copiat|aggiornat|caricat)/;

function successful(evidence: readonly Evidence[], filter: (item: Evidence) => boolean = () => true) {
  const items = evidence.filter((item) => item.result.ok && filter(item));
  return indexSources(items.flatMap((item) => [item.args, item.result]));
}

function pathInEvidence({ candidate, evidence }: VerificationContext) {
  const paths = filePathsIn(messageOf(candidate));
  if (paths.length === 0) return { outcome: 'pass' as const };
  const reported = successful(evidence);
  const owned = mentionsFailure(messageOf(candidate));
  const unreported: string[] = [];
  for (const path of paths) {
    if (reported.hasPath(path)) continue;
    const failed = evidence.filter((item) => !item.result.ok && indexSources([item.args]).hasPath(path));
    if (failed.length > 0 && owned) continue;
    unreported.push(
      failed.length > 0
        ? `${quote(path)} (only ${listSome(failed.map(describeFailure))} touched it)`
        : quote(path),
    );
  }
  return unreported.length === 0
    ? { outcome: 'pass' as const }
    : {
        outcome: 'block' as const,
        reason: `names files no successful step reported: ${listSome(unreported)}`,
      };
}

const pathExists: Rule = {
  id: 'files.path-in-evidence',
  description:
    'every file path the message names was reported by a successful step (or only a failed one, and the message says it failed)',
  check: pathInEvidence,
};

const changedFileReported: Rule = {
  id: 'files.changed-file-reported',
  description:
    'a message that says a file was saved, moved or deleted names a file a successful step with side effects touched',
  check: ({ candidate, evidence }) => {
    const message = messageOf(candidate);
    if (!actionClaimsIn(message).some((claim) => FILE_CHANGE.test(claim))) return { outcome: 'pass' };
    const paths = filePathsIn(message);
    if (paths.length === 0) return { outcome: 'pass' };
    const changed = successful(evidence, (item) => item.sideEffects);
    if (paths.some((path) => changed.hasPath(path))) return { outcome: 'pass' };
    return {
      outcome: 'block',
      reason: `says a file changed, but no successful step with side effects touched ${listSome(paths.map(quote))}`,
    };
  },
};

/**
 * `rules.files.v1`: the files an answer names exist in the evidence, and a
 * file it says it changed is one a step with side effects changed.
 *
 * @example
 * verifier.verify({ rulePack: 'rules.files.v1', candidate: { kind: 'answer', message: 'Saved notes/a.md.' }, evidence });
 */
export const fileRules = defineRulePack({
  id: 'rules.files.v1',
  version: '1.0.0',
  description: 'files the answer names or says it changed are in the evidence',
  rules: [pathExists, changedFileReported],
});
