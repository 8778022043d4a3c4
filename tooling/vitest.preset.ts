import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings: packages resolve each other to source through the
 * `metnos-source` export condition, so tests run without a build first.
 */
export function metnosVitestConfig(
  options: { testTimeout?: number; include?: string[]; setupFiles?: string[] } = {},
) {
  return defineConfig({
    resolve: { conditions: ['metnos-source'] },
    ssr: { resolve: { conditions: ['metnos-source'] } },
    test: {
      include: options.include ?? ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 30_000,
      pool: 'forks',
      ...(options.setupFiles ? { setupFiles: options.setupFiles } : {}),
    },
  });
}
