import { metnosVitestConfig } from '@metnos/tooling/vitest';

/**
 * The tests the mutation run (stryker.config.mjs) uses: the ones over signatures,
 * verification, the catalog, profile locks and the harness's schema checks. The suites
 * that start executor processes are too slow to repeat for every mutant.
 */
export default metnosVitestConfig({
  include: [
    'src/signature.test.ts',
    'src/verify.test.ts',
    'src/verify-worker.test.ts',
    'src/signature-thread.test.ts',
    'src/catalog.test.ts',
    'src/lifecycle.test.ts',
    'src/verification-cache.test.ts',
    'src/manifest.test.ts',
    'src/json-schema.test.ts',
    'src/plain-toml.test.ts',
    'src/sodium-verify.test.ts',
    'src/**/*.mutation.test.ts',
  ],
});
