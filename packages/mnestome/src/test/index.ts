import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * Overwrites the first 8 KB of a store file and of its WAL and shared-memory
 * files with junk, behind SQLite's back: the next statement of a connection
 * still open on it fails with "file is not a database". What tests of
 * fail-safe writes damage a mnestome with.
 *
 * @example
 * const mnestome = createMnestome({ path: file });
 * damageOpenStore(file);
 * mnestome.recordPassing('fs_read', 'fs_write', true); // reported to onError, not thrown
 */
export function damageOpenStore(file: string): void {
  for (const part of [file, `${file}-wal`, `${file}-shm`]) {
    const handle = openSync(part, 'r+');
    try {
      writeSync(handle, Buffer.alloc(8192, 0x5a), 0, 8192, 0);
    } finally {
      closeSync(handle);
    }
  }
}
