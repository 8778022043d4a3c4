import { metnosVitestConfig } from '@metnos/tooling/vitest';

export default metnosVitestConfig({ testTimeout: 60_000, setupFiles: ['test/__fixtures__/setup.ts'] });
