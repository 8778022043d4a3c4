import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import Database from 'better-sqlite3';
import { StoreError, type StoreFailure } from '../errors.ts';
import { migrateStore, type StoreMigrations } from './migrations.ts';

/** Storage accepts an open better-sqlite3 database or a file path. */
export type StoreLocation = { db: Database.Database } | { path: string };

/**
 * How long a statement waits for another connection's write lock before
 * SQLITE_BUSY: a writer in another process (`metnos ask` beside a server) is
 * waited for, not failed on. better-sqlite3's default, said here.
 */
export const BUSY_TIMEOUT_MS = 5000;

/** SQLite's files beside a database in WAL mode, which belong to it. */
const COMPANIONS = ['-wal', '-shm', '-journal'];

function failureOf(error: unknown, file: string): StoreFailure {
  const code = String((error as { code?: unknown })?.code ?? '');
  if (code === 'SQLITE_NOTADB') return 'not_a_database';
  if (code.startsWith('SQLITE_CORRUPT')) return 'corrupt';
  return isFolder(file) ? 'not_a_file' : 'unopenable';
}

function isFolder(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** The error every store throws for a file it cannot use, whatever SQLite or the file system said. */
function storeError(error: unknown, file: string): StoreError {
  if (StoreError.isInstance(error)) return error;
  const reason = failureOf(error, file);
  const detail = reason === 'unopenable' ? (error as Error)?.message : undefined;
  return new StoreError({ file, reason, detail, cause: error });
}

/**
 * Opens a SQLite database in WAL mode with a busy timeout of
 * {@link BUSY_TIMEOUT_MS}, so a kill -9 leaves it consistent, and
 * brings it up to the schema of `migrations` (see {@link migrateStore}: a file
 * from before migrations is adopted, one from a newer Metnos refused). A file
 * is checked whole with `PRAGMA quick_check` first (about 14 ms for a 20 MB
 * store), so damage shows here rather than halfway through a turn. Throws
 * {@link StoreError} naming the file and the fix when the file is not a
 * database, is damaged, is a folder, cannot be opened, or was written by a
 * newer Metnos.
 *
 * @example
 * const { client, owned } = openDatabase({ path: 'data/fastpaths.sqlite' }, autopathStoreMigrations());
 */
export function openDatabase(
  location: StoreLocation,
  migrations?: StoreMigrations,
): { client: Database.Database; owned: boolean } {
  if ('db' in location) {
    try {
      if (migrations) migrateStore(location.db, location.db.name, migrations);
    } catch (error) {
      throw storeError(error, location.db.name);
    }
    return { client: location.db, owned: false };
  }
  const file = location.path;
  let client: Database.Database | undefined;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    client = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = NORMAL');
    const check = client.pragma('quick_check', { simple: true });
    if (check !== 'ok')
      throw new StoreError({ file, reason: 'corrupt', detail: String(check).slice(0, 200) });
    if (migrations) migrateStore(client, file, migrations);
    return { client, owned: true };
  } catch (error) {
    client?.close();
    throw storeError(error, file);
  }
}

/**
 * Moves a store file that cannot be used out of the way, with its WAL and
 * shared-memory files, to `<file>.corrupt-<time>`; the next open creates a
 * fresh store. Returns the new name. Nothing is deleted: what the file held
 * can still be recovered by hand (`sqlite3 <file> .recover`).
 *
 * @example
 * moveStoreAside('/home/ada/.local/share/metnos/fastpaths.sqlite'); // '…/fastpaths.sqlite.corrupt-2026-05-02T10-00-00-000Z'
 */
export function moveStoreAside(file: string, now: Date = new Date()): string {
  const aside = `${file}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, aside);
  for (const suffix of COMPANIONS) {
    if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
  }
  return aside;
}

/** The deepest JSON a store reads back: twice `MAX_JSON_DEPTH`, room for a plan around its arguments. */
export const MAX_STORED_JSON_DEPTH = MAX_JSON_DEPTH * 2;

/**
 * JSON text a store wrote, read back. A damaged row (not JSON, or nested
 * deeper than {@link MAX_STORED_JSON_DEPTH}, which no plan reaches) gives
 * `undefined`, and the store skips that row instead of failing every lookup.
 *
 * @example
 * readStoredJson('["path_1"]'); // ['path_1']
 * readStoredJson('{"steps": [tr'); // undefined
 */
export function readStoredJson(text: string): unknown {
  if (jsonTextDepth(text) > MAX_STORED_JSON_DEPTH) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A Float32Array as a BLOB and back. */
export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function blobToVector(blob: Buffer | Uint8Array | null | undefined): Float32Array | undefined {
  if (!blob || blob.byteLength === 0) return undefined;
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}

/** Cosine of two L2-normalised vectors (their dot product). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/** The plan columns L0 and L1 rows share, as stored. */
export interface StoredPlanColumns {
  template: string;
  slots: string;
  tools: string;
  qualifiers: string | null;
  pinned: string | null;
}

/**
 * Reads the plan columns of an L0 or L1 row; undefined when any of them is
 * damaged, so lookups skip the row instead of failing.
 *
 * @example
 * const plan = readPlanColumns(row);
 * if (plan) use(plan.template, plan.slots);
 */
export function readPlanColumns(row: StoredPlanColumns):
  | {
      template: unknown;
      slots: string[];
      tools: Array<{ name: string; version: string }>;
      qualifiers: string[] | undefined;
      pinned: Record<string, string>;
    }
  | undefined {
  const template = readStoredJson(row.template);
  const slots = readStoredJson(row.slots);
  const tools = readStoredJson(row.tools);
  if (template === undefined || !Array.isArray(slots) || !Array.isArray(tools)) return undefined;
  const qualifiers = row.qualifiers === null ? undefined : readStoredJson(row.qualifiers);
  const pinned = row.pinned === null ? {} : readStoredJson(row.pinned);
  if (qualifiers !== undefined && !Array.isArray(qualifiers)) return undefined;
  if (pinned === null || typeof pinned !== 'object' || Array.isArray(pinned)) return undefined;
  // the items' shapes are what the stores wrote; only the containers are checked, as before
  return {
    template,
    slots: slots as string[],
    tools: tools as Array<{ name: string; version: string }>,
    qualifiers: qualifiers as string[] | undefined,
    pinned: pinned as Record<string, string>,
  };
}
