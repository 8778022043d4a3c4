import { metnosVitestConfig } from '@metnos/tooling/vitest';

/**
 * The tests the mutation run (stryker.config.mjs) uses: the ones that reach the guard, paths,
 * commands, shell words, the rules judge, the call hash and the approval store. A mutant in a
 * module-level list runs all of them, so the verifier's suites stay out.
 */
export default metnosVitestConfig({
  include: [
    'src/guard.test.ts',
    'src/approval-store.test.ts',
    'src/rules-judge.test.ts',
    'src/vaglio.test.ts',
    'src/nesting.test.ts',
    'src/*.mutation.test.ts',
  ],
});
