import { metnosVitestConfig } from '@metnos/tooling/vitest';
import { defineConfig } from 'vitest/config';

/**
 * The suites that attack the sandbox run twice: as they are (cold starts), and
 * in the `warm-pool` project, where every call goes through a process of the
 * warm pool (`test/warm-pool-setup.ts`). Filter with `--project cold` or
 * `--project warm-pool`.
 */
const ATTACK_SUITES = [
  'test/policy-attacks.test.ts',
  'test/runtime-attacks.test.ts',
  'test/exec-attacks.test.ts',
  'test/host-attacks.test.ts',
  'test/secret-links.test.ts',
  'test/write-quota.test.ts',
  'test/credentials-sandbox.test.ts',
  'test/host-services.test.ts',
  'test/as-of.test.ts',
];

const cold = metnosVitestConfig();
const warm = metnosVitestConfig({ include: ATTACK_SUITES, setupFiles: ['test/warm-pool-setup.ts'] });

export default defineConfig({
  test: {
    projects: [
      { ...cold, test: { ...cold.test, name: 'cold' } },
      { ...warm, test: { ...warm.test, name: 'warm-pool' } },
    ],
  },
});
