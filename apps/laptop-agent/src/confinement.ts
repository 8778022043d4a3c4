import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ExecutorRunner,
  exitKind,
  expandProfile,
  HARNESS_PATH,
  harnessRequest,
  type IsolationRecord,
  RUNTIME_DIR,
  refusal,
  runChild,
  tierRank,
} from '@metnos/executor-sdk';
import { createSandboxRunner, type SandboxAuditEntry } from '@metnos/sandbox';

/** Which confinement runs remote executors: the Linux sandbox, or Node's permission model alone. */
export type Confinement = 'sandbox' | 'node-permission';

/** What this platform offers: the sandbox on Linux, the permission model elsewhere. */
export function defaultConfinement(platform: NodeJS.Platform = process.platform): Confinement {
  return platform === 'linux' ? 'sandbox' : 'node-permission';
}

/**
 * The runner for platforms without the Linux kernel layers: a child process
 * under Node's permission model, allowed to read only the runtime and the
 * profile's read folders, to write only its write folders, and to start no
 * process, worker or addon. Nothing limits its network, memory or process
 * count from outside, so it reports tier `none`, with the layer it has and a
 * note of what it lacks, and refuses a profile that needs the network or a
 * tier above `none`.
 *
 * @example
 * const runner = createPermissionRunner();
 * (await runner.run({ executor, args, context })).result.isolation; // { tier: 'none', layers: ['process', 'node-permission'], … }
 */
export function createPermissionRunner(settings: { platform?: string } = {}): ExecutorRunner {
  const platform = settings.platform ?? process.platform;
  const isolation: IsolationRecord = {
    tier: 'none',
    layers: ['process', 'node-permission'],
    notes: [
      `no kernel isolation on ${platform}: Node's permission model limits files and child processes; the network, memory and process count are not limited`,
    ],
  };
  return {
    tier: 'none',
    async run({ executor, args, context, signal }) {
      const declared = executor.manifest.sandbox;
      if (tierRank(declared.min_tier) > tierRank('none'))
        return refusal(
          'IsolationUnavailable',
          `${executor.name} requires isolation tier "${declared.min_tier}"; this laptop (${platform}) gives "none"`,
          { tier: 'none', layers: [] },
        );
      if (declared.network.mode !== 'none' || declared.exec.mode !== 'none')
        return refusal(
          'IsolationUnavailable',
          `${executor.name} needs the network or other programs, which nothing confines on ${platform}`,
          { tier: 'none', layers: [] },
        );
      const tmpDir = await mkdtemp(join(tmpdir(), 'metnos-laptop-call-'));
      try {
        const profile = expandProfile(declared, { workspace: context.workspace, tmpDir });
        const reads = await Promise.all(
          [RUNTIME_DIR, ...profile.fs.read].map((path) => realpath(path).catch(() => path)),
        );
        const writes = await Promise.all(
          [tmpDir, ...profile.fs.write].map((path) => realpath(path).catch(() => path)),
        );
        const report = await runChild({
          command: process.execPath,
          args: [
            '--permission',
            ...reads.map((path) => `--allow-fs-read=${path}`),
            ...writes.map((path) => `--allow-fs-write=${path}`),
            `--max-old-space-size=${declared.max_memory_mb}`,
            '--disable-warning=ExperimentalWarning',
            HARNESS_PATH,
          ],
          env: { HOME: tmpDir, TMPDIR: tmpDir, LANG: 'C.UTF-8' },
          cwd: tmpDir,
          input: harnessRequest(executor, args, context, { tmpDir }, profile),
          timeoutMs: declared.max_duration_ms,
          maxStdoutBytes: declared.max_output_bytes,
          maxStderrBytes: 256 * 1024,
          isolation,
          signal,
        });
        return {
          result: report.result,
          durationMs: report.durationMs,
          stdout: report.stdout,
          exit: exitKind(report),
        };
      } finally {
        await rm(tmpDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The runner for remote executors on this laptop: `@metnos/sandbox` (its
 * refusals written to `onRefusal`, not into the granted folder's audit tree),
 * or the permission runner. Either reports the tier it applied in every result.
 */
export function createLaptopRunner(settings: {
  confinement: Confinement;
  home: string;
  configDir: string;
  onRefusal: (entry: SandboxAuditEntry) => Promise<void>;
}): ExecutorRunner {
  if (settings.confinement === 'node-permission') return createPermissionRunner();
  return createSandboxRunner({
    home: settings.home,
    configDir: settings.configDir,
    audit: { append: (_workspace, entry) => settings.onRefusal(entry) },
  });
}
