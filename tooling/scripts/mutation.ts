// Mutation testing of the security-critical modules: runs StrykerJS in each listed package,
// one package at a time (each package's stryker.config.mjs names its modules), then prints
// one row per module and fails when any is below the threshold.
//
// Usage: pnpm test:mutation [--only <package>] [--report-only] [--full] [--ci]
//   --only vaglio   run (or report) one package
//   --report-only   read the last reports without running Stryker
//   --full          ignore the committed incremental baseline and test every mutant again
//   --ci            only the packages with a committed baseline (reports/stryker-incremental.json),
//                   and also fail when a mutant that baseline killed now survives,
//                   so the run retests only what changed since it (what .ci/run does)
// METNOS_MUTATION_CONCURRENCY sets Stryker's concurrency (default 1).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MUTATION_THRESHOLD } from '../stryker.preset.mjs';

const REPO = join(import.meta.dirname, '..', '..');

/** The packages with a stryker.config.mjs, in the order they run. */
export const MUTATION_PACKAGES = ['vaglio', 'sandbox', 'executor-sdk', 'planner', 'autopath'] as const;

/** Counts and score of one mutated file. */
export interface ModuleScore {
  module: string;
  killed: number;
  timedOut: number;
  survived: number;
  noCoverage: number;
  /** Killed and timed out over every valid mutant, in percent; 100 when there is none. */
  score: number;
}

interface MutantReport {
  status: string;
  mutatorName?: string;
  replacement?: string;
  location?: { start: { line: number; column: number }; end: { line: number; column: number } };
}

/** The part of Stryker's JSON report (mutation-testing-report-schema) read here. */
export interface MutationReport {
  files: Record<string, { source?: string; mutants: MutantReport[] }>;
}

const CAUGHT = new Set(['Killed', 'Timeout']);
const MISSED = new Set(['Survived', 'NoCoverage']);

/**
 * The mutants `before` caught (killed or timed out) that `after` lets through (survived or
 * not covered), as `<package>/<file>:<line>:<column> <mutator>`. A mutant is the same one
 * when its file's source, place, mutator and replacement are: a change to the code makes
 * new mutants, which the score judges instead.
 *
 * @example
 * regressions('vaglio', baseline, report); // ['vaglio/src/call-hash.ts:41:9 ConditionalExpression']
 */
export function regressions(name: string, before: MutationReport, after: MutationReport): string[] {
  const keyOf = (source: string | undefined, mutant: MutantReport) =>
    JSON.stringify([source, mutant.location, mutant.mutatorName, mutant.replacement]);
  const lost: string[] = [];
  for (const [file, { source, mutants }] of Object.entries(after.files)) {
    const earlier = before.files[file];
    if (!earlier || earlier.source !== source) continue;
    const caught = new Set(
      earlier.mutants.filter((mutant) => CAUGHT.has(mutant.status)).map((mutant) => keyOf(source, mutant)),
    );
    for (const mutant of mutants) {
      if (!MISSED.has(mutant.status) || !caught.has(keyOf(source, mutant))) continue;
      const start = mutant.location?.start;
      lost.push(`${name}/${file}:${start?.line}:${start?.column} ${mutant.mutatorName}`);
    }
  }
  return lost;
}

/**
 * One row per file of a Stryker JSON report, named `<package>/<file>`. Compile and runtime
 * errors and ignored mutants do not count, as in Stryker's own mutation score.
 *
 * @example
 * moduleScores('vaglio', report); // [{ module: 'vaglio/src/guard.ts', killed: 210, …, score: 91.2 }]
 */
export function moduleScores(name: string, report: MutationReport): ModuleScore[] {
  return Object.entries(report.files)
    .map(([file, { mutants }]) => {
      const count = (status: string) => mutants.filter((mutant) => mutant.status === status).length;
      const killed = count('Killed');
      const timedOut = count('Timeout');
      const survived = count('Survived');
      const noCoverage = count('NoCoverage');
      const valid = killed + timedOut + survived + noCoverage;
      const score = valid === 0 ? 100 : ((killed + timedOut) / valid) * 100;
      return { module: `${name}/${file}`, killed, timedOut, survived, noCoverage, score };
    })
    .sort((left, right) => left.module.localeCompare(right.module));
}

