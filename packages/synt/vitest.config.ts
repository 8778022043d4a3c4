import { metnosVitestConfig } from '@metnos/tooling/vitest';

export default metnosVitestConfig();
