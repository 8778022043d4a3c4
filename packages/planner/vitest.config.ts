import { metnosVitestConfig } from '@metnos/tooling/vitest';

export default metnosVitestConfig({
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
});
