import { metnosVitestConfig } from './vitest.preset.ts';

// The docs check runs every README block: minutes of work when the machine is busy.
export default metnosVitestConfig({
  include: ['*.test.ts', 'scripts/**/*.test.ts', 'test-services/**/*.test.ts'],
  testTimeout: 960_000,
});
