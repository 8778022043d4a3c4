import { type CaseReport, describeFailures, describeGrants, runBirthCases } from './birth-run.ts';
import type { Specification } from './spec-schema.ts';
import type { Grants, Stage } from './types.ts';

/** The proposed profile's grants, from the spec's guess. */
export function proposedGrants(spec: Specification): Grants {
  return {
    read: [...spec.profile.fs_read],
    write: [...spec.profile.fs_write],
    domains: [...spec.profile.network],
  };
}

/** How much a dimension gives away: reading least, then writing, then the network. */
const DIMENSIONS = [
  { key: 'read', weight: 1 },
  { key: 'write', weight: 2 },
  { key: 'domains', weight: 4 },
] as const;

/**
 * The rungs tried, from none upward: every combination of the proposed
 * profile's dimensions (read, write, network), lightest first, ending with
 * the whole proposal. Never more than the proposal.
 *
 * @example
 * grantLadder({ read: ['$WORKSPACE/data'], write: [], domains: [] }); // [none, { read: ['$WORKSPACE/data'], … }]
 */
export function grantLadder(proposed: Grants): Grants[] {
  const present = DIMENSIONS.filter((dimension) => proposed[dimension.key].length > 0);
  const rungs: Array<{ grants: Grants; weight: number }> = [];
  for (let mask = 0; mask < 1 << present.length; mask++) {
    const grants: Grants = { read: [], write: [], domains: [] };
    let weight = 0;
    present.forEach((dimension, index) => {
      if (mask & (1 << index)) {
        grants[dimension.key] = [...proposed[dimension.key]];
        weight += dimension.weight;
      }
    });
    rungs.push({ grants, weight });
  }
  return rungs.sort((a, b) => a.weight - b.weight).map((rung) => rung.grants);
}

/** The grants with one entry taken away, one candidate per entry. */
function withoutOne(grants: Grants): Grants[] {
  return DIMENSIONS.flatMap((dimension) =>
    grants[dimension.key].map((_, index) => ({
      ...grants,
      [dimension.key]: grants[dimension.key].filter((__, other) => other !== index),
    })),
  );
}

const passed = (reports: readonly CaseReport[]) => reports.every((report) => report.passed);

/**
 * Stage 4, profile: the tightest profile under which every birth case
 * passes, found by running them in the real sandbox (the runner in the
 * settings) with narrowing grants — from none upward through the rungs of
 * {@link grantLadder}, then dropping one entry at a time from the first rung
 * that passes while the cases still pass. When not even the proposed profile
 * lets them pass (the code reaches for more than it was offered), the run
 * waits, with each failing case and what it got as the reason.
 */
export const profileStage: Stage = {
  name: 'profile',
  async run(draft, context) {
    const { spec, code, schema } = draft;
    if (!spec || !code || !schema)
      return { kind: 'suspend', waitingFor: 'fix', reason: 'no checked code to find a profile for' };
    const staged = { runId: context.runId, spec, code, schema };
    const run = (grants: Grants) => runBirthCases(staged, grants, spec.birth_tests, context.settings.runner);
    const tried: Array<{ grants: Grants; failures: string[] }> = [];
    let chosen: Grants | undefined;
    for (const rung of grantLadder(proposedGrants(spec))) {
      const reports = await run(rung);
      tried.push({ grants: rung, failures: describeFailures(reports) });
      if (passed(reports)) {
        chosen = rung;
        break;
      }
    }
    if (!chosen) {
      const widest = tried.at(-1)!;
      return {
        kind: 'suspend',
        waitingFor: 'fix',
        reason: `no profile up to the proposed one (${describeGrants(widest.grants)}) lets every birth test pass in the sandbox: ${widest.failures.join('; ')}. The code needs more than it was offered: amend the spec (its profile or its code's needs), or reject`,
        detail: { tried },
      };
    }
    let narrowing = true;
    while (narrowing) {
      narrowing = false;
      for (const candidate of withoutOne(chosen)) {
        const reports = await run(candidate);
        tried.push({ grants: candidate, failures: describeFailures(reports) });
        if (passed(reports)) {
          chosen = candidate;
          narrowing = true;
          break;
        }
      }
    }
    const tightest = chosen;
    return {
      kind: 'done',
      note: `tightest profile: ${describeGrants(tightest)} (${tried.length} tried in the sandbox, proposed: ${describeGrants(proposedGrants(spec))})`,
      update: { grants: tightest },
      detail: { tried },
    };
  },
};
