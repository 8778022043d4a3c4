import { metnosVitestConfig } from '@metnos/tooling/vitest';

/** The tests the mutation run (stryker.config.mjs) uses: the recognizer's own. */
export default metnosVitestConfig({ include: ['src/recognizer.test.ts', 'src/*.mutation.test.ts'] });
