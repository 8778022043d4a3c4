import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createAuditLog } from './audit.ts';
import { createCatalog } from './catalog.ts';
import type { CredentialSet } from './credentials.ts';
import type { HostServices } from './host-services.ts';
import { createInvoker } from './invoke.ts';
import type { PublicKey } from './keys.ts';
import type { ExecutorResult } from './result.ts';
import type { ExecutorRunner } from './runner.ts';
import { loadTrustedKeys } from './trust.ts';
import { verifyExecutor } from './verify.ts';

/** Options of {@link createBirthHarness}. */
export interface BirthHarnessSettings {
  /** The runner every case goes through (the sandbox runner in practice). */
  runner: ExecutorRunner;
  /** Default: the nearest `metnos.toml`'s trusted keys plus the user's trust list. */
  trustedKeys?: readonly PublicKey[];
}

/** Options of one birth-test call. */
export interface BirthCallOptions {
  /** The workspace folder for the call. Default: a fresh temp dir per harness. */
  workspace?: string;
  config?: Record<string, unknown>;
  /** Pins the executor's clock to this ISO 8601 instant (see `InvokeOptions.asOf`). */
  asOf?: string;
  /** The person's credentials by handle, host-only (see `InvokeOptions.credentials`). */
  credentials?: CredentialSet;
  /** Host services offered to the call (`http://metnos.host/<service>`), host-only. */
  hostServices?: HostServices;
}

/**
 * Runs an executor's birth tests the way Metnos runs it for real: the
 * directory is verified (signature, digests, profile lock), then every call
 * goes through the given runner with host-side validation and an audit line.
 *
 * @example
 * const executor = createBirthHarness(import.meta.dirname + '/..', { runner });
 * expect(await executor.invoke({ path: 'a.txt' }, { workspace })).toMatchObject({ ok: true });
 */
export function createBirthHarness(dir: string, settings: BirthHarnessSettings) {
  const executorDir = resolve(dir);
  let ready:
    | Promise<{
        invoke: ReturnType<typeof createInvoker>['invoke'];
        name: string;
        version: string;
        workspace: string;
      }>
    | undefined;

  async function prepare() {
    const trustedKeys = settings.trustedKeys ?? (await loadTrustedKeys(executorDir));
    const verified = await verifyExecutor(executorDir, { trustedKeys });
    const stage = await mkdtemp(join(tmpdir(), `metnos-birth-${verified.name}-`));
    // `<root>/<name>/` or `<root>/<name>/<version>/`: the catalog root is above the name folder.
    const parent = resolve(executorDir, '..');
    const versioned = basename(executorDir) === verified.version && basename(parent) === verified.name;
    const root = versioned ? resolve(parent, '..') : parent;
    const catalog = createCatalog({ root, trustedKeys, stateDir: join(stage, 'state') });
    await catalog.load();
    const workspace = join(stage, 'workspace');
    const invoker = createInvoker({ catalog, runner: settings.runner, audit: createAuditLog({ workspace }) });
    return { invoke: invoker.invoke, name: verified.name, version: verified.version, workspace };
  }

  const ensurePrepared = () => {
    if (!ready) ready = prepare();
    return ready;
  };
  return {
    /** Verifies the executor (once) and returns its name and default workspace. */
    async prepare(): Promise<{ name: string; workspace: string }> {
      const { name, workspace } = await ensurePrepared();
      return { name, workspace };
    },
    async invoke(args: unknown, options: BirthCallOptions = {}): Promise<ExecutorResult> {
      const prepared = await ensurePrepared();
      return prepared.invoke(prepared.name, args, {
        version: prepared.version,
        workspace: options.workspace ?? prepared.workspace,
        caller: { kind: 'test' },
        traceId: randomUUID(),
        config: options.config,
        ...(options.asOf !== undefined ? { asOf: options.asOf } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        ...(options.hostServices ? { hostServices: options.hostServices } : {}),
      });
    },
  };
}
