import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/** What {@link startWarmProcess} needs: the planned command and the executor's half of the request. */
export interface WarmProcessSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The first line the harness reads: `harnessPreload(executor, { warm: true })`. */
  preload: string;
}

/** A sandboxed process started ahead of its call, waiting on stdin. */
export interface WarmProcess {
  readonly child: ChildProcess;
  /** Resolves true once the harness said it is ready, false if the process ended first. */
  readonly ready: Promise<boolean>;
  /** True while the process runs and has not been handed a call. */
  alive(): boolean;
  /** True once it said it is ready, while it still waits. */
  waiting(): boolean;
  /**
   * Takes the process for one call: it counts in the host's event loop again
   * and its streams are left paused for `superviseChild`. Undefined when it is
   * no longer alive.
   */
  take(): ChildProcess | undefined;
  /** Kills the whole process group (bwrap, the helpers, Node). */
  kill(): void;
}

/** stdout before the ready line, at most (the harness writes 15 bytes there). */
const READY_CAP = 4096;

function streams(child: ChildProcess): Array<Socket | undefined> {
  return [child.stdin, child.stdout, child.stderr] as Array<Socket | undefined>;
}

/**
 * Starts one sandboxed harness for a call that has not come yet: spawns the
 * planned command in its own process group, writes the executor's half of the
 * request, and waits for `{"ready":true}`. The process does not keep the
 * host's event loop alive while it waits, and ends by itself when the host
 * goes away (its stdin closes).
 *
 * @example
 * const warm = startWarmProcess({ ...plan, preload: JSON.stringify(harnessPreload(executor, { warm: true })) });
 * if (await warm.ready) superviseChild(warm.take()!, spec);
 */
export function startWarmProcess(spec: WarmProcessSpec): WarmProcess {
  let state: 'starting' | 'ready' | 'taken' | 'ended' = 'starting';
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  child.unref();
  for (const stream of streams(child)) stream?.unref?.();
  // what Node or the helpers print while starting is not the call's: read and dropped
  const dropStderr = () => undefined;
  child.stderr?.on('data', dropStderr);
  child.stdin?.on('error', () => undefined);
  child.stdin?.write(`${spec.preload}\n`);

  const ready = new Promise<boolean>((resolve) => {
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf(10);
      if (end === -1 && seen.length < READY_CAP) return;
      child.stdout?.off('data', onData);
      child.stdout?.pause();
      const line = seen.subarray(0, end === -1 ? seen.length : end).toString('utf8');
      // anything but the ready line, or more after it, is not a process to hand a call to
      if (line !== '{"ready":true}' || seen.length > end + 1) {
        state = 'ended';
        kill();
        resolve(false);
        return;
      }
      if (state === 'starting') state = 'ready';
      resolve(state === 'ready');
    };
    child.stdout?.on('data', onData);
    child.once('exit', () => {
      if (state !== 'taken') state = 'ended';
      resolve(false);
    });
    child.once('error', () => {
      state = 'ended';
      resolve(false);
    });
  });

  return {
    child,
    ready,
    alive: () =>
      (state === 'starting' || state === 'ready') && child.exitCode === null && child.signalCode === null,
    waiting: () => state === 'ready' && child.exitCode === null && child.signalCode === null,
    take() {
      if (state !== 'ready' || child.exitCode !== null || child.signalCode !== null) return undefined;
      state = 'taken';
      child.stderr?.off('data', dropStderr);
      child.stderr?.pause();
      child.ref();
      for (const stream of streams(child)) stream?.ref?.();
      return child;
    },
    kill() {
      if (state !== 'taken') state = 'ended';
      kill();
    },
  };
}
