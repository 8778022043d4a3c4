import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreError, type StoreFailure } from '../errors.ts';
import { createAutopathStore } from './autopath-store.ts';
import { createFastpathStore } from './fastpath-store.ts';
import { BUSY_TIMEOUT_MS, moveStoreAside, openDatabase } from './sqlite.ts';

const folder = mkdtempSync(join(tmpdir(), 'metnos-stores-'));

/** A real fast-path store with enough rows to span many pages, closed and checkpointed. */
function filledStore(name: string): string {
  const path = join(folder, name);
  const store = createFastpathStore({ path });
  for (let index = 0; index < 200; index++) {
    store.save({
      fingerprint: `f${index}`,
      request: `request ${index}`,
      template: { steps: [{ tool: 'fs_read', args: { path: `notes/${index}.md`, pad: 'x'.repeat(200) } }] },
      slots: [],
      tools: [{ name: 'fs_read', version: '1.0.0' }],
      vector: new Float32Array(64).fill(index / 200),
    });
  }
  store.close();
  return path;
}

function failureOpening(path: string): StoreError {
  try {
    createFastpathStore({ path }).close();
  } catch (error) {
    if (StoreError.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`${path} opened but should have been refused`);
}

const SPOILERS: Array<[string, (path: string) => void, StoreFailure]> = [
  [
    'garbage bytes over the whole file',
    (path) => writeFileSync(path, Buffer.from('not a database, just garbage bytes. '.repeat(200))),
    'not_a_database',
  ],
  [
    'garbage bytes in the middle pages',
    (path) => {
      const bytes = readFileSync(path);
      for (let index = 8192; index < bytes.length; index += 3) bytes[index] = 0x5a;
      writeFileSync(path, bytes);
    },
    'corrupt',
  ],
  ['truncated to half', (path) => truncateSync(path, Math.floor(statSync(path).size / 2)), 'corrupt'],
  ['truncated to 100 bytes', (path) => truncateSync(path, 100), 'corrupt'],
];

describe('a store file that cannot be used', () => {
  it.each(SPOILERS)('is refused with a StoreError naming the file and the fix: %s', (_, spoil, reason) => {
    const path = filledStore(`${reason}-${Math.random()}.sqlite`);
    spoil(path);
    const error = failureOpening(path);
    expect(error).toMatchObject({ name: 'StoreError', file: path, reason, code: `store_${reason}` });
    expect(error.message).toContain(path);
    expect(error.message).toContain('metnos doctor --repair');
  });

  it('is refused when its path is a folder, by both stores', () => {
    const path = join(folder, 'a-folder.sqlite');
    mkdirSync(path);
    expect(failureOpening(path)).toMatchObject({ reason: 'not_a_file', file: path });
    expect(() => createAutopathStore({ path })).toThrow(/is a folder, where a database file should be/);
  });

  it('is moved aside with its WAL files, and the next open starts a fresh, working store', () => {
    const path = filledStore('aside.sqlite');
    writeFileSync(`${path}-wal`, 'left over');
    writeFileSync(path, 'garbage');
    const aside = moveStoreAside(path, new Date('2026-05-02T10:00:00.000Z'));
    expect(aside).toBe(`${path}.corrupt-2026-05-02T10-00-00-000Z`);
    expect(readFileSync(aside, 'utf8')).toBe('garbage');
    expect(readFileSync(`${aside}-wal`, 'utf8')).toBe('left over');
    expect(existsSync(`${path}-wal`)).toBe(false);
    const fresh = createFastpathStore({ path });
    expect(fresh.list()).toEqual([]);
    fresh.close();
  });

  it('opens a healthy file, and an empty file as a new store', () => {
    const healthy = createFastpathStore({ path: filledStore('healthy.sqlite') });
    expect(healthy.list()).toHaveLength(200);
    healthy.close();
    const empty = join(folder, 'empty.sqlite');
    writeFileSync(empty, '');
    const store = createFastpathStore({ path: empty });
    expect(store.list()).toEqual([]);
    store.close();
  });
});

describe('a store file', () => {
  it('is opened in WAL mode with a busy timeout, so a writer in another process is waited for', () => {
    const { client } = openDatabase({ path: join(folder, 'modes.sqlite') });
    expect(client.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(client.pragma('busy_timeout', { simple: true })).toBe(BUSY_TIMEOUT_MS);
    client.close();
  });
});

describe('a damaged row in a healthy file', () => {
  it('is skipped by every lookup instead of failing them all', () => {
    const path = filledStore('rows.sqlite');
    const store = createFastpathStore({ path });
    const raw = new Database(path);
    raw.prepare(`UPDATE fastpaths SET template = '{"steps": [tr' WHERE fingerprint = 'f1'`).run();
    raw
      .prepare(`UPDATE fastpaths SET tools = ? WHERE fingerprint = 'f2'`)
      .run(`${'['.repeat(5_000)}${']'.repeat(5_000)}`);
    raw.close();
    expect(store.byFingerprint('f1')).toBeUndefined();
    expect(store.byFingerprint('f2')).toBeUndefined();
    expect(store.byFingerprint('f3')).toMatchObject({ fingerprint: 'f3' });
    expect(store.list()).toHaveLength(198);
    expect(store.nearest(new Float32Array(64).fill(0.5), 3)).toHaveLength(3);
    store.close();

    const autopathFile = join(folder, 'autopath-rows.sqlite');
    const autopath = createAutopathStore({ path: autopathFile });
    const vector = new Float32Array(8).fill(Math.SQRT1_2 / 2);
    const cluster = autopath.assignCluster(vector);
    for (const planHash of ['good', 'bad']) {
      const entry = { clusterId: cluster.id, intentHash: 'read', planHash, slots: [], tools: [] };
      autopath.recordSuccess({ ...entry, template: { steps: [] }, latencyMs: 1 });
    }
    const damage = new Database(autopathFile);
    damage.prepare(`UPDATE autopaths SET slots = 'oops' WHERE plan_hash = 'bad'`).run();
    damage.close();
    expect(autopath.list().map((entry) => entry.planHash)).toEqual(['good']);
    autopath.close();
  });
});
