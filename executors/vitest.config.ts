import { metnosVitestConfig } from '@metnos/tooling/vitest';

export default metnosVitestConfig({
  include: ['*/tests/**/*.test.ts', '*/*/tests/**/*.test.ts'],
  testTimeout: 60_000,
});
