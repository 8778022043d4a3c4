import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Which cgroup layout the host offers to this process, if any. */
export type CgroupLayout = { version: 1; memory: string; pids: string } | { version: 2; root: string };

/** One call's cgroup: the files the helper joins, the OOM check and the cleanup. */
export interface CallCgroup {
  /** `cgroup.procs` files the process writes itself into before it starts bwrap. */
  procsFiles: string[];
  /** True when the kernel's OOM killer fired inside this cgroup. */
  oomKilled(): boolean;
  /** How many processes are in it now (`pids.current`), or undefined when it cannot be read. */
  processes(): number | undefined;
  /** Kills whatever is left and removes the cgroup folders. */
  destroy(): Promise<void>;
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds a cgroup hierarchy this process may create children in, under
 * `<root>/memory/metnos` and `<root>/pids/metnos` (v1) or `<root>/metnos`
 * (v2 with the memory and pids controllers delegated). Returns undefined
 * when there is none (unprivileged users on v1 hosts, read-only cgroupfs).
 *
 * @example
 * const layout = detectCgroups('/sys/fs/cgroup');
 */
export function detectCgroups(root: string): CgroupLayout | undefined {
  const unified = join(root, 'cgroup.controllers');
  if (existsSync(unified)) {
    const controllers = readFileSync(unified, 'utf8');
    if (!controllers.includes('memory') || !controllers.includes('pids')) return undefined;
    const base = join(root, 'metnos');
    try {
      mkdirSync(base, { recursive: true });
      if (!tryWrite(join(base, 'cgroup.subtree_control'), '+memory +pids')) return undefined;
      removeStale([base]);
      return { version: 2, root: base };
    } catch {
      return undefined;
    }
  }
  const memory = join(root, 'memory', 'metnos');
  const pids = join(root, 'pids', 'metnos');
  try {
    if (!existsSync(join(root, 'memory', 'memory.limit_in_bytes')) || !existsSync(join(root, 'pids')))
      return undefined;
    mkdirSync(memory, { recursive: true });
    mkdirSync(pids, { recursive: true });
    const probe = join(memory, `probe-${process.pid}`);
    mkdirSync(probe, { recursive: true });
    const writable = tryWrite(join(probe, 'memory.limit_in_bytes'), String(64 * 1024 * 1024));
    rmdirSync(probe);
    removeStale([memory, pids]);
    return writable ? { version: 1, memory, pids } : undefined;
  } catch {
    return undefined;
  }
}

/** A call joins its cgroup milliseconds after creating it; an empty one this old is a leftover. */
const STALE_AFTER_MS = 60 * 1000;

/**
 * Removes empty call cgroups that processes which exited mid-cleanup left
 * behind; rmdir refuses busy ones, and fresh ones are left alone.
 *
 * @example
 * sweepStaleCgroups(layout);
 */
export function sweepStaleCgroups(layout: CgroupLayout): void {
  removeStale(layout.version === 1 ? [layout.memory, layout.pids] : [layout.root]);
}

function removeStale(parents: string[]): void {
  for (const parent of parents) {
    let entries: string[] = [];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.startsWith('call-')) continue;
      try {
        // a live call may not have joined its cgroup yet: only folders older than any deadline go
        if (Date.now() - statSync(join(parent, entry)).mtimeMs < STALE_AFTER_MS) continue;
        rmdirSync(join(parent, entry));
      } catch {
        // in use by a live call
      }
    }
  }
}

function killAndRemove(dir: string): void {
  try {
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
      const pid = Number(line);
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
  } catch {
    // no such cgroup
  }
  rmdirSync(dir);
}

const pending = new Set<string>();
let exitHookInstalled = false;

/** Last chance for cgroups whose background removal had not finished when the process exits. */
function removePendingAtExit(): void {
  for (const dir of pending) {
    try {
      killAndRemove(dir);
    } catch {
      // left for the stale sweep of the next process
    }
  }
}

/**
 * Creates the cgroups of one call with a memory limit (swap included where
 * the kernel accounts it) and a process-count limit.
 */
export function createCallCgroup(
  layout: CgroupLayout,
  id: string,
  limits: { memoryBytes: number; pids: number },
): CallCgroup {
  const dirs =
    layout.version === 1 ? [join(layout.memory, id), join(layout.pids, id)] : [join(layout.root, id)];
  for (const dir of dirs) {
    mkdirSync(dir);
    pending.add(dir);
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', removePendingAtExit);
  }
  const [memoryDir, pidsDir] = layout.version === 1 ? [dirs[0]!, dirs[1]!] : [dirs[0]!, dirs[0]!];
  if (layout.version === 1) {
    writeFileSync(join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
    tryWrite(join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    tryWrite(join(memoryDir, 'memory.swappiness'), '0');
  } else {
    writeFileSync(join(memoryDir, 'memory.max'), String(limits.memoryBytes));
    tryWrite(join(memoryDir, 'memory.swap.max'), '0');
  }
  writeFileSync(join(pidsDir, 'pids.max'), String(limits.pids));
  return {
    procsFiles: dirs.map((dir) => join(dir, 'cgroup.procs')),
    oomKilled() {
      try {
        const file = layout.version === 1 ? 'memory.oom_control' : 'memory.events';
        const match = /oom_kill (\d+)/.exec(readFileSync(join(memoryDir, file), 'utf8'));
        if (match && Number(match[1]) > 0) return true;
        if (layout.version === 1) return Number(readFileSync(join(memoryDir, 'memory.failcnt'), 'utf8')) > 0;
        return false;
      } catch {
        return false;
      }
    },
    processes() {
      try {
        return Number(readFileSync(join(pidsDir, 'pids.current'), 'utf8'));
      } catch {
        return undefined;
      }
    },
    async destroy() {
      // processes first, in every controller, then the folders
      for (const dir of dirs) {
        try {
          killAndRemove(dir);
          pending.delete(dir);
        } catch {
          // still busy: retried below
        }
      }
      if (dirs.every((dir) => !pending.has(dir))) return;
      for (const dir of dirs) {
        // the kernel may take a while to reap a large process tree (a fork bomb): retry for ~10 s
        for (let attempt = 0; attempt < 100; attempt++) {
          try {
            killAndRemove(dir);
            pending.delete(dir);
            break;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
              pending.delete(dir);
              break;
            }
            await sleep(Math.min(200, 10 * (attempt + 1)));
          }
        }
      }
    },
  };
}
