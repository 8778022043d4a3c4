/**
 * Settings of the warm pool (`createSandboxRunner({ pool })`). Budgets are for
 * the processes that wait; a process that has been handed its call counts as
 * any cold-started call does.
 */
export interface WarmPoolSettings {
  /** Warm processes kept per executor in use (per version, profile and workspace). Default 1. */
  size?: number;
  /** Warm processes in all. Default 4. */
  max?: number;
  /** The sum of the waiting processes' `max_memory_mb`. Default 1024. */
  memoryMb?: number;
  /** Operating-system processes the waiting trees hold in all (bwrap, helpers, Node, relay). Default 32. */
  processes?: number;
  /** An executor not called for this long loses its warm processes. Default 120,000 ms. */
  idleMs?: number;
  /**
   * When a call finds no warm process: `cold` (default) starts one as without
   * a pool; `wait` starts a warm one and hands it the call once it is ready,
   * so that every call goes through a process of the pool (the attack suites
   * run this way).
   */
  onEmpty?: 'cold' | 'wait';
}

/** What the pool holds: one sandboxed process started ahead of its call. */
export interface PoolEntry {
  /** Resolves true once the process waits for its call, false if it ended first. */
  readonly ready: Promise<boolean>;
  /** Its profile's `max_memory_mb`, counted against the memory budget. */
  readonly memoryMb: number;
  /** True while it runs and has not been handed a call (starting or waiting). */
  alive(): boolean;
  /** True once it is ready and waits for its call. */
  waiting(): boolean;
  /** Processes its tree holds now (or an estimate). */
  processes(): number;
  /** Starts setting it up now if it has not started yet (a call is waiting for it). */
  hurry?(): void;
  /** Calls `listener` once if the process ends while it waits. */
  onEnded(listener: () => void): void;
  /** Kills it and removes what it holds (temp folder, proxy, cgroup). */
  discard(): void;
}

/** Counts for benchmarks, tests and `metnos doctor`. */
export interface WarmPoolStats {
  /** Processes waiting or starting, by key. */
  waiting: number;
  starting: number;
  /** Calls handed a warm process, calls that found none, processes started, discarded. */
  hits: number;
  misses: number;
  started: number;
  discarded: number;
  memoryMb: number;
  processes: number;
}

/** The pool's bookkeeping; the sandbox runner starts and hands over the processes. */
export interface WarmPool<Entry extends PoolEntry> {
  /**
   * A waiting process for `key`, removed from the pool; one still starting is
   * awaited (it started before this call, so it is ready sooner than a cold
   * start would be). Undefined when there is none or it failed to start.
   */
  take(key: string): Promise<Entry | undefined>;
  /**
   * Records that `key` is in use and starts processes for it in the
   * background with `start`, up to `size`, within the budgets; the least
   * recently used other keys give way when a budget is full. `start` returns
   * undefined when it cannot start one; `memoryMb` is what each will count.
   */
  want(key: string, start: () => Entry | undefined, memoryMb: number): void;
  /** Discards the waiting processes of every key `predicate` accepts (and forgets those keys). */
  discardWhere(predicate: (key: string) => boolean): void;
  stats(): WarmPoolStats;
  /** Discards everything and stops the idle timer. */
  close(): void;
}

interface KeyState<Entry> {
  entries: Entry[];
  start: () => Entry | undefined;
  memoryMb: number;
  lastUsed: number;
}

/** Processes a waiting tree is counted as before its cgroup can say. */
const PROCESSES_ESTIMATE = 5;

/**
 * Creates the pool's bookkeeping: warm processes by key, topped up after use,
 * kept within the budgets, shrunk when idle. What a key means (executor
 * version, digests, profile, workspace) is the runner's business: the pool
 * hands a process only to a call with the same key.
 *
 * @example
 * const pool = createWarmPool<WarmEntry>({ size: 1 });
 * const entry = await pool.take(key); // undefined: start cold
 * pool.want(key, () => startEntry());
 */
