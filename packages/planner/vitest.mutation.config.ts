import { metnosVitestConfig } from '@metnos/tooling/vitest';

/** The tests the mutation run (stryker.config.mjs) uses: the engine's own. */
export default metnosVitestConfig({
  include: ['src/engine/**/*.test.ts', 'src/**/*.mutation.test.ts'],
});
