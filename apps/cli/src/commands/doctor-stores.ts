import { lstatSync } from 'node:fs';
import { moveStoreAside, StoreError } from '@metnos/autopath/stores';
import { STORES, type StoreName, storePath } from '../stores.ts';

/** The state of one store of the data folder, as `metnos doctor` reports it. */
export interface StoreFinding {
  store: StoreName;
  file: string;
  /** `repaired`: it was bad, was moved aside, and a fresh store now stands in its place. */
  state: 'ok' | 'absent' | 'bad' | 'repaired';
  detail: string;
  fix?: string;
  /** Where a repaired store's old file went. */
  movedTo?: string;
}

function checkStore(store: StoreName, data: string, repair: boolean, now: () => Date): StoreFinding {
  const spec = STORES[store];
  const file = storePath(data, store);
  if (!lstatSync(file, { throwIfNoEntry: false }))
    return { store, file, state: 'absent', detail: `${spec.holds}: not created yet` };
  try {
    spec.open({ path: file }).close();
    return { store, file, state: 'ok', detail: `${spec.holds}: opens and checks out` };
  } catch (error) {
    if (!StoreError.isInstance(error)) throw error;
    // a newer Metnos wrote it: nothing is wrong with the file, and moving it aside would lose it
    if (error.reason === 'written_by_newer')
      return {
        store,
        file,
        state: 'bad',
        detail: error.message,
        fix: 'update Metnos; --repair leaves this file alone',
      };
    if (!repair) return { store, file, state: 'bad', detail: error.message, fix: 'metnos doctor --repair' };
    try {
      const movedTo = moveStoreAside(file, now());
      spec.open({ path: file }).close();
      return {
        store,
        file,
        state: 'repaired',
        movedTo,
        detail: `${spec.holds}: the old file (${error.reason}) is now ${movedTo}; a fresh, empty store was created`,
      };
    } catch (repairError) {
      return {
        store,
        file,
        state: 'bad',
        detail: `${error.message} Repair failed: ${(repairError as Error).message}`,
        fix: `move ${file} aside by hand`,
      };
    }
  }
}

/**
 * Opens every store of the data folder (remembered plans, autopaths, the gap
 * log, the scratchpad) and says which are fine, absent or unusable. With
 * `repair`, each unusable file is moved aside (`<file>.corrupt-<time>`) and a
 * fresh store is created in its place. Files that do not exist are left alone.
 *
 * @example
 * const findings = storeFindings('/home/ada/.local/share/metnos', { repair: true });
 */
export function storeFindings(
  data: string,
  options: { repair?: boolean; now?: () => Date } = {},
): StoreFinding[] {
  const now = options.now ?? (() => new Date());
  return (Object.keys(STORES) as StoreName[]).map((store) =>
    checkStore(store, data, options.repair ?? false, now),
  );
}

/** The findings as text, one line each, failures with their fix. */
export function formatStores(data: string, findings: readonly StoreFinding[]): string {
  const lines = [`stores (${data}):`];
  for (const finding of findings) {
    const mark = finding.state === 'bad' ? 'no ' : 'ok ';
    lines.push(`  ${mark} ${STORES[finding.store].file.padEnd(18)} ${finding.state}: ${finding.detail}`);
    if (finding.fix) lines.push(`       fix: ${finding.fix}`);
  }
  return lines.join('\n');
}
