import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The file in the data folder whose write lock says which server owns the stores. */
export const OWNER_FILE = 'serve.lock';

/** Another live process owns the data folder's stores. */
export class StoresOwnedError extends Error {
  readonly dataDir: string;
  /** The owner's process id, when it could be read. */
  readonly pid: number | undefined;
  constructor(dataDir: string, pid: number | undefined) {
    super(
      `another metnos serve${pid === undefined ? '' : ` (pid ${pid})`} owns the stores in ${dataDir}; stop it first, or serve another workspace`,
    );
    this.name = 'StoresOwnedError';
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

/** What {@link claimStores} hands back: the claim, held until `release`. */
export interface StoresClaim {
  readonly file: string;
  /** Gives the stores up; a second call does nothing. */
  release(): void;
}

const isBusy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown })?.code));

function ownerPid(db: Database.Database): number | undefined {
  try {
    const row = db.prepare('SELECT pid FROM owner WHERE id = 1').get() as { pid?: unknown } | undefined;
    return typeof row?.pid === 'number' ? row.pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Claims the stores of a data folder for this process: `<data>/serve.lock` is
 * a small SQLite file whose write lock (an open `BEGIN IMMEDIATE`) this
 * process holds until `release` or until it dies. The operating system drops
 * the lock with the process, so a server killed with `kill -9` leaves no
 * stale claim and the next one starts at once. A second claim while the lock
 * is held, from this process or another, throws {@link StoresOwnedError}
 * naming the owner's pid. Readers (`metnos ask`, `doctor`) are not stopped:
 * the stores are in WAL mode with a busy timeout, and they see the server's
 * writes.
 *
 * @example
 * const claim = claimStores('/home/ada/.local/share/metnos');
 * try { serve(); } finally { claim.release(); }
 */
export function claimStores(dataDir: string, pid: number = process.pid): StoresClaim {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, OWNER_FILE);
  // no busy timeout: a held lock is an answer, not something to wait for
  const db = new Database(file, { timeout: 0 });
  const take = () => db.exec('BEGIN IMMEDIATE');
  try {
    try {
      // WAL: a refused server reading the owner's pid never holds up the owner's commit
      db.pragma('journal_mode = WAL');
      take();
      db.exec(
        'CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since TEXT NOT NULL)',
      );
      db.prepare('INSERT OR REPLACE INTO owner (id, pid, since) VALUES (1, ?, ?)').run(
        pid,
        new Date().toISOString(),
      );
      // committed, so a refused second server can name this one; then the lock is taken again and kept
      db.exec('COMMIT');
      take();
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      if (!isBusy(error)) throw error;
      // the row is this process's own only when another took the lock between the two takes
      const owner = ownerPid(db);
      throw new StoresOwnedError(dataDir, owner === pid ? undefined : owner);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
    },
  };
}
