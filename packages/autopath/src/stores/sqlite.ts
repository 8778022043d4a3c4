import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/** Storage accepts an open better-sqlite3 database or a file path. */
export type StoreLocation = { db: Database.Database } | { path: string };

/** Opens (or adopts) a SQLite database in WAL mode, so a kill -9 leaves it consistent. */
export function openDatabase(location: StoreLocation): { client: Database.Database; owned: boolean } {
  if ('db' in location) return { client: location.db, owned: false };
  if (location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
  const client = new Database(location.path);
  client.pragma('journal_mode = WAL');
  client.pragma('synchronous = NORMAL');
  return { client, owned: true };
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
