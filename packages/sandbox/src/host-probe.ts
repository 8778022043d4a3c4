import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { release } from 'node:os';
import { ISOLATION_TIERS, type IsolationTier } from '@metnos/executor-sdk';
import { BWRAP_ISOLATION_FLAGS } from './bwrap-flags.ts';
import { type CgroupLayout, detectCgroups } from './cgroup.ts';
import { defaultHelperCacheDir, ensureHelper } from './helper.ts';

/** One isolation layer as found on this host. */
export interface LayerReport {
  available: boolean;
  /** What was found (`landlock ABI 7`, `bubblewrap 0.8.0`). */
  detail: string;
  /** The command or setting that would make it available. */
  fix?: string;
}

/** Layer names reported by {@link probeHost}. */
export type LayerName =
  | 'helper'
  | 'rlimits'
  | 'nodePermission'
  | 'bubblewrap'
  | 'seccomp'
  | 'landlock'
  | 'landlockNetwork'
  | 'cgroup'
  | 'egressProxy';

/** What this host supports, layer by layer and tier by tier. */
export interface HostReport {
  platform: NodeJS.Platform;
  kernel: string;
  uid: number;
  nodePath: string;
  nodeVersion: string;
  /** Shared libraries of the Node binary (bound read-only into the sandbox). */
  nodeLibraries: string[];
  bwrapPath: string | undefined;
  helperPath: string | undefined;
  /** sha256 of the helper as built or sealed: {@link checkHelper} compares it before every call. */
  helperDigest: string | undefined;
  landlockAbi: number;
  cgroups: CgroupLayout | undefined;
  layers: Record<LayerName, LayerReport>;
  /** Per tier: whether it can be applied and, if not, what is missing. */
  tiers: Record<IsolationTier, { available: boolean; missing: string[] }>;
  /** The strongest tier this host can apply. */
  strongest: IsolationTier;
}

/** Settings of {@link probeHost}. */
export interface ProbeSettings {
  /** Node binary used for executors. Default: the current one. */
  nodePath?: string;
  /** Folder for the compiled helper. Default: {@link defaultHelperCacheDir}. */
  helperCacheDir?: string;
  /** The cgroup filesystem root. Default `/sys/fs/cgroup`; `false` disables cgroups. */
  cgroupRoot?: string | false;
  /** Where to look for `bwrap`. Default: /usr/bin, /usr/local/bin, /bin. */
  binarySearchPath?: readonly string[];
  /** The Metnos config dir holding the helper's seal secret. Default: `resolveConfigDir()`. */
  configDir?: string;
}

const TIER_LAYERS: Record<IsolationTier, LayerName[]> = {
  none: [],
  basic: ['helper', 'rlimits', 'nodePermission'],
  standard: ['helper', 'rlimits', 'nodePermission', 'bubblewrap', 'seccomp'],
  // Landlock's TCP rules (ABI ≥ 4) are a further belt inside the empty network namespace, used when present
  full: ['helper', 'rlimits', 'nodePermission', 'bubblewrap', 'seccomp', 'landlock', 'egressProxy'],
};

const DEFAULT_SEARCH_PATH = ['/usr/bin', '/usr/local/bin', '/bin'];

