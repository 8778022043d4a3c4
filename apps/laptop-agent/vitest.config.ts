import { metnosVitestConfig } from '@metnos/tooling/vitest';

export default metnosVitestConfig({ testTimeout: 60_000 });
