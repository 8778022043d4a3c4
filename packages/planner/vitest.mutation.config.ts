import { metnosVitestConfig } from '@metnos/tooling/vitest';

/**
 * The tests the mutation run (stryker.config.mjs) uses: the plan grammar's and the
 * qualifiers' own suites and the engine's mutation tests. A mutant in a module-level schema
 * runs all of them, so the suites that drive whole turns through executor processes stay out.
 */
export default metnosVitestConfig({
  include: ['src/engine/plan-grammar.test.ts', 'src/engine/qualifiers.test.ts', 'src/**/*.mutation.test.ts'],
});
