import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** How often the meter reads the process tree's counters. */
const INTERVAL_MS = 20;

/** `wchar` of one process: every byte it (and the children it reaped) asked to write. */
function written(pid: number): number {
  try {
    const match = /^wchar:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // gone between the listing and the read: its parent holds its count once reaped
  }
}

function childrenOf(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/)) {
        if (child) found.push(Number(child));
      }
    } catch {
      // the thread ended
    }
  }
  return found;
}

/**
 * Bytes written so far by the process tree under `root`. The helper's own
 * egress relay (`exempt`, by executable) is left out: what it writes is what
 * the executor downloads, not what it writes.
 */
export function treeWrites(root: number, exempt?: string): number {
  let total = 0;
  const pending = [root];
  const seen = new Set<number>();
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    let relay = false;
    if (exempt && pid !== root) {
      try {
        relay = readlinkSync(`/proc/${pid}/exe`) === exempt;
      } catch {
        relay = false;
      }
    }
    if (relay) continue;
    total += written(pid);
    pending.push(...childrenOf(pid));
  }
  return total;
}

/**
 * A `watch` for `runChild`: reads the tree's write counters every 20 ms and
 * stops the call with `ResourceLimit` once it has written more than `limit`
 * bytes. Files, pipes and sockets all count (`wchar`). The file-size rlimit,
 * set to the same figure, bounds what one file can take between two reads.
 *
 * @example
 * runChild({ ...spec, watch: meterWrites(32 * 1024 * 1024, helperPath) });
 */
export function meterWrites(
  limit: number,
  exempt?: string,
): (pid: number, stop: (errorClass: string, message: string) => void) => () => void {
  return (pid, stop) => {
    const timer = setInterval(() => {
      if (treeWrites(pid, exempt) > limit) {
        clearInterval(timer);
        stop(
          'ResourceLimit',
          `the executor wrote more than its ${limit} bytes (max_write_bytes) and was stopped`,
        );
      }
    }, INTERVAL_MS);
    timer.unref();
    return () => clearInterval(timer);
  };
}
