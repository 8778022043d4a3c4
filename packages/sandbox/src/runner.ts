import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { type Dirent, lstatSync, mkdirSync, readdirSync, realpathSync, rmdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  AuditError,
  type ChildReport,
  contextRefusal,
  contractSchema,
  DEFAULT_MAX_WRITE_BYTES,
  declaredHostServices,
  type ExecutorResult,
  type ExecutorRunner,
  type ExpandedProfile,
  ensureAuditTree,
  exitKind,
  expandProfile,
  failure,
  harnessCall,
  harnessPreload,
  harnessRequest,
  ISOLATION_TIERS,
  type IsolationRecord,
  type IsolationTier,
  offeredCredentials,
  offeredHostServices,
  type ProtectedPath,
  type RunReport,
  type RunRequest,
  refusal,
  resolveConfigDir,
  runChild,
  superviseChild,
  tierRank,
} from '@metnos/executor-sdk';
import { createSandboxAudit, type SandboxAudit, type SandboxAuditEntry } from './audit.ts';
import { type CallCgroup, createCallCgroup, sweepStaleCgroups } from './cgroup.ts';
import { type EgressCallParts, type EgressProxy, type Lookup, startEgressProxy } from './egress-proxy.ts';
import { SandboxError } from './errors.ts';
import { checkExecRules } from './exec-rules.ts';
import { forbiddenSet } from './forbidden.ts';
import { checkHelper } from './helper.ts';
import { type HostReport, probeHost } from './host-probe.ts';
import { createHostServiceDispatch, type HostServiceDispatch } from './host-services.ts';
import { type LaunchPlan, launchView, planLaunch } from './launch.ts';
import {
  checkArguments,
  type PolicyViolation,
  type ResolvedProfile,
  resolveProfile,
  textKeysOf,
} from './policy.ts';
import { metnosOwnPaths } from './protected.ts';
import { resolveReal } from './resolve-path.ts';
import {
  createWarmPool,
  type PoolEntry,
  type WarmPool,
  type WarmPoolSettings,
  type WarmPoolStats,
} from './warm-pool.ts';
import { startWarmProcess, type WarmProcess } from './warm-process.ts';
import { meterWrites } from './write-meter.ts';

/**
 * Manifest capabilities that only the full tier may run, whatever the profile's `min_tier`.
 *
 * @example
 * FULL_TIER_CAPABILITIES.includes('code:exec'); // true
 */
export const FULL_TIER_CAPABILITIES = ['code:exec'] as const;

/** Settings of {@link createSandboxRunner}: host-wide things, never per workspace. */
export interface SandboxRunnerSettings {
  /**
   * The strongest tier to apply (default `full`). The runner applies the
   * weaker of this and what the host supports; calls whose profile demands
   * more are refused with `IsolationUnavailable`.
   */
  tier?: IsolationTier;
  /** Where refusals are written. Default: `<workspace>/.audit/sandbox/*.jsonl`. `false` writes nothing. */
  audit?: SandboxAudit | false;
  /**
   * Operator-configured egress targets for allow-listed domains, e.g.
   * `{ 'api.telegram.org': '127.0.0.1:8081' }` for tests against loopback
   * servers. Profiles can never set these.
   */
  hostOverrides?: Readonly<Record<string, string>>;
  /** The cgroup filesystem root (default `/sys/fs/cgroup`); `false` never uses cgroups. */
  cgroupRoot?: string | false;
  /** Folder for the compiled helper. Default `~/.cache/metnos/sandbox` (or a per-uid temp folder). */
  helperCacheDir?: string;
  /** The Node binary for executors. Default: the current one. */
  nodePath?: string;
  /** The user's home, for `$HOME`, `~` and the secrets under it. Default: `os.homedir()`. */
  home?: string;
  /** Where per-call temp folders are made. Default: `os.tmpdir()`. */
  tmpRoot?: string;
  /** Caps beside the profile's own: processes (64), open files (256), bytes per written file (1 GiB). */
  limits?: { processes?: number; openFiles?: number; fileBytes?: number };
  /** Folders searched for `bwrap` and allow-listed binaries. Default: /usr/local/bin, /usr/bin, /bin. */
  binarySearchPath?: readonly string[];
  /** DNS for the egress proxy (tests). */
  lookup?: Lookup;
  /**
   * The Metnos config dir (keys, trust list, the helper's seal secret): masked
   * from every executor like a home's `.ssh`. Default: `resolveConfigDir()`.
   */
  configDir?: string;
  /**
   * Host paths no executor may write, beside Metnos's own (its code, the Node
   * runtime, the helper, the state and data folders) and those a call brings
   * (`context.protect`: the catalog's folders, trust lists, `metnos.toml`).
   */
  protect?: readonly ProtectedPath[];
  /** Bytes a call may write when its profile sets no `max_write_bytes` (default 32 MiB). */
  maxWriteBytes?: number;
  /**
   * The warm pool (tiers standard and full): per executor in use, processes
   * started ahead of their call with its exact profile, each handed one call
   * and gone after it. `true` for the defaults of {@link WarmPoolSettings};
   * default off.
   */
  pool?: boolean | WarmPoolSettings;
}

