import { createBirthHarness, createProcessRunner, type ExecutorRunner } from '@metnos/executor-sdk';

let shared: ExecutorRunner | undefined;

/**
 * The birth-test harness for one executor folder, running every case through
 * the one runner this process shares.
 *
 * @example
 * import { birth } from '@metnos/sandbox/birth';
 * const executor = birth(import.meta.dirname + '/..');
 * expect(await executor.invoke({ path: 'a.txt' }, { workspace })).toMatchObject({ ok: true });
 */
export function birth(dir: string): ReturnType<typeof createBirthHarness> {
  // First version: the plain runner below the declared tier (results say belowDeclared). Replaced by the sandbox runner.
  shared ??= createProcessRunner({ enforceMinimumTier: false });
  return createBirthHarness(dir, { runner: shared });
}
