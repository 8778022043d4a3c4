import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { HARNESS_PATH, type IsolationTier, RUNTIME_DIR, tierRank } from '@metnos/executor-sdk';
import { BWRAP_ISOLATION_FLAGS } from './bwrap-flags.ts';
import { DEVICES_ALLOWED, ETC_READABLE, type ForbiddenSet } from './forbidden.ts';
import { findBinary, type HostReport, sharedLibraries } from './host-probe.ts';
import type { ResolvedProfile } from './policy.ts';
import { isWithin } from './resolve-path.ts';

/** Inside the sandbox: where the proxy socket appears and the port the relay listens on. */
export const PROXY_SOCKET_INSIDE = '/run/metnos/proxy.sock';
export const PROXY_PORT_INSIDE = 3128;

/** Bind sources are handed to bwrap as descriptors from this number up. */
const FIRST_PIN_FD = 10;

/** Everything {@link planLaunch} needs for one call. */
export interface LaunchInput {
  tier: IsolationTier;
  host: HostReport;
  profile: ResolvedProfile;
  exec: { mode: 'none' | 'allowlist'; binaries: string[] };
  network: 'none' | 'allowlist';
  maxDurationMs: number;
  maxMemoryMb: number;
  forbidden: ForbiddenSet;
  /** The call's private temp folder; bound read-write only when the profile lists `$TMP`. */
  tmpDir: string;
  tmpGranted: boolean;
  /** The host side of the proxy socket, when the profile has a network allow-list. */
  proxySocket?: string;
  /** cgroup.procs files to join before bwrap starts (root hosts). */
  cgroupProcs?: string[];
  limits: { processes: number; openFiles: number; fileBytes: number };
  binarySearchPath: readonly string[];
  /** Bytes the call may write in all; the outer helper meters the tree (standard and full). */
  writeBytes?: number;
  /**
   * A warm process of the pool: the outer helper meters slowly until the host
   * sends it SIGUSR1, right before the call (standard and full only).
   */
  warm?: boolean;
}

/** The command to spawn and what it applies. */
export interface LaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  layers: string[];
  notes: string[];
  /**
   * Host paths whose identity the sandbox's view was built from (bind sources
   * and masked folders): a warm process is handed a call only while each is
   * still the same file (standard and full).
   */
  watched: string[];
  /** For a warm plan: the signal the outer helper expects right before the call. */
  callSignal?: 'SIGUSR1';
  /**
   * {@link launchView} as the plan used it (standard and full): a warm process
   * is handed a call only while the view a cold start would build now is the same.
   */
  view?: string;
}

/**
 * What of a launch depends on the host's files at the moment it is planned:
 * the secret folders (and the folder of every call's `$TMP`) inside a granted
 * tree that get an empty mask, and whether each is a folder; and the profile
 * paths that exist and are bound. A warm process was started with the view of
 * its start; one whose view would differ now (a `.ssh` created in a granted
 * home since) is not handed a call.
 *
 * @example
 * JSON.stringify(launchView(profile, forbidden, tmpDir, true)) === plan.view;
 */
export function launchView(
  profile: ResolvedProfile,
  forbidden: ForbiddenSet,
  tmpDir: string,
  tmpGranted: boolean,
): { masks: Array<{ path: string; folder: boolean }>; bound: string[] } {
  // the call's own $TMP is bound once, after the masks
  const bound = [...profile.read, ...profile.write].filter(
    (path) => !(tmpGranted && path === tmpDir) && existsSync(path),
  );
  const roots = [...profile.read, ...profile.write];
  const calls = forbidden.calls ? [forbidden.calls.root] : [];
  const masks: Array<{ path: string; folder: boolean }> = [];
  for (const mask of new Set([...forbidden.masks, ...calls])) {
    if (!roots.some((root) => root !== mask && isWithin(mask, root))) continue;
    let info: ReturnType<typeof statSync> | undefined;
    try {
      info = statSync(mask);
    } catch {
      info = undefined;
    }
    if (!info || realpathSync(mask) !== mask) continue;
    masks.push({ path: mask, folder: info.isDirectory() });
  }
  return { masks, bound };
}

