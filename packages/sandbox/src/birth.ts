import { createBirthHarness, type ExecutorRunner } from '@metnos/executor-sdk';
import { createSandboxRunner } from './runner.ts';

let shared: ExecutorRunner | undefined;

/**
 * The runner birth tests share in this process: the sandbox runner with its
 * defaults, created (and the host probed) on first use.
 */
export function sharedSandboxRunner(): ExecutorRunner {
  shared ??= createSandboxRunner();
  return shared;
}

/**
 * The birth-test harness for one executor folder. Every case runs the way
 * Metnos runs it for real: verified, policy-checked and isolated by the one
 * sandbox runner this process shares.
 *
 * @example
 * import { birth } from '@metnos/sandbox/birth';
 * const executor = birth(import.meta.dirname + '/..');
 * expect(await executor.invoke({ path: 'a.txt' }, { workspace })).toMatchObject({ ok: true });
 */
export function birth(dir: string): ReturnType<typeof createBirthHarness> {
  return createBirthHarness(dir, { runner: sharedSandboxRunner() });
}
