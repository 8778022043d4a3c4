import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from './output.ts';

/**
 * Runs an executor's `tests/*.test.ts` with vitest. The test files import
 * `@metnos/sandbox/birth`; those imports resolve to the CLI's own copies, so a
 * scaffolded executor in any folder tests without installing anything.
 */
export async function runBirthTests(dir: string, io: CliIo): Promise<number> {
  const { startVitest } = await import('vitest/node');
  const require = createRequire(import.meta.url);
  const sandboxRoot = dirname(require.resolve('@metnos/sandbox/package.json'));
  const sdkRoot = dirname(require.resolve('@metnos/executor-sdk/package.json'));
  const exact = (specifier: string) => ({
    find: new RegExp(`^${specifier.replace(/[/.]/g, '\\$&')}$`),
    replacement: fileURLToPath(import.meta.resolve(specifier)),
  });
  const vitest = await startVitest(
    'test',
    [],
    {
      root: dir,
      include: ['tests/**/*.test.ts'],
      watch: false,
      testTimeout: 60_000,
      pool: 'forks',
    },
    {
      resolve: {
        conditions: ['metnos-source'],
        alias: [
          exact('@metnos/sandbox/birth'),
          exact('@metnos/sandbox'),
          exact('@metnos/executor-sdk/test'),
          exact('@metnos/executor-sdk'),
        ],
      },
      server: { fs: { allow: [dir, sandboxRoot, sdkRoot, join(sdkRoot, '..', '..')] } },
    },
  );
  const failed = vitest?.state.getCountOfFailedTests() ?? 1;
  const files = vitest?.state.getFiles() ?? [];
  await vitest?.close();
  if (files.length === 0) {
    io.err(`no birth tests found in ${join(dir, 'tests')}`);
    return 1;
  }
  return failed === 0 ? 0 : 1;
}