const libraryCache = new Map<string, string[]>();

function librariesOf(binary: string): string[] {
  let found = libraryCache.get(binary);
  if (!found) {
    found = sharedLibraries(binary);
    libraryCache.set(binary, found);
  }
  return found;
}

/** The binary plus, for a script, its interpreter; each with its shared libraries. */
function executableClosure(binary: string): string[] {
  const files = [binary, ...librariesOf(binary)];
  try {
    const head = readFileSync(binary, { encoding: 'latin1' }).slice(0, 256);
    const shebang = /^#!\s*(\S+)/.exec(head);
    if (shebang?.[1] && existsSync(shebang[1])) files.push(shebang[1], ...librariesOf(shebang[1]));
  } catch {
    // unreadable: bwrap will report it
  }
  return files;
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}

/**
 * Builds the command line for one call at `tier`:
 * - `none`: `node harness.mjs`;
 * - `basic`: `helper (rlimits) -- node --permission … harness.mjs`;
 * - `standard`: `bwrap (namespaces, cap drop, view) -- helper (rlimits, seccomp) -- node …`;
 * - `full`: as standard plus Landlock in the helper, the egress relay, and on
 *   hosts with cgroups an outer `helper --cgroup … --` that joins them first.
 */
export function planLaunch(input: LaunchInput): LaunchPlan {
  const { host, tier } = input;
  const rank = tierRank(tier);
  const node = host.nodePath;
  const layers = ['process', 'timeout', 'output-caps'];
  const notes: string[] = [];
  const env: Record<string, string> = {
    PATH: '/nonexistent',
    HOME: input.tmpDir,
    TMPDIR: input.tmpDir,
    LANG: 'C.UTF-8',
  };
  const binaries = input.exec.mode === 'allowlist' ? input.exec.binaries : [];
  const located = binaries.map((name) => ({ name, path: findBinary(name, input.binarySearchPath) }));
  const binaryPaths = located.flatMap((entry) => (entry.path ? [entry.path] : []));
  const missingBinaries = located.filter((entry) => !entry.path).map((entry) => entry.name);
  if (missingBinaries.length > 0) notes.push(`exec: not found on this host: ${missingBinaries.join(', ')}`);
  if (binaryPaths.length > 0) env.PATH = [...new Set(binaryPaths.map((path) => dirname(path)))].join(':');
  // the code itself arrives on stdin (the verified bytes): its file is neither readable nor mounted
  const readable = [
    ...new Set([
      RUNTIME_DIR,
      ...input.profile.read,
      ...input.profile.write,
      ...(input.tmpGranted ? [input.tmpDir] : []),
    ]),
  ];
  const writable = [...new Set([...input.profile.write, ...(input.tmpGranted ? [input.tmpDir] : [])])];

  const nodeArgs = ['--disable-warning=ExperimentalWarning', `--max-old-space-size=${input.maxMemoryMb}`];
  if (rank >= tierRank('basic')) {
    nodeArgs.push(
      '--permission',
      ...readable.map((path) => `--allow-fs-read=${path}`),
      ...writable.map((path) => `--allow-fs-write=${path}`),
    );
    if (binaries.length > 0) nodeArgs.push('--allow-child-process');
    layers.push('node-permission', 'heap-limit');
  }
  nodeArgs.push(HARNESS_PATH);
  if (rank === tierRank('none')) {
    notes.push('no isolation: a plain child process');
    return { command: node, args: nodeArgs, env, cwd: input.tmpDir, layers, notes, watched: [] };
  }

  const helper = host.helperPath!;
  const inner: string[] = [
    '--rlimit',
    `cpu=${Math.ceil(input.maxDurationMs / 1000) + 1}`,
    '--rlimit',
    `fsize=${input.limits.fileBytes}`,
    '--rlimit',
    `nofile=${input.limits.openFiles}`,
    '--rlimit',
    `data=${(input.maxMemoryMb + 1024) * 1024 * 1024}`,
    '--rlimit',
    'core=0',
  ];
  layers.push('rlimits');
  if (rank === tierRank('basic')) {
    notes.push(
      'tier basic: no namespaces, so the network is not isolated and binaries are not filtered beyond the Node permission model',
      'tier basic: no process-count limit (RLIMIT_NPROC needs the user namespace of tier standard)',
    );
    notes.push(
      `memory: V8 heap ${input.maxMemoryMb} MB and RLIMIT_DATA ${input.maxMemoryMb + 1024} MB (heap-only, no cgroup)`,
    );
    return {
      command: helper,
      args: [...inner, '--', node, ...nodeArgs],
      env,
      cwd: input.tmpDir,
      layers,
      notes,
      watched: [],
    };
  }

  // standard and full: bubblewrap around the helper
  inner.push('--rlimit', `nproc=${input.limits.processes}`);
  const runtimeFiles = new Set<string>([node, ...host.nodeLibraries, helper, RUNTIME_DIR]);
  const executables = new Set<string>([node, ...host.nodeLibraries]);
  for (const binary of binaryPaths) {
    for (const file of executableClosure(binary)) {
      runtimeFiles.add(file);
      executables.add(file);
    }
  }
  const etcFiles = ETC_READABLE.filter(
    (file) => existsSync(file) && ['/etc/ld.so.cache', '/etc/localtime'].includes(file),
  );
  // Runtime files are trusted system paths, pinned at their real location. Profile paths were
  // resolved by the policy check and must still be exactly that: the helper opens each one
  // and refuses the call if it now leads elsewhere (a symlink swapped in since the check).
  // profile binds are noexec: the helper remounts them so nothing written or granted there can run
  const binds: Array<{ dest: string; source: string; writable: boolean; noexec?: boolean }> = [];
  for (const file of [...runtimeFiles, ...etcFiles])
    binds.push({ dest: file, source: realpathSync(file), writable: false });
  const profileBinds = [
    ...input.profile.read.map((path) => ({ path, writable: false })),
    ...input.profile.write.map((path) => ({ path, writable: true })),
  ];
  const view = launchView(input.profile, input.forbidden, input.tmpDir, input.tmpGranted);
  for (const { path, writable } of profileBinds) {
    if (view.bound.includes(path)) binds.push({ dest: path, source: path, writable, noexec: true });
  }
  if (input.proxySocket)
    binds.push({ dest: PROXY_SOCKET_INSIDE, source: input.proxySocket, writable: false });
  binds.sort((left, right) => depth(left.dest) - depth(right.dest));

  const bwrap: string[] = [...BWRAP_ISOLATION_FLAGS];
  const outer: string[] = [];
  binds.forEach((bind, index) => {
    const fd = FIRST_PIN_FD + index;
    outer.push(bind.noexec ? '--noexec-pin' : '--pin', `${fd}:${bind.source}`);
    bwrap.push(bind.writable ? '--bind-fd' : '--ro-bind-fd', String(fd), bind.dest);
  });
  // secrets inside a granted tree (a home's .ssh, the workspace's .audit) are covered by empty read-only mounts
  // and so is the folder of every call's private $TMP, inside a granted shared temp folder
  const remounts: string[] = [];
  const watched = binds
    .filter((bind) => bind.noexec || bind.dest === PROXY_SOCKET_INSIDE)
    .map((bind) => bind.source);
  for (const { path: mask, folder } of view.masks) {
    watched.push(mask);
    if (folder) {
      bwrap.push('--tmpfs', mask);
      remounts.push('--remount-ro', mask);
    } else bwrap.push('--ro-bind', '/dev/null', mask);
  }
  // the call's own $TMP is bound last, so a mask over the folder of all calls does not hide it
  if (input.tmpGranted && existsSync(input.tmpDir)) {
    const fd = FIRST_PIN_FD + binds.length;
    outer.push('--noexec-pin', `${fd}:${input.tmpDir}`);
    bwrap.push('--bind-fd', String(fd), input.tmpDir);
    watched.push(input.tmpDir);
  }
  bwrap.push(...remounts);
  bwrap.push('--remount-ro', '/', '--chdir', input.tmpGranted ? input.tmpDir : '/');
  for (const [key, value] of Object.entries(env)) bwrap.push('--setenv', key, value);
  layers.push(
    'bubblewrap',
    'user-ns',
    'mount-ns',
    'pid-ns',
    'ipc-ns',
    'uts-ns',
    'net-ns',
    'cap-drop-all',
    'no-new-privs',
    'seccomp',
  );

  if (input.proxySocket) {
    const proxyUrl = `http://127.0.0.1:${PROXY_PORT_INSIDE}`;
    for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'])
      bwrap.push('--setenv', key, proxyUrl);
    bwrap.push('--setenv', 'NODE_USE_ENV_PROXY', '1');
    inner.push('--forward', `${PROXY_PORT_INSIDE}:${PROXY_SOCKET_INSIDE}`);
    layers.push('egress-proxy');
  }

  if (rank >= tierRank('full')) {
    inner.push('--landlock');
    for (const file of runtimeFiles) inner.push(executables.has(file) ? '--rx' : '--ro', file);
    for (const file of etcFiles) inner.push('--ro', file);
    for (const path of input.profile.read) inner.push('--ro', path);
    for (const path of writable) inner.push('--rw', path);
    for (const device of DEVICES_ALLOWED) inner.push('--dev', device);
    if (input.proxySocket) inner.push('--tcp-connect', String(PROXY_PORT_INSIDE));
    layers.push('landlock');
    if (host.landlockAbi >= 4) layers.push('landlock-net');
    if (host.landlockAbi >= 6) layers.push('landlock-scope');
  }
  inner.push('--seccomp');

  if (input.cgroupProcs && input.cgroupProcs.length > 0) {
    outer.unshift(...input.cgroupProcs.flatMap((file) => ['--cgroup', file]));
    layers.push('cgroup-memory', 'cgroup-pids');
    notes.push(
      `memory: cgroup v${host.cgroups?.version} limit ${input.maxMemoryMb} MB; processes: ${input.limits.processes}`,
    );
  } else {
    const processes =
      host.uid === 0
        ? 'processes: not limited (root maps to uid 0, which RLIMIT_NPROC does not count; the deadline bounds a fork bomb)'
        : `processes: RLIMIT_NPROC ${input.limits.processes}`;
    notes.push(
      `memory: V8 heap ${input.maxMemoryMb} MB and RLIMIT_DATA ${input.maxMemoryMb + 1024} MB (heap-only: no cgroup on this host); ${processes}`,
    );
  }
  if (input.network === 'allowlist' && !input.proxySocket) notes.push('network: none reachable (no proxy)');
  let callSignal: LaunchPlan['callSignal'];
  if (input.writeBytes) {
    // The outer helper stays as bwrap's parent and meters the tree every 5 ms; without a relay
    // (no downloads to tell apart) it also checks the exact total of the reaped tree at the end.
    outer.push('--write-quota', String(input.writeBytes));
    if (!input.proxySocket) outer.push('--write-quota-final');
    if (input.warm) {
      outer.push('--write-quota-idle');
      callSignal = 'SIGUSR1';
    }
    layers.push('write-quota');
  }
  // the helper runs twice: outside bwrap to join cgroups and pin the bind sources, inside to restrict itself
  const args = [...outer, '--', host.bwrapPath!, ...bwrap, '--', helper, ...inner, '--', node, ...nodeArgs];
  return {
    command: helper,
    args,
    env: { PATH: '/usr/bin:/bin' },
    cwd: input.tmpDir,
    layers,
    notes,
    watched,
    view: JSON.stringify(view),
    ...(callSignal ? { callSignal } : {}),
  };
}