export function createWarmPool<Entry extends PoolEntry>(
  settings: WarmPoolSettings = {},
  clock: () => number = Date.now,
): WarmPool<Entry> {
  const size = Math.max(0, settings.size ?? 1);
  const max = Math.max(0, settings.max ?? 4);
  const memoryBudget = settings.memoryMb ?? 1024;
  const processBudget = settings.processes ?? 32;
  const idleMs = settings.idleMs ?? 120_000;
  const keys = new Map<string, KeyState<Entry>>();
  const counts = { hits: 0, misses: 0, started: 0, discarded: 0 };
  let closed = false;

  const all = () => [...keys.values()].flatMap((state) => state.entries);
  const memoryInUse = () => all().reduce((sum, entry) => sum + entry.memoryMb, 0);
  const processesInUse = () => all().reduce((sum, entry) => sum + entry.processes(), 0);

  function remove(state: KeyState<Entry>, entry: Entry): boolean {
    const index = state.entries.indexOf(entry);
    if (index === -1) return false;
    state.entries.splice(index, 1);
    return true;
  }

  function discard(state: KeyState<Entry>, entry: Entry): void {
    if (remove(state, entry)) counts.discarded++;
    entry.discard();
  }

  /** Frees room by discarding one process of the least recently used other key. */
  function evictOne(except: string): boolean {
    let victim: KeyState<Entry> | undefined;
    for (const [key, state] of keys) {
      if (key === except || state.entries.length === 0) continue;
      if (!victim || state.lastUsed < victim.lastUsed) victim = state;
    }
    const entry = victim?.entries[0];
    if (!victim || !entry) return false;
    discard(victim, entry);
    return true;
  }

  function fits(memoryMb: number): boolean {
    return (
      all().length < max &&
      memoryInUse() + memoryMb <= memoryBudget &&
      processesInUse() + PROCESSES_ESTIMATE <= processBudget
    );
  }

  function topUp(key: string, state: KeyState<Entry>): void {
    while (!closed && state.entries.length < size) {
      while (!fits(state.memoryMb) && evictOne(key)) {
        // made room
      }
      if (!fits(state.memoryMb)) return;
      const entry = state.start();
      if (!entry) return;
      counts.started++;
      state.entries.push(entry);
      entry.onEnded(() => {
        if (remove(state, entry)) {
          counts.discarded++;
          entry.discard();
        }
      });
    }
  }

  const sweep = setInterval(
    () => {
      const now = clock();
      for (const [key, state] of keys) {
        if (now - state.lastUsed < idleMs) continue;
        for (const entry of [...state.entries]) discard(state, entry);
        keys.delete(key);
      }
    },
    Math.max(1000, Math.min(idleMs / 4, 30_000)),
  );
  sweep.unref();

  return {
    async take(key) {
      const state = keys.get(key);
      if (state) state.lastUsed = clock();
      // a waiting one first, else the one that started first
      const entry =
        state?.entries.find((candidate) => candidate.waiting()) ??
        state?.entries.find((candidate) => candidate.alive());
      if (!state || !entry) {
        counts.misses++;
        return undefined;
      }
      remove(state, entry);
      entry.hurry?.();
      // a waiting process does not keep the host alive; a call waiting for one must
      const keepAlive = setInterval(() => undefined, 60_000);
      const ready = await entry.ready.finally(() => clearInterval(keepAlive));
      if (ready) {
        counts.hits++;
        return entry;
      }
      counts.misses++;
      counts.discarded++;
      entry.discard();
      return undefined;
    },
    want(key, start, memoryMb) {
      if (closed || size === 0) return;
      let state = keys.get(key);
      if (!state) {
        state = { entries: [], start, memoryMb, lastUsed: clock() };
        keys.set(key, state);
      }
      state.start = start;
      state.memoryMb = memoryMb;
      state.lastUsed = clock();
      topUp(key, state);
    },
    discardWhere(predicate) {
      for (const [key, state] of keys) {
        if (!predicate(key)) continue;
        for (const entry of [...state.entries]) discard(state, entry);
        keys.delete(key);
      }
    },
    stats() {
      const entries = all();
      const waiting = entries.filter((entry) => entry.waiting()).length;
      return {
        waiting,
        starting: entries.length - waiting,
        ...counts,
        memoryMb: memoryInUse(),
        processes: processesInUse(),
      };
    },
    close() {
      closed = true;
      clearInterval(sweep);
      for (const [key, state] of keys) {
        for (const entry of [...state.entries]) discard(state, entry);
        keys.delete(key);
      }
    },
  };
}
