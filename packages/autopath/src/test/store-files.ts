import Database from 'better-sqlite3';
import { StoreError } from '../errors.ts';

/**
 * Runs `read` on a store file through a plain better-sqlite3 client of its
 * own, closed afterwards: how a test looks inside a file a store wrote, or
 * writes into it what no store would.
 *
 * @example
 * const count = readStoreFile(path, (db) => db.prepare('SELECT count(*) AS n FROM fastpaths').get());
 */
export function readStoreFile<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * Makes a file the way a Metnos before migrations did: WAL mode, the SQL its
 * stores ran at open, then whatever rows `fill` inserts.
 *
 * @example
 * const path = writeLegacyStoreFile(join(dir, 'fastpaths.sqlite'), LEGACY_FASTPATH_SQL, (db) => db.exec('INSERT …'));
 */
export function writeLegacyStoreFile(
  path: string,
  sql: string,
  fill: (db: Database.Database) => void = () => {},
): string {
  readStoreFile(path, (db) => {
    db.pragma('journal_mode = WAL');
    db.exec(sql);
    fill(db);
  });
  return path;
}

/**
 * The hashes of the migrations a file records in `table`, oldest first.
 *
 * @example
 * expect(recordedMigrations(path, '__drizzle_migrations_autopath')).toHaveLength(1);
 */
export function recordedMigrations(path: string, table: string): string[] {
  return readStoreFile(path, (db) =>
    (db.prepare(`SELECT hash FROM "${table}" ORDER BY created_at`).all() as Array<{ hash: string }>).map(
      (row) => row.hash,
    ),
  );
}

/**
 * The {@link StoreError} that `open` throws; anything else it throws is
 * passed on, and opening without an error fails the test.
 *
 * @example
 * expect(storeErrorFrom(() => createFastpathStore({ path })).reason).toBe('written_by_newer');
 */
export function storeErrorFrom(open: () => unknown): StoreError {
  try {
    open();
  } catch (error) {
    if (StoreError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the store opened, but should have been refused');
}
