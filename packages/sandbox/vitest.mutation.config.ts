import { metnosVitestConfig } from '@metnos/tooling/vitest';

/**
 * The tests the mutation run (stryker.config.mjs) uses: the ones that call the policy,
 * the forbidden set, path resolution and the domain rules directly. The attack suites
 * start a real sandbox per case, too slow to repeat for every mutant.
 */
export default metnosVitestConfig({ include: ['test/units.test.ts', 'test/*.mutation.test.ts'] });