/**
 * The table printed at the end of a run, with `✗` beside every module under `threshold`.
 *
 * @example
 * console.log(formatTable(scores, 85));
 */
export function formatTable(scores: readonly ModuleScore[], threshold: number): string {
  const header = ['module', 'score', 'killed', 'timeout', 'survived', 'no cov', ''];
  const rows = scores.map((row) => [
    row.module,
    `${row.score.toFixed(1)}%`,
    String(row.killed),
    String(row.timedOut),
    String(row.survived),
    String(row.noCoverage),
    row.score < threshold ? '✗' : '',
  ]);
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

/** The modules under `threshold`. */
export function belowThreshold(scores: readonly ModuleScore[], threshold: number): ModuleScore[] {
  return scores.filter((row) => row.score < threshold);
}

function main(argv: string[]): number {
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined;
  const reportOnly = argv.includes('--report-only');
  const full = argv.includes('--full');
  const ci = argv.includes('--ci');
  if (only !== undefined && !(MUTATION_PACKAGES as readonly string[]).includes(only)) {
    console.error(`--only: no mutation config for "${only}" (one of ${MUTATION_PACKAGES.join(', ')})`);
    return 2;
  }
  const packages = MUTATION_PACKAGES.filter((name) => only === undefined || name === only).filter((name) => {
    if (!ci || existsSync(join(REPO, 'packages', name, 'reports', 'stryker-incremental.json'))) return true;
    console.log(`── ${name}: no committed baseline yet, not checked`);
    return false;
  });
  const scores: ModuleScore[] = [];
  const failedRuns: string[] = [];
  const lost: string[] = [];
  for (const name of packages) {
    const dir = join(REPO, 'packages', name);
    const baselinePath = join(dir, 'reports', 'stryker-incremental.json');
    const committed =
      ci && existsSync(baselinePath)
        ? (JSON.parse(readFileSync(baselinePath, 'utf8')) as MutationReport)
        : undefined;
    if (!reportOnly) {
      const started = performance.now();
      console.log(`\n── stryker: ${name}`);
      const result = spawnSync(
        join(REPO, 'node_modules', '.bin', 'stryker'),
        ['run', ...(full ? ['--force'] : [])],
        { cwd: dir, stdio: 'inherit' },
      );
      console.log(`── ${name}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
      if (result.status !== 0) failedRuns.push(name);
    }
    // --report-only on a fresh clone: the committed baseline is a report of the same schema.
    const lastReport = join(dir, 'reports', 'mutation', 'mutation.json');
    const baseline = join(dir, 'reports', 'stryker-incremental.json');
    const reportPath = reportOnly && !existsSync(lastReport) ? baseline : lastReport;
    if (!existsSync(reportPath)) {
      failedRuns.push(name);
      continue;
    }
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as MutationReport;
    scores.push(...moduleScores(name, report));
    // --ci: a test that stopped catching a mutant it caught is a weakening, whatever the score
    if (committed && !reportOnly) lost.push(...regressions(name, committed, report));
  }
  console.log(`\n${formatTable(scores, MUTATION_THRESHOLD)}`);
  const below = belowThreshold(scores, MUTATION_THRESHOLD);
  for (const row of below)
    console.error(`✗ ${row.module}: ${row.score.toFixed(1)}% < ${MUTATION_THRESHOLD}%`);
  for (const name of failedRuns) console.error(`✗ ${name}: Stryker did not finish or wrote no report`);
  if (lost.length > 0) {
    console.error(
      `✗ ${lost.length} mutant(s) the committed baseline killed now survive (a test was weakened):`,
    );
    for (const mutant of lost) console.error(`    ${mutant}`);
  }
  if (below.length === 0 && failedRuns.length === 0)
    console.log(`every module at or above ${MUTATION_THRESHOLD}%`);
  return below.length > 0 || failedRuns.length > 0 || lost.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