/** Finds a binary by bare name in a fixed list of folders (never the caller's PATH). */
export function findBinary(
  name: string,
  searchPath: readonly string[] = DEFAULT_SEARCH_PATH,
): string | undefined {
  for (const dir of searchPath) {
    const candidate = `${dir}/${name}`;
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Shared libraries a dynamic binary loads, from `ldd`, as the paths the
 * loader opens (symlinks kept; bwrap binds what they point at).
 */
export function sharedLibraries(binary: string): string[] {
  const result = spawnSync('ldd', [binary], { encoding: 'utf8', timeout: 10_000 });
  if (result.status !== 0) return [];
  const found = new Set<string>();
  for (const line of result.stdout.split('\n')) {
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
    if (match) found.add(match[1]!);
  }
  return [...found];
}

function bubblewrapWorks(bwrap: string, node: string, libraries: string[]): { ok: boolean; detail: string } {
  const binds = [...libraries, node].flatMap((path) => ['--ro-bind', path, path]);
  const result = spawnSync(
    bwrap,
    [...BWRAP_ISOLATION_FLAGS, ...binds, '--', node, '-e', 'process.stdout.write(String(process.getuid()))'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (result.status === 0 && result.stdout === '65534') return { ok: true, detail: '' };
  return { ok: false, detail: (result.error?.message ?? result.stderr.trim()) || `exit ${result.status}` };
}

const cache = new Map<string, HostReport>();

/**
 * Probes, once per process and settings, which isolation layers this host can
 * apply: it compiles the helper if needed, runs a tiny Node process under
 * bubblewrap, asks the kernel for its Landlock ABI and tests a seccomp
 * filter. Never throws; what is missing comes back with its fix.
 *
 * @example
 * const report = probeHost();
 * console.log(report.strongest, report.tiers.full.missing);
 */
export function probeHost(settings: ProbeSettings = {}): HostReport {
  const key = JSON.stringify(settings);
  const cached = cache.get(key);
  if (cached) return cached;
  const nodePath = realpathSync(settings.nodePath ?? process.execPath);
  const uid = process.getuid?.() ?? -1;
  const linux = process.platform === 'linux';
  const layers = {} as Record<LayerName, LayerReport>;
  const nodeVersion = spawnSync(nodePath, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const nodeLibraries = linux ? sharedLibraries(nodePath) : [];

  const helper = linux
    ? ensureHelper(settings.helperCacheDir ?? defaultHelperCacheDir(), { configDir: settings.configDir })
    : ({ ok: false, problem: 'Linux only', fix: 'run Metnos executors on Linux' } as const);
  layers.helper = helper.ok
    ? {
        available: true,
        detail: `${helper.path} (sha256 ${helper.digest.slice(0, 16)}…, ${helper.trust}; checked before every call)`,
      }
    : { available: false, detail: helper.problem, fix: helper.fix };
  layers.rlimits = layers.helper.available
    ? {
        available: true,
        detail:
          'RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_DATA, RLIMIT_CORE via the helper',
      }
    : { available: false, detail: 'needs the helper', fix: layers.helper.fix };

  const major = Number(/^v(\d+)/.exec(nodeVersion)?.[1] ?? 0);
  layers.nodePermission =
    major >= 22
      ? {
          available: true,
          detail: `node ${nodeVersion} --permission (fs, child processes, workers, addons; not the network)`,
        }
      : { available: false, detail: `node ${nodeVersion || '(unknown)'}`, fix: 'use Node 24 or later' };

  let landlockAbi = 0;
  let seccompOk = false;
  let privateMounts = false;
  if (helper.ok) {
    const probe = spawnSync(helper.path, ['--probe'], { encoding: 'utf8', timeout: 10_000 });
    try {
      const parsed = JSON.parse(probe.stdout) as {
        landlockAbi: number;
        seccomp: boolean;
        privateMounts: boolean;
      };
      landlockAbi = Number(parsed.landlockAbi) || 0;
      seccompOk = parsed.seccomp === true;
      privateMounts = parsed.privateMounts === true;
    } catch {
      // reported below as unavailable
    }
  }
  layers.seccomp = seccompOk
    ? { available: true, detail: 'seccomp filter loads (libseccomp, static)' }
    : {
        available: false,
        detail: 'seccomp filters cannot be loaded',
        fix: 'a kernel with CONFIG_SECCOMP_FILTER and the helper built',
      };
  layers.landlock =
    landlockAbi >= 1
      ? { available: true, detail: `Landlock ABI ${landlockAbi}` }
      : {
          available: false,
          detail: 'Landlock is not enabled',
          fix: 'boot a kernel ≥ 5.13 with lsm=…,landlock',
        };
  layers.landlockNetwork =
    landlockAbi >= 4
      ? { available: true, detail: 'TCP connect/bind rules (ABI ≥ 4)' }
      : { available: false, detail: `Landlock ABI ${landlockAbi} has no TCP rules`, fix: 'a kernel ≥ 6.7' };

  const bwrapPath = linux ? findBinary('bwrap', settings.binarySearchPath) : undefined;
  if (!bwrapPath) {
    layers.bubblewrap = { available: false, detail: 'bwrap not found', fix: 'apt-get install -y bubblewrap' };
  } else {
    const version = spawnSync(bwrapPath, ['--version'], { encoding: 'utf8' }).stdout.trim();
    // the helper mounts profile folders noexec in a mount namespace of its own before bwrap starts
    const works = privateMounts
      ? bubblewrapWorks(bwrapPath, nodePath, nodeLibraries)
      : {
          ok: false,
          detail: 'the helper cannot make the private mount namespace for noexec profile folders',
        };
    layers.bubblewrap = works.ok
      ? { available: true, detail: `${version}: user, mount, pid, ipc, uts and network namespaces` }
      : {
          available: false,
          detail: `${version} cannot create namespaces: ${works.detail}`,
          fix: 'sysctl kernel.unprivileged_userns_clone=1 (and kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu); bubblewrap ≥ 0.8',
        };
  }
  layers.egressProxy =
    layers.bubblewrap.available && layers.helper.available
      ? {
          available: true,
          detail:
            'host-side HTTP CONNECT proxy over a unix socket, relayed inside the empty network namespace',
        }
      : {
          available: false,
          detail: 'needs bubblewrap and the helper',
          fix: layers.bubblewrap.fix ?? layers.helper.fix,
        };

  const cgroups =
    linux && settings.cgroupRoot !== false
      ? detectCgroups(settings.cgroupRoot ?? '/sys/fs/cgroup')
      : undefined;
  layers.cgroup = cgroups
    ? { available: true, detail: `cgroup v${cgroups.version} memory and pids limits` }
    : {
        available: false,
        detail:
          'no writable cgroup: memory is limited by the V8 heap and RLIMIT_DATA, processes by RLIMIT_NPROC',
        fix: 'run as root, or delegate a cgroup v2 subtree with the memory and pids controllers (systemd Delegate=yes)',
      };

  const tiers = {} as HostReport['tiers'];
  for (const tier of ISOLATION_TIERS) {
    const missing = TIER_LAYERS[tier]
      .filter((layer) => !layers[layer].available)
      .map((layer) => `${layer}: ${layers[layer].detail}`);
    tiers[tier] = { available: missing.length === 0, missing };
  }
  const strongest = [...ISOLATION_TIERS].reverse().find((tier) => tiers[tier].available) ?? 'none';
  const report: HostReport = {
    platform: process.platform,
    kernel: release(),
    uid,
    nodePath,
    nodeVersion,
    nodeLibraries,
    bwrapPath,
    helperPath: helper.ok ? helper.path : undefined,
    helperDigest: helper.ok ? helper.digest : undefined,
    landlockAbi,
    cgroups,
    layers,
    tiers,
    strongest,
  };
  cache.set(key, report);
  return report;
}

/** A doctor finding: one layer, its state and its fix. */
export interface DoctorFinding {
  layer: LayerName;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** The structured answer of {@link doctor}. */
export interface DoctorReport {
  strongest: IsolationTier;
  tiers: HostReport['tiers'];
  findings: DoctorFinding[];
  host: { platform: string; kernel: string; uid: number; node: string };
}

/**
 * What this host supports for executor isolation and how to fix what is
 * missing, as data for `metnos doctor`.
 *
 * @example
 * console.log(formatDoctorReport(doctor()));
 */
export function doctor(settings: ProbeSettings = {}): DoctorReport {
  const report = probeHost(settings);
  return {
    strongest: report.strongest,
    tiers: report.tiers,
    findings: (Object.keys(report.layers) as LayerName[]).map((layer) => ({
      layer,
      ok: report.layers[layer].available,
      detail: report.layers[layer].detail,
      ...(report.layers[layer].fix && !report.layers[layer].available
        ? { fix: report.layers[layer].fix }
        : {}),
    })),
    host: { platform: report.platform, kernel: report.kernel, uid: report.uid, node: report.nodeVersion },
  };
}

/**
 * The doctor report as text: one line per layer, then the tiers.
 *
 * @example
 * process.stdout.write(formatDoctorReport(doctor()));
 */
export function formatDoctorReport(report: DoctorReport): string {
  const lines = [
    `sandbox: ${report.host.platform} ${report.host.kernel}, uid ${report.host.uid}, node ${report.host.node}`,
    ...report.findings.map(
      (finding) =>
        `  ${finding.ok ? 'ok ' : 'no '} ${finding.layer.padEnd(16)} ${finding.detail}${finding.fix ? `\n       fix: ${finding.fix}` : ''}`,
    ),
    'tiers:',
    ...ISOLATION_TIERS.map((tier) => {
      const state = report.tiers[tier];
      return state.available
        ? `  ok  ${tier}`
        : `  no  ${tier.padEnd(9)} missing ${state.missing.join('; ')}`;
    }),
    `strongest tier on this host: ${report.strongest}`,
  ];
  return `${lines.join('\n')}\n`;
}
