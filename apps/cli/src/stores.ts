import { join } from 'node:path';
import { createAutopathStore, createFastpathStore, StoreError } from '@metnos/autopath/stores';
import { createMnestome } from '@metnos/mnestome';
import { createFillerCache, createGapLog, createScratchpad } from '@metnos/planner';
import { createSyntStore } from '@metnos/synt';

/** What a store is for, and what a turn that could not open it does without. */
interface StoreSpec {
  file: string;
  holds: string;
  /** Said after a turn that ran with an empty in-memory store in its place. */
  without: string;
  open(location: { path: string }): { close(): void };
}

const WITHOUT_MEMORY = 'this turn ran without memory: nothing was recalled and nothing it learns is kept';

/**
 * The SQLite stores the CLI keeps in the data folder: one list for `ask`,
 * `feedback`, `memory` and `doctor`, so every command names the same files.
 */
export const STORES = {
  fastpath: {
    file: 'fastpaths.sqlite',
    holds: 'remembered plans (L0)',
    without: WITHOUT_MEMORY,
    open: (location) => createFastpathStore(location),
  },
  autopath: {
    file: 'autopath.sqlite',
    holds: 'learned autopaths and observations (L1)',
    without: WITHOUT_MEMORY,
    open: (location) => createAutopathStore(location),
  },
  gaps: {
    file: 'terminator.sqlite',
    holds: 'the gap log of requests Metnos could not serve',
    without: 'this turn ran without the gap log: a dead end is not counted',
    open: (location) => createGapLog(location),
  },
  mnestome: {
    file: 'mnestome.sqlite',
    holds: 'the mnestome: passages between executors and proto-mnests',
    without: 'this turn ran without the mnestome: the passages it made are not kept',
    open: (location) => createMnestome(location),
  },
  synt: {
    file: 'synt.sqlite',
    holds: "the synt's proposals and generation runs, with each model call's lineage",
    without: 'the synt ran without its record',
    open: (location) => createSyntStore(location),
  },
  fillers: {
    file: 'fillers.sqlite',
    holds: "the fillers' answers, so a remembered plan asks no model again",
    without: 'this turn kept the answers of its fillers in memory only',
    open: (location) => createFillerCache(location),
  },
  scratchpad: {
    file: 'scratchpad.db',
    holds: 'the scratchpad of large results',
    without: 'this turn kept its scratchpad in memory only',
    open: (location) => createScratchpad(location),
  },
} as const satisfies Record<string, StoreSpec>;

export type StoreName = keyof typeof STORES;

/** The file of a store in the data folder. */
export function storePath(data: string, name: StoreName): string {
  return join(data, STORES[name].file);
}

/** A store that could not be opened for this run: the error, and what the run did without. */
export interface StoreNotice {
  store: StoreName;
  error: StoreError;
}

/**
 * Opens a store of the data folder with `open`; when its file cannot be used
 * ({@link StoreError}: not a database, damaged, a folder), opens an empty
 * in-memory store instead, so the run goes on without what the file held,
 * and records a notice to tell the user.
 *
 * @example
 * const notices: StoreNotice[] = [];
 * const fastpath = openOrDoWithout('fastpath', data, (at) => createFastpathStore(at), notices);
 */
export function openOrDoWithout<T>(
  store: StoreName,
  data: string,
  open: (location: { path: string }) => T,
  notices: StoreNotice[],
): T {
  try {
    return open({ path: storePath(data, store) });
  } catch (error) {
    if (!StoreError.isInstance(error)) throw error;
    notices.push({ store, error });
    return open({ path: ':memory:' });
  }
}

/** The notices as lines for stderr: the problem with the file and its fix, then what the run did without. */
export function formatNotices(notices: readonly StoreNotice[]): string[] {
  const said = new Set<string>();
  const lines: string[] = [];
  for (const { store, error } of notices) {
    lines.push(`warning: ${error.message}`);
    const without = STORES[store].without;
    if (!said.has(without)) lines.push(`  ${without}.`);
    said.add(without);
  }
  return lines;
}