/** The sandbox runner: an {@link ExecutorRunner} plus what it found on the host. */
export interface SandboxRunner extends ExecutorRunner {
  /** The probe behind this runner's tier. */
  readonly host: HostReport;
  /**
   * Checks an executor's declared profile against the current rules for a
   * workspace, without running anything: the refusal a call would get, or
   * undefined. `metnos doctor` lists the catalog's refused profiles with it.
   */
  checkProfile(
    executor: RunRequest['executor'],
    place: { workspace: string; protect?: readonly ProtectedPath[] },
  ): PolicyViolation | undefined;
  /** The warm pool's counts, or undefined without a pool. */
  poolStats(): WarmPoolStats | undefined;
  /** Ends the warm processes; calls after it start cold. Safe to call more than once. */
  close(): void;
}

/** How long after a call the next warm process of its key starts to be set up. */
const SETUP_DELAY_MS = 25;

/** The `args` of a warm process's policy check: it has no call yet, so no arguments to check. */
const NO_ARGUMENTS = Symbol('no arguments yet');

/** A call's profile as the policy check left it. */
interface CallPolicy {
  credentials: ReturnType<typeof offeredCredentials>;
  expanded: ExpandedProfile;
  profile: ResolvedProfile;
  forbidden: ReturnType<typeof forbiddenSet>;
}

/** What one process was given around it: its $TMP, proxy, cgroups, command line. */
interface Launch {
  tmpDir: string;
  tmpCreated?: boolean;
  netDir?: string;
  proxy?: EgressProxy;
  hostServices?: HostServiceDispatch;
  cgroup?: CallCgroup;
  callEnded: AbortController;
  plan: LaunchPlan;
  notes: string[];
  withServices: boolean;
  isolation: IsolationRecord;
  cleanup(): Promise<void>;
}

/** A warm process of the pool with what it was set up from. */
interface WarmEntry extends PoolEntry {
  key: string;
  name: string;
  version: string;
  digests: RunRequest['executor']['digests'];
  tmpDir: string;
  /** Identity (device:inode) of each host path its view was built from, when it started. */
  identities: Map<string, string>;
  policy: CallPolicy | undefined;
  launch: Launch | undefined;
  process: WarmProcess | undefined;
  /** Synchronous cleanup, for the host's exit. */
  discardNow(): void;
}

/** Whether a profile lists the call's `$TMP` (then it is bound read-write, after the masks). */
function grantsTmp(declared: RunRequest['executor']['manifest']['sandbox']): boolean {
  return declared.fs.read.concat(declared.fs.write).some((entry) => /^\$TMP(\/|$)/.test(entry));
}

/** Removes a call's folder: at once when it is empty (the common case), else in the background pool. */
async function removeFolder(dir: string): Promise<void> {
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') await rm(dir, { recursive: true, force: true });
  }
}

function identityOf(path: string): string {
  const info = lstatSync(path, { throwIfNoEntry: false });
  return info ? `${info.dev}:${info.ino}:${info.mode}` : 'missing';
}

/** Tells the outer helper the call begins (it meters at full rate from now); false if it is gone. */
function signalCall(plan: LaunchPlan, child: ChildProcess): boolean {
  if (!plan.callSignal || child.pid === undefined) return plan.callSignal === undefined;
  try {
    process.kill(child.pid, plan.callSignal);
    return true;
  } catch {
    return false;
  }
}

/** Warm processes of every runner in this process, ended when it exits. */
const liveEntries = new Set<WarmEntry>();
let exitHookInstalled = false;

const STDERR_CAP = 256 * 1024;

/** What V8, Node and libc print when an allocation fails under a limit. */
const OUT_OF_MEMORY =
  /heap out of memory|Reached heap limit|Fatal process out of memory|Failed to allocate memory|Array buffer allocation failed|ERR_MEMORY_ALLOCATION_FAILED|Cannot allocate memory|std::bad_alloc/i;

function validateSettings(settings: SandboxRunnerSettings): void {
  if (settings.tier !== undefined && !ISOLATION_TIERS.includes(settings.tier)) {
    throw new SandboxError({ setting: 'tier', message: `tier must be one of ${ISOLATION_TIERS.join(', ')}` });
  }
  for (const [domain, target] of Object.entries(settings.hostOverrides ?? {})) {
    if (!/^[a-z0-9.-]+$/.test(domain) || !/^(\[[0-9a-f:]+\]|[a-z0-9.-]+):\d{1,5}$/i.test(target)) {
      throw new SandboxError({
        setting: 'hostOverrides',
        message: `hostOverrides["${domain}"] = "${target}": expected a lowercase domain mapped to "host:port"`,
      });
    }
  }
}

