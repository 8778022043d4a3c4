import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { unifiedDiff } from '../diff.ts';
import { renderManifest, reviewDigest } from './artefacts.ts';
import { describeGrants } from './birth-run.ts';
import { proposedGrants } from './profile.ts';
import type { Artefacts, Grants, Motivation, RunDraft, Stage } from './types.ts';

/** What the person is shown before approving: each file as a diff, the profile against the proposal. */
export interface Review {
  name: string;
  /** The digest an approval must name: of exactly these artefacts. */
  digest: string;
  files: Array<{ path: string; diff: string }>;
  profile: { proposed: Grants; chosen: Grants; diff: string };
}

/** The artefacts stage 7 would write, from a draft whose stages 2–5 are done. */
export function draftArtefacts(draft: RunDraft, runId: string, createdAt: Date): Artefacts | undefined {
  const { spec, code, schema, grants, cases } = draft;
  if (!spec || !code || !schema || !grants || !cases) return undefined;
  return { manifest: renderManifest(spec, grants, { runId, createdAt }), code, schema, cases, grants };
}

/** The executor a new one replaces or narrows: what its files are diffed against. */
function baselineOf(
  motivation: Motivation,
  executors: readonly VerifiedExecutor[],
): VerifiedExecutor | undefined {
  const name =
    motivation.kind === 'merge' || motivation.kind === 'generalise'
      ? motivation.executors[0]
      : motivation.kind === 'specialise'
        ? motivation.executor
        : undefined;
  return name === undefined ? undefined : executors.find((executor) => executor.name === name);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

const grantLines = (grants: Grants) =>
  `read = ${JSON.stringify(grants.read)}\nwrite = ${JSON.stringify(grants.write)}\ndomains = ${JSON.stringify(grants.domains)}\n`;

/**
 * The diff-style view of a run's artefacts, as the CLI (`metnos synt show`)
 * and the console print it: manifest, code, schema and birth cases as
 * unified diffs (against the executor a merge, generalisation or
 * specialisation starts from, else against nothing), and the chosen profile
 * against the proposed one.
 *
 * @example
 * const review = reviewOf(draft.review.artefacts, draft, catalog.executors());
 * for (const file of review.files) console.log(file.diff);
 */
export function reviewOf(
  artefacts: Artefacts,
  draft: RunDraft,
  executors: readonly VerifiedExecutor[],
): Review {
  const baseline = baselineOf(draft.motivation, executors);
  const name = draft.spec?.name ?? 'executor';
  const old = (file: string, text: string) =>
    baseline ? { from: `a/${baseline.name}/${file}`, text } : undefined;
  const pairs: Array<[string, string, { from: string; text: string } | undefined]> = [
    [
      'manifest.toml',
      artefacts.manifest,
      old('manifest.toml', baseline ? readText(join(baseline.dir, 'manifest.toml')) : ''),
    ],
    ['main.ts', artefacts.code, old('main.ts', baseline?.code.toString('utf8') ?? '')],
    [
      'schema.json',
      artefacts.schema,
      old('schema.json', baseline ? `${JSON.stringify(baseline.schema, null, 2)}\n` : ''),
    ],
    ['tests/cases.json', `${JSON.stringify(artefacts.cases, null, 2)}\n`, undefined],
  ];
  const proposed = draft.spec ? proposedGrants(draft.spec) : artefacts.grants;
  return {
    name,
    digest: reviewDigest(artefacts),
    files: pairs.map(([path, text, before]) => ({
      path,
      diff: unifiedDiff(before?.text ?? '', text, {
        from: before?.from ?? '/dev/null',
        to: `b/${name}/${path}`,
      }),
    })),
    profile: {
      proposed,
      chosen: artefacts.grants,
      diff: unifiedDiff(grantLines(proposed), grantLines(artefacts.grants), {
        from: 'proposed profile',
        to: 'tightest profile that passed the birth tests',
      }),
    },
  };
}

/**
 * Stage 6, human approval: the artefacts are fixed (manifest with its
 * creation instant, code, schema, cases, profile) and their digest taken;
 * the run waits for the person. Only a decision naming that same digest
 * passes; any other decides nothing and the run keeps waiting (a decision without a digest too). Nothing
 * after this stage runs without it.
 */
export const approvalStage: Stage = {
  name: 'approval',
  async run(draft, context) {
    const now = (context.settings.clock ?? (() => new Date()))();
    const artefacts = draft.review?.artefacts ?? draftArtefacts(draft, context.runId, now);
    if (!artefacts) return { kind: 'suspend', waitingFor: 'fix', reason: 'the artefacts are not complete' };
    const digest = reviewDigest(artefacts);
    const review = { digest, artefacts };
    const decision = context.decision;
    if (!decision)
      return {
        kind: 'suspend',
        waitingFor: 'approval',
        reason: `approve to sign ${draft.spec?.name} with your key and install it (${describeGrants(artefacts.grants)}); review ${digest}`,
        update: { review },
      };
    if (decision.digest !== digest)
      return {
        kind: 'suspend',
        waitingFor: 'approval',
        reason: `${decision.digest === undefined ? 'the approval named no review digest' : `the approval named ${decision.digest}`}, not the artefacts shown (${digest}): show them again and approve with that digest`,
        update: { review },
      };
    return {
      kind: 'done',
      note: `approved by ${decision.by} (${digest})`,
      update: { review, approval: { digest, by: decision.by, at: now.toISOString() } },
    };
  },
};
