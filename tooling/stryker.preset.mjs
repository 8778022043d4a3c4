// Shared StrykerJS settings for the mutation runs of Metnos's security-critical modules.
// Each package that takes part has a stryker.config.mjs naming the files to mutate; the
// root `pnpm test:mutation` (tooling/scripts/mutation.ts) runs them one package at a time.

/** The score below which a module fails `pnpm test:mutation --check`. */
export const MUTATION_THRESHOLD = 85;

/**
 * Stryker settings for one package.
 *
 * - In place: the packages' tsconfig files extend `../../tooling/...` and tests read seeds
 *   through paths such as `../../../executors`, which a copied sandbox would break. Stryker
 *   restores the files when it ends; run it in a checkout nobody else edits meanwhile.
 * - pnpm keeps each package in its own folder, so the vitest runner is named in `plugins`.
 * - Incremental: `reports/stryker-incremental.json` is committed; a run reuses every result
 *   whose code and tests did not change and tests only the rest.
 * - Concurrency comes from METNOS_MUTATION_CONCURRENCY (default 1): the machine has two cores.
 *
 * @example
 * // packages/vaglio/stryker.config.mjs
 * import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';
 * export default metnosStrykerConfig({ mutate: ['src/call-hash.ts'] });
 */
export function metnosStrykerConfig({ mutate, vitestConfig = 'vitest.config.ts', timeoutMS = 10_000 }) {
  const concurrency = Number(process.env.METNOS_MUTATION_CONCURRENCY ?? 1);
  return {
    packageManager: 'pnpm',
    plugins: ['@stryker-mutator/vitest-runner'],
    testRunner: 'vitest',
    vitest: { configFile: vitestConfig, related: false },
    coverageAnalysis: 'perTest',
    checkers: [],
    mutate,
    inPlace: true,
    incremental: true,
    incrementalFile: 'reports/stryker-incremental.json',
    reporters: ['json', 'progress-append-only'],
    jsonReporter: { fileName: 'reports/mutation/mutation.json' },
    thresholds: { high: 90, low: MUTATION_THRESHOLD, break: null },
    concurrency: Number.isInteger(concurrency) && concurrency > 0 ? concurrency : 1,
    timeoutMS,
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
    disableTypeChecks: true,
  };
}