/**
 * Why a file of the Metnos config dir (keys, trust list, secrets) has more than
 * one hard link, or undefined. Checked before every call: the other name could
 * sit in a folder an executor may read, and no walk of that folder is needed.
 */
function secondNames(configDir: string): string | undefined {
  const pending = [configDir];
  let budget = 256;
  while (pending.length > 0 && budget-- > 0) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) {
        const links = lstatSync(path, { throwIfNoEntry: false })?.nlink ?? 1;
        if (links > 1)
          return `${path} has ${links} hard links: another name of a Metnos secret exists somewhere; find it with \`find / -samefile ${path}\`, remove it, then run again`;
      }
    }
  }
  return undefined;
}

/** Who a call's host services are told is calling. */
function callOf(context: RunRequest['context']) {
  return {
    traceId: context.traceId,
    ...(context.turnId ? { turnId: context.turnId } : {}),
    caller: context.caller,
  };
}

/** Turns kernel-limit deaths into `ResourceLimit` with the limit named. */
function classify(report: ChildReport, cgroup: CallCgroup | undefined, memoryMb: number): ExecutorResult {
  const result = report.result;
  // the outer helper's write meter: its verdict stands even over a result the executor wrote first
  const quota = /metnos-jail: write quota exceeded: (\d+) bytes written, (\d+) allowed/.exec(report.stderr);
  if (quota && report.exitCode === 124) {
    return failure(
      'ResourceLimit',
      `the executor wrote ${quota[1]} bytes, more than its ${quota[2]} bytes (max_write_bytes), and was stopped`,
      { isolation: result.isolation },
    );
  }
  if (result.ok || result.error.class !== 'Crashed') return result;
  const isolation = result.isolation;
  const evidence = `${report.stderr}\n${result.error.message}`;
  if (cgroup?.oomKilled() || OUT_OF_MEMORY.test(evidence)) {
    return failure(
      'ResourceLimit',
      `the executor ran out of its ${memoryMb} MB memory limit and was stopped`,
      { isolation },
    );
  }
  const code = report.exitCode ?? 0;
  const swapped = /metnos-jail: (.*) changed after the policy check.*/.exec(report.stderr);
  if (code === 126 && swapped) {
    return failure('PolicyViolation', swapped[0].replace('metnos-jail: ', ''), {
      isolation,
      metadata: { rule: 'path-changed' },
    });
  }
  if (report.exitSignal === 'SIGXCPU' || code === 128 + 24) {
    return failure('ResourceLimit', 'the executor used up its CPU time limit and was stopped', { isolation });
  }
  // Node ignores SIGXFSZ, so a write past the file-size limit (max_write_bytes) throws EFBIG instead
  if (report.exitSignal === 'SIGXFSZ' || code === 128 + 25 || /\bEFBIG\b/.test(evidence)) {
    return failure('ResourceLimit', 'the executor wrote a file larger than the file-size limit', {
      isolation,
    });
  }
  return result;
}

/**
 * Creates the runner every executor call goes through: policy check first
 * (arguments against the declared profile and the core forbidden paths; a
 * violation starts nothing), then the strongest isolation the host allows,
 * up to `settings.tier`, around the SDK's own child-process path
 * (`runChild` + `harnessRequest`). Every result carries an isolation record
 * naming the layers applied.
 *
 * @example
 * const runner = createSandboxRunner({ hostOverrides: { 'api.telegram.org': '127.0.0.1:8081' } });
 * const invoker = createInvoker({ catalog, runner, audit });
 * const result = await invoker.invoke('fs_read', { path: 'notes.md' }, { workspace, caller: { kind: 'cli' } });
 */
