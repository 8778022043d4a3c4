import { createBirthHarness, type ExecutorRunner, type PublicKey } from '@metnos/executor-sdk';
import { createSandboxRunner, type SandboxRunnerSettings } from './runner.ts';

/** Options of {@link birth}: operator settings for the shared runner, and the keys to trust. */
export interface BirthOptions {
  /** Egress targets for allow-listed domains, e.g. `{ 'example.com': '127.0.0.1:8080' }` for a loopback test server. */
  hostOverrides?: SandboxRunnerSettings['hostOverrides'];
  /** Default: the nearest `metnos.toml`'s trusted keys plus the user's trust list. */
  trustedKeys?: readonly PublicKey[];
}

const shared = new Map<string, ExecutorRunner>();

/**
 * The runner birth tests share in this process: the sandbox runner with its
 * defaults (one per distinct set of host overrides), created and the host
 * probed on first use.
 *
 * @example
 * const runner = sharedSandboxRunner({ hostOverrides: { 'example.com': '127.0.0.1:8080' } });
 */
export function sharedSandboxRunner(options: Pick<BirthOptions, 'hostOverrides'> = {}): ExecutorRunner {
  const key = JSON.stringify(Object.entries(options.hostOverrides ?? {}).sort());
  let runner = shared.get(key);
  if (!runner) {
    runner = createSandboxRunner({ hostOverrides: options.hostOverrides });
    shared.set(key, runner);
  }
  return runner;
}

/**
 * The birth-test harness for one executor folder. Every case runs the way
 * Metnos runs it for real: verified, policy-checked and isolated by the
 * sandbox runner this process shares.
 *
 * @example
 * import { birth } from '@metnos/sandbox/birth';
 * const executor = birth(import.meta.dirname + '/..');
 * expect(await executor.invoke({ path: 'a.txt' }, { workspace })).toMatchObject({ ok: true });
 */
export function birth(dir: string, options: BirthOptions = {}): ReturnType<typeof createBirthHarness> {
  return createBirthHarness(dir, {
    runner: sharedSandboxRunner(options),
    ...(options.trustedKeys ? { trustedKeys: options.trustedKeys } : {}),
  });
}