export function createSandboxRunner(settings: SandboxRunnerSettings = {}): SandboxRunner {
  validateSettings(settings);
  const host = probeHost({
    nodePath: settings.nodePath,
    helperCacheDir: settings.helperCacheDir,
    cgroupRoot: settings.cgroupRoot,
    binarySearchPath: settings.binarySearchPath,
    // the helper's seal secret lives in the config dir this runner masks, not in a default one
    configDir: settings.configDir,
  });
  if (host.cgroups) sweepStaleCgroups(host.cgroups);
  const ceiling = settings.tier ?? 'full';
  const tier: IsolationTier = tierRank(host.strongest) < tierRank(ceiling) ? host.strongest : ceiling;
  const audit = settings.audit === false ? undefined : (settings.audit ?? createSandboxAudit());
  const home = resolve(settings.home ?? homedir());
  const homes = [...new Set([home, '/root'])];
  const configDir = resolve(resolveConfigDir(settings.configDir));
  // Real form: the calls folder is masked and pinned by its real path, so a symlinked temp
  // folder (TMPDIR=/tmp-link) would leave it visible and fail every call that grants $TMP.
  const tmpRoot = resolveReal(resolve(settings.tmpRoot ?? tmpdir())).real;
  // Every call's $TMP lives in one folder of this user's, so a profile that reads the shared
  // temp folder finds it masked and cannot reach another call's files.
  const callsRoot = join(tmpRoot, `metnos-calls-${process.getuid?.() ?? 0}`);
  const ownPaths = [
    ...metnosOwnPaths({
      home,
      helperPath: host.helperPath,
      nodePath: host.nodePath,
      outside: [host.bwrapPath, ...host.nodeLibraries],
    }),
    ...(settings.protect ?? []),
  ];
  const defaultWriteBytes = settings.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  const limits = {
    processes: settings.limits?.processes ?? 64,
    openFiles: settings.limits?.openFiles ?? 256,
    fileBytes: settings.limits?.fileBytes ?? 1024 * 1024 * 1024,
  };
  const binarySearchPath = settings.binarySearchPath ?? ['/usr/local/bin', '/usr/bin', '/bin'];
  const poolSettings: WarmPoolSettings | undefined =
    settings.pool === true ? {} : settings.pool === false ? undefined : settings.pool;
  const pool: WarmPool<WarmEntry> | undefined = poolSettings ? createWarmPool(poolSettings) : undefined;
  if (pool && !exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const entry of [...liveEntries]) entry.discardNow();
    });
  }

  /** The forbidden and protected set of one call: its workspace, its own $TMP, what it brings. */
  function callForbidden(workspace: string, tmpDir: string, protect: readonly ProtectedPath[] = []) {
    return forbiddenSet({
      homes,
      workspace,
      secrets: [configDir],
      protect: [...ownPaths, ...protect],
      calls: { root: callsRoot, own: tmpDir },
    });
  }

  async function refuseCall(
    request: RunRequest,
    errorClass: 'PolicyViolation' | 'IsolationUnavailable',
    message: string,
    violation?: PolicyViolation,
  ): Promise<RunReport> {
    const workspace = request.context.workspace;
    const entry: SandboxAuditEntry = {
      ts: new Date().toISOString(),
      trace_id: request.context.traceId,
      executor: request.executor.name,
      version: request.executor.version,
      event: errorClass === 'PolicyViolation' ? 'policy_violation' : 'isolation_unavailable',
      error_class: errorClass,
      ...(violation
        ? { rule: violation.rule, where: violation.where, value: violation.value, real: violation.real }
        : {}),
      message,
    };
    try {
      await audit?.append(workspace, entry);
    } catch {
      // the invoker's own audit line still records the refusal
    }
    const report = refusal(errorClass, message, { tier, layers: [] });
    if (violation && !report.result.ok) {
      report.result.metadata = {
        rule: violation.rule,
        where: violation.where,
        ...(violation.real ? { real: violation.real } : {}),
      };
    }
    return report;
  }

  /** The checks every call passes before anything is set up; the call's real workspace, or a refusal. */
  async function admit(request: RunRequest): Promise<RunReport | { workspace: string }> {
    const { executor, context } = request;
    // an asOf the harness could not pin the clock to: refused before anything is set up
    const badContext = contextRefusal(context, { tier, layers: [] });
    if (badContext) return badContext;
    const declared = executor.manifest.sandbox;
    if (tierRank(declared.min_tier) > tierRank(tier)) {
      const missing =
        tierRank(declared.min_tier) > tierRank(host.strongest)
          ? host.tiers[declared.min_tier].missing.join('; ')
          : `this runner is capped at tier "${ceiling}" by its settings`;
      return refuseCall(
        request,
        'IsolationUnavailable',
        `${executor.name} requires isolation tier "${declared.min_tier}"; this host applies "${tier}": missing ${missing}`,
      );
    }
    const needsFull = executor.manifest.executor.capabilities.filter((capability) =>
      (FULL_TIER_CAPABILITIES as readonly string[]).includes(capability),
    );
    if (needsFull.length > 0 && tier !== 'full') {
      return refuseCall(
        request,
        'IsolationUnavailable',
        `${executor.name} has capability ${needsFull.join(', ')}, which runs only at tier "full"; this host applies "${tier}"`,
      );
    }
    // The workspace is resolved once, to its real path, and used in that form everywhere
    // (profile, arguments, binds, the executor's context); a missing one is created.
    // (synchronous: a few syscalls before every call cost less than their thread hops)
    let workspace: string;
    try {
      mkdirSync(resolve(context.workspace), { recursive: true, mode: 0o700 });
      workspace = realpathSync(resolve(context.workspace));
    } catch (error) {
      return refusal(
        'PolicyViolation',
        `the workspace ${context.workspace} cannot be used: ${(error as Error).message}`,
        {
          tier,
          layers: [],
        },
      );
    }
    // Fail closed: the audit tree exists (and is masked) before the first executor runs.
    try {
      await ensureAuditTree(workspace);
    } catch (error) {
      const message = AuditError.isInstance(error) ? error.message : String(error);
      return refusal('AuditUnavailable', `${executor.name} was not run: ${message}`, { tier, layers: [] });
    }
    // Metnos's own secrets must have one name: a second one, anywhere, could sit in a granted folder.
    const linked = secondNames(configDir);
    if (linked) return refuseCall(request, 'IsolationUnavailable', linked);
    const helperProblem = helperRefusal();
    if (helperProblem) return refuseCall(request, 'IsolationUnavailable', helperProblem);
    try {
      try {
        mkdirSync(callsRoot, { mode: 0o700 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const info = lstatSync(callsRoot);
      if (!info.isDirectory() || info.uid !== (process.getuid?.() ?? 0) || (info.mode & 0o077) !== 0)
        throw new Error('it is not a private folder of this user');
    } catch (error) {
      return refuseCall(
        request,
        'IsolationUnavailable',
        `${callsRoot} cannot hold private temp folders: ${(error as Error).message}`,
      );
    }
    return { workspace };
  }

  /** Never run a helper that is not the one built here: checked right before each use. */
  function helperRefusal(): string | undefined {
    if (tierRank(tier) < tierRank('basic')) return undefined;
    const problem = checkHelper(host.helperPath!, host.helperDigest!);
    return problem ? `${problem}; nothing runs until it is rebuilt (run \`metnos doctor\`)` : undefined;
  }

  /**
   * The call's profile against the rules: the declared profile expanded for this
   * workspace and $TMP, resolved against the forbidden set, the exec rules, and
   * (unless `args` is {@link NO_ARGUMENTS}, for a warm process that has no call yet)
   * the arguments.
   */
  async function policyFor(
    request: Pick<RunRequest, 'executor' | 'context'> & { args: unknown },
    workspace: string,
    tmpDir: string,
  ): Promise<RunReport | CallPolicy> {
    const { executor, context, args } = request;
    // a warm process's check has no call to refuse: it is simply not started
    const refuse: typeof refuseCall =
      args === NO_ARGUMENTS
        ? async (_request, errorClass, message) => refusal(errorClass, message, { tier, layers: [] })
        : refuseCall;
    const declared = executor.manifest.sandbox;
    const forbidden = callForbidden(workspace, tmpDir, context.protect);
    // the handles this call may log in with: declared (secret:<handle>) AND configured; their
    // servers replace the profile's $CREDENTIAL:<handle> entries, the secrets stay in this process
    const credentials = offeredCredentials(executor.manifest.executor.capabilities, context.credentials);
    const expanded = expandProfile(declared, { workspace, tmpDir, home, credentials });
    const profile = resolveProfile(expanded, forbidden, { home, tmpRoot });
    const asRequest = request as RunRequest;
    if ('rule' in profile)
      return refuse(asRequest, 'PolicyViolation', `${executor.name}: ${profile.message}`, profile);
    const badExec = checkExecRules({
      exec: declared.exec,
      read: profile.read,
      write: profile.write,
      binarySearchPath,
    });
    if (badExec) return refuse(asRequest, 'PolicyViolation', `${executor.name}: ${badExec.message}`, badExec);
    if (args !== NO_ARGUMENTS) {
      const violation = checkArguments(args, {
        profile,
        forbidden,
        workspace,
        home,
        textKeys: textKeysOf(contractSchema(executor, 'input')),
        hardlinks: declared.fs.hardlinks === true,
      });
      if (violation)
        return refuse(asRequest, 'PolicyViolation', `${executor.name}: ${violation.message}`, violation);
    }
    return { credentials, expanded, profile, forbidden };
  }

  /**
   * Sets up everything around one process: its $TMP, the egress proxy (for a
   * warm process, listening but refusing until its call attaches), the
   * cgroups, and the command line. `cleanup` removes all of it.
   */
  async function launchFor(
    request: Pick<RunRequest, 'executor' | 'context'>,
    tmpDir: string,
    policy: CallPolicy,
    warm: boolean,
  ): Promise<Launch> {
    const launch: Launch = {
      tmpDir,
      callEnded: new AbortController(),
      notes: [],
      withServices: false,
      isolation: { tier, layers: [] },
      plan: undefined as unknown as LaunchPlan,
      async cleanup() {
        // the pid namespace is gone with bwrap; the cgroup folders go away in the background
        // (rmdir waits for the kernel to finish reaping), so the caller does not wait for it
        if (launch.cgroup) void launch.cgroup.destroy();
        launch.callEnded.abort();
        await launch.proxy?.close();
        await Promise.all([
          launch.tmpCreated ? removeFolder(tmpDir) : undefined,
          launch.netDir ? removeFolder(launch.netDir) : undefined,
        ]);
      },
    };
    try {
      await setUpLaunch(launch, request, policy, warm);
      return launch;
    } catch (error) {
      await launch.cleanup();
      throw error;
    }
  }

  async function setUpLaunch(
    launch: Launch,
    request: Pick<RunRequest, 'executor' | 'context'>,
    policy: CallPolicy,
    warm: boolean,
  ): Promise<void> {
    const { executor, context } = request;
    const declared = executor.manifest.sandbox;
    const tmpDir = launch.tmpDir;
    await mkdir(tmpDir, { mode: 0o700 });
    launch.tmpCreated = true;
    const { profile, credentials } = policy;
    const standardOrMore = tierRank(tier) >= tierRank('standard');
    // host services (metnos.host): what the manifest declares AND the host provides for this call;
    // the proxy runs for them even when the profile has no network, and then reaches nothing else
    const offered = offeredHostServices(executor.manifest.executor.capabilities, context.hostServices);
    launch.withServices = Object.keys(offered).length > 0;
    const withNetwork = declared.network.mode === 'allowlist' && profile.domains.length > 0;
    if (standardOrMore && (withNetwork || launch.withServices)) {
      // a warm process's proxy gets its call's parts when the call comes
      const parts = warm ? undefined : callParts(request, launch, credentials);
      launch.hostServices = parts?.hostServices;
      launch.netDir = await mkdtemp(join(callsRoot, 'net-'));
      launch.proxy = await startEgressProxy({
        socketPath: join(launch.netDir, 'proxy.sock'),
        rules: withNetwork ? profile.domains : [],
        hostOverrides: settings.hostOverrides,
        lookup: settings.lookup,
        waitForCall: warm,
        ...(parts ?? {}),
      });
    }
    // pids and memory cgroups from the standard tier up: as root the sandbox's uid maps to 0,
    // which RLIMIT_NPROC does not count, so the cgroup is what stops a fork bomb there
    if (standardOrMore && host.cgroups) {
      launch.cgroup = createCallCgroup(host.cgroups, `call-${randomUUID()}`, {
        memoryBytes: declared.max_memory_mb * 1024 * 1024,
        pids: limits.processes,
      });
    }
    const tmpGranted = grantsTmp(declared);
    const writeBytes = declared.max_write_bytes ?? defaultWriteBytes;
    launch.plan = planLaunch({
      tier,
      host,
      profile,
      exec: declared.exec,
      network: declared.network.mode,
      maxDurationMs: declared.max_duration_ms,
      maxMemoryMb: declared.max_memory_mb,
      forbidden: policy.forbidden,
      tmpDir,
      tmpGranted,
      proxySocket: launch.proxy?.socketPath,
      cgroupProcs: launch.cgroup?.procsFiles,
      limits: { ...limits, fileBytes: Math.min(limits.fileBytes, writeBytes) },
      binarySearchPath,
      writeBytes,
      warm,
    });
    // runChild keeps this record by reference, so the proxy's refusals added below reach the result
    launch.notes = [...launch.plan.notes];
    if (launch.proxy && withNetwork)
      launch.notes.push(`network: only ${declared.network.domains.join(', ')} through the egress proxy`);
    if (launch.withServices)
      launch.notes.push(`host services: ${Object.keys(offered).join(', ')} at http://metnos.host`);
    launch.isolation = { tier, layers: launch.plan.layers, notes: launch.notes };
  }

  /** The parts of a proxy that belong to one call: its credentials and its host-service dispatch. */
  function callParts(
    request: Pick<RunRequest, 'executor' | 'context'>,
    launch: Launch,
    credentials: CallPolicy['credentials'],
  ): EgressCallParts {
    const { executor, context } = request;
    const capabilities = executor.manifest.executor.capabilities;
    return {
      credentials,
      hostServices: createHostServiceDispatch({
        declared: declaredHostServices(capabilities),
        offered: offeredHostServices(capabilities, context.hostServices),
        call: { executor: { name: executor.name, version: executor.version }, ...callOf(context) },
        signal: launch.callEnded.signal,
      }),
    };
  }

  /** Runs the call in `launch`'s process (a warm one when `warm` is given) and makes its report. */
  async function runIn(
    request: RunRequest,
    workspace: string,
    policy: CallPolicy,
    launch: Launch,
    warm?: ChildProcess,
  ): Promise<RunReport> {
    const { executor, args, context, signal } = request;
    const declared = executor.manifest.sandbox;
    const places = {
      tmpDir: launch.tmpDir,
      workspace,
      credentials: launch.proxy ? policy.credentials : {},
    };
    const writeBytes = declared.max_write_bytes ?? defaultWriteBytes;
    const supervised = {
      timeoutMs: declared.max_duration_ms,
      maxStdoutBytes: declared.max_output_bytes,
      maxStderrBytes: STDERR_CAP,
      isolation: launch.isolation,
      signal,
      watch: tierRank(tier) >= tierRank('basic') ? meterWrites(writeBytes, host.helperPath) : undefined,
    };
    const report = warm
      ? await superviseChild(warm, {
          ...supervised,
          input: `${JSON.stringify(harnessCall(executor, args, context, places, policy.expanded))}\n`,
        })
      : await runChild({
          ...supervised,
          command: launch.plan.command,
          args: launch.plan.args,
          env: launch.plan.env,
          cwd: launch.plan.cwd,
          input: harnessRequest(executor, args, context, places, policy.expanded),
        });
    const { proxy, notes } = launch;
    if (proxy && proxy.refusals.length > 0)
      notes.push(...proxy.refusals.slice(0, 8).map((line) => `egress ${line}`));
    if (proxy) notes.push(...proxy.credentialUses.slice(0, 8).map((line) => `egress ${line}`));
    if (launch.hostServices) notes.push(...launch.hostServices.log.slice(0, 8));
    const result = classify(report, launch.cgroup, declared.max_memory_mb);
    const exit = result === report.result ? exitKind(report) : 'crash';
    return { result, durationMs: report.durationMs, stdout: report.stdout, exit };
  }

  /** A cold start: everything set up for this call, the process started now. */
  async function runCold(request: RunRequest, workspace: string): Promise<RunReport> {
    // named now (the profile's $TMP expands to it), created only once the call passes the policy check
    const tmpDir = join(callsRoot, `call-${randomUUID()}`);
    const policy = await policyFor(request, workspace, tmpDir);
    if ('result' in policy) return policy;
    let launch: Launch | undefined;
    try {
      launch = await launchFor(request, tmpDir, policy, false);
      return await runIn(request, workspace, policy, launch);
    } finally {
      if (launch) await launch.cleanup();
      else await rm(tmpDir, { recursive: true, force: true });
    }
  }

  /** The pool's key of a call: everything a warm process was set up from, but the call itself. */
  function poolKeyOf(request: RunRequest, workspace: string): string {
    const { executor, context } = request;
    const capabilities = executor.manifest.executor.capabilities;
    const credentials = offeredCredentials(capabilities, context.credentials);
    const expanded = expandProfile(executor.manifest.sandbox, {
      workspace,
      tmpDir: join(callsRoot, 'call-warm'),
      home,
      credentials,
    });
    return createHash('sha256')
      .update(
        JSON.stringify([
          tier,
          executor.name,
          executor.version,
          executor.digests,
          executor.keyId,
          executor.signature,
          workspace,
          context.protect ?? [],
          expanded,
          Object.keys(offeredHostServices(capabilities, context.hostServices)).sort(),
        ]),
      )
      .digest('hex');
  }

  /** Starts a warm process for calls like `request` (same key); returns at once, ready later. */
  function startWarm(request: RunRequest, workspace: string, key: string): WarmEntry {
    const { executor } = request;
    const template = { executor, context: request.context, args: NO_ARGUMENTS };
    const tmpDir = join(callsRoot, `call-${randomUUID()}`);
    let discarded = false;
    let launch: Launch | undefined;
    let warmProcess: WarmProcess | undefined;
    const ended: Array<() => void> = [];
    let settled = false;
    let released = false;
    let hurry: () => void = () => undefined;
    const release = () => {
      if (released) return;
      released = true;
      if (launch) void launch.cleanup();
      else void rm(tmpDir, { recursive: true, force: true });
    };
    async function setUp(): Promise<boolean> {
      const policy = await policyFor(template, workspace, tmpDir);
      if ('result' in policy || discarded || helperRefusal()) return false;
      entry.policy = policy;
      launch = await launchFor(template, tmpDir, policy, true);
      entry.launch = launch;
      if (discarded) return false;
      for (const path of launch.plan.watched) entry.identities.set(path, identityOf(path));
      warmProcess = startWarmProcess({
        command: launch.plan.command,
        args: launch.plan.args,
        env: launch.plan.env,
        cwd: launch.plan.cwd,
        preload: JSON.stringify(harnessPreload(executor, { warm: true })),
      });
      entry.process = warmProcess;
      warmProcess.child.once('exit', () => {
        for (const listener of ended) listener();
      });
      if (discarded) warmProcess.kill();
      // the view was built from these: they must not have changed while it was built
      return (await warmProcess.ready) && !discarded && identitiesHold(entry);
    }
    const entry: WarmEntry = {
      key,
      name: executor.name,
      version: executor.version,
      digests: executor.digests,
      memoryMb: executor.manifest.sandbox.max_memory_mb,
      tmpDir,
      identities: new Map(),
      policy: undefined,
      launch: undefined,
      process: undefined,
      // set up once the entry exists (the setup refers to it), a moment after the caller's
      // turn: starting a process blocks this thread for milliseconds (fork), which would land
      // on the audit line and receipt of the call that just ended; a call that takes it first
      // hurries it
      ready: new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SETUP_DELAY_MS);
        timer.unref();
        hurry = () => {
          clearTimeout(timer);
          resolve();
        };
      })
        .then(setUp)
        .catch(() => false)
        .then((ok) => {
          settled = true;
          if (ok && !discarded) return true;
          entry.discard();
          return false;
        }),
      hurry: () => hurry(),
      alive: () => !discarded && (warmProcess === undefined || warmProcess.alive()),
      waiting: () => !discarded && warmProcess !== undefined && warmProcess.waiting(),
      processes: () => launch?.cgroup?.processes() ?? 5,
      onEnded: (listener) => ended.push(listener),
      discard() {
        discarded = true;
        liveEntries.delete(entry);
        warmProcess?.kill();
        // while it is being set up, the setup's end cleans up what it made
        if (settled) release();
      },
      discardNow() {
        discarded = true;
        liveEntries.delete(entry);
        warmProcess?.kill();
        for (const dir of [tmpDir, launch?.netDir]) if (dir) rmSync(dir, { recursive: true, force: true });
      },
    };
    liveEntries.add(entry);
    return entry;
  }

  /** True while every path the warm process's view was built from is still the same file. */
  function identitiesHold(entry: WarmEntry): boolean {
    for (const [path, identity] of entry.identities) if (identityOf(path) !== identity) return false;
    return true;
  }

  /**
   * A call through the pool: a warm process with the call's key, checked once
   * more against the rules as they are now, given its call's parts and the
   * call. Undefined when no warm process can take it (start cold instead).
   */
  async function runWarm(
    request: RunRequest,
    workspace: string,
    key: string,
  ): Promise<RunReport | undefined> {
    const found = await pool!.take(key);
    if (!found) return undefined;
    const { executor } = request;
    // the key says so already; a process for another version or other bytes is never handed a call
    const same =
      found.name === executor.name &&
      found.version === executor.version &&
      JSON.stringify(found.digests) === JSON.stringify(executor.digests);
    const policy = same ? await policyFor(request, workspace, found.tmpDir) : undefined;
    if (policy && 'result' in policy) {
      // refused before anything of the call reached the process; the next call gets a fresh one
      found.discard();
      return policy;
    }
    const launch = found.launch;
    const child = found.process;
    if (
      !policy ||
      !launch ||
      !child ||
      !found.policy ||
      JSON.stringify(policy.profile) !== JSON.stringify(found.policy.profile) ||
      !identitiesHold(found) ||
      // the masks and binds a cold start would make now (a .ssh created since in a granted home)
      JSON.stringify(
        launchView(policy.profile, policy.forbidden, found.tmpDir, grantsTmp(executor.manifest.sandbox)),
      ) !== launch.plan.view
    ) {
      found.discard();
      return undefined;
    }
    const taken = child.take();
    if (!taken || !signalCall(launch.plan, taken)) {
      found.discard();
      return undefined;
    }
    // from here the process is this call's: it never goes back to the pool
    liveEntries.delete(found);
    launch.notes.push('started ahead of its call (warm pool); one process, one call');
    try {
      if (launch.proxy) {
        const parts = callParts(request, launch, policy.credentials);
        launch.hostServices = parts.hostServices;
        launch.proxy.attach(parts);
      }
      return await runIn(request, workspace, policy, launch, taken);
    } finally {
      await launch.cleanup();
    }
  }

  async function run(request: RunRequest): Promise<RunReport> {
    const admitted = await admit(request);
    if ('result' in admitted) return admitted;
    const { workspace } = admitted;
    if (!pool || tierRank(tier) < tierRank('standard')) return runCold(request, workspace);
    const key = poolKeyOf(request, workspace);
    const want = () =>
      pool!.want(
        key,
        () => startWarm(request, workspace, key),
        request.executor.manifest.sandbox.max_memory_mb,
      );
    // `wait`: this call's own process is started now, through the pool, and nothing is kept after
    if (poolSettings?.onEmpty === 'wait') {
      want();
      return (await runWarm(request, workspace, key)) ?? (await runCold(request, workspace));
    }
    try {
      return (await runWarm(request, workspace, key)) ?? (await runCold(request, workspace));
    } finally {
      // the next call's process: registered now (a call right after this one waits for it),
      // set up once this one has returned, so it does not slow it down
      want();
    }
  }

  function checkProfile(
    executor: RunRequest['executor'],
    place: { workspace: string; protect?: readonly ProtectedPath[] },
  ): PolicyViolation | undefined {
    const workspace = resolve(place.workspace);
    const tmpDir = join(callsRoot, 'call-doctor');
    const forbidden = callForbidden(workspace, tmpDir, place.protect);
    const expanded = expandProfile(executor.manifest.sandbox, { workspace, tmpDir, home });
    const profile = resolveProfile(expanded, forbidden, { home, tmpRoot });
    if ('rule' in profile) return profile;
    return checkExecRules({
      exec: executor.manifest.sandbox.exec,
      read: profile.read,
      write: profile.write,
      binarySearchPath,
    });
  }

  return {
    tier,
    host,
    run,
    checkProfile,
    poolStats: () => pool?.stats(),
    close: () => pool?.close(),
  };
}
