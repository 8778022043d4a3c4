import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../drizzle.config.ts';
import { createHashingEmbedder } from '../hashing-embedder.ts';
import {
  readStoreFile,
  recordedMigrations,
  storeErrorFrom,
  writeLegacyStoreFile,
} from '../test/store-files.ts';
import { describeStoreSchema, readMigrationJournal } from '../test/store-schema.ts';
import { createVectorIndex } from '../vector-index.ts';
import {
  LEGACY_AUTOPATH_SQL,
  LEGACY_FASTPATH_SQL,
  LEGACY_VECTOR_INDEX_SQL,
} from './__fixtures__/legacy-schema.ts';
import { createAutopathStore } from './autopath-store.ts';
import { createFastpathStore } from './fastpath-store.ts';
import { autopathStoreMigrations, packageMigrations } from './migrations.ts';
import * as schema from './schema.ts';
import { openDatabase } from './sqlite.ts';

const root = mkdtempSync(join(tmpdir(), 'metnos-migrations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const migrations = autopathStoreMigrations();
const known = readMigrationFiles({ migrationsFolder: migrations.folder });
let counter = 0;
const fileNamed = (name: string) => join(root, `${counter++}-${name}`);

/** A file made the way every Metnos before migrations made it: the old SQL, then rows. */
const legacyFile = (name: string, sql: string, fill?: (db: Database.Database) => void) =>
  writeLegacyStoreFile(fileNamed(name), sql, fill);
const recorded = (path: string) => recordedMigrations(path, migrations.table);
const schemaOf = (path: string) => readStoreFile(path, (db) => describeStoreSchema(db, [migrations.table]));
const tableSql = (path: string) =>
  readStoreFile(path, (db) => db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'fastpaths'`).get());

function freshFile(): string {
  const path = fileNamed('fresh.sqlite');
  createFastpathStore({ path }).close();
  return path;
}

/** The migrations folder as it was when the first migration was the only one. */
const baselineOnly = (() => {
  const folder = join(root, 'baseline-only');
  cpSync(migrations.folder, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
  journal.entries = journal.entries.slice(0, 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return { folder, table: migrations.table };
})();

/** A file with the first migration only, opened the way every store opens one. */
function baselineFile(): string {
  const path = fileNamed('baseline.sqlite');
  openDatabase({ path }, baselineOnly).client.close();
  return path;
}

/** Adopts a legacy file with the first migration only: what adoption alone does to it. */
const adoptOnly = (path: string) => openDatabase({ path }, baselineOnly).client.close();

const vector = (value: number) => Buffer.from(new Float32Array(8).fill(value).buffer);

describe('the first migration', () => {
  it('creates the tables, columns, unique keys, indexes and trigger the stores created before migrations', () => {
    const legacy = legacyFile(
      'all-legacy.sqlite',
      LEGACY_FASTPATH_SQL + LEGACY_AUTOPATH_SQL + LEGACY_VECTOR_INDEX_SQL,
    );
    const before = schemaOf(legacy);
    const after = schemaOf(baselineFile());
    expect(Object.keys(after.tables).sort()).toEqual([
      'anti_autopaths',
      'autopaths',
      'clusters',
      'fastpaths',
      'memory_vectors',
      'observations',
    ]);
    expect(after.tables).toEqual(before.tables);
    expect(after.triggers).toEqual(before.triggers);
  });

  it('has been generated from the drizzle schema: no change to it lacks a migration', async () => {
    const { snapshot } = readMigrationJournal(migrations.folder);
    const current = await generateSQLiteDrizzleJson(schema);
    const pending = await generateSQLiteMigration(snapshot as never, current as never);
    expect(pending, 'run `pnpm --filter @metnos/autopath db:generate --name=<change>`').toEqual([]);
  });

  it('is found where drizzle.config.ts writes it, and recorded in the table it names', () => {
    const times = known.map((migration) => migration.folderMillis);
    expect(times, 'each migration is dated after the one before it').toEqual(
      [...times].sort((a, b) => a - b),
    );
    expect(new Set(times).size).toBe(times.length);
    const packageRoot = resolve(import.meta.dirname, '../..');
    expect(resolve(packageRoot, config.out ?? '')).toBe(migrations.folder);
    expect(resolve(packageRoot, String(config.schema))).toBe(resolve(import.meta.dirname, 'schema.ts'));
    expect(config.migrations?.table).toBe(migrations.table);
  });

  it('is found from a built dist/ as from src/', () => {
    const packageRoot = resolve(import.meta.dirname, '../..');
    for (const built of ['dist/stores/index.js', 'dist/index.js', 'dist/chunk-ABC123.js']) {
      const url = pathToFileURL(join(packageRoot, built)).href;
      expect(packageMigrations(url, 't').folder).toBe(join(packageRoot, 'drizzle'));
    }
  });
});

describe('a file from before migrations', () => {
  it('is adopted by the L0 store: rows read back, tables kept as they were, the baseline recorded', () => {
    const path = legacyFile('fastpaths.sqlite', LEGACY_FASTPATH_SQL, (db) => {
      const insert = db.prepare(
        `INSERT INTO fastpaths (id, fingerprint, request, template, slots, tools, vector, uses, created_at, last_used_at)
         VALUES (?, ?, ?, ?, '[]', '[{"name":"fs_read","version":"1.0.0"}]', ?, ?, '2026-04-01T10:00:00.000Z', NULL)`,
      );
      insert.run('old-1', 'read a', 'read a.md', '{"steps":[{"tool":"fs_read"}]}', vector(0.1), 3);
      insert.run('old-2', 'read b', 'read b.md', '{"steps":[]}', vector(0.2), 0);
    });
    const created = tableSql(path);
    adoptOnly(path);
    expect(tableSql(path)).toEqual(created);
    expect(recorded(path)).toEqual([known[0]!.hash]);

    const store = createFastpathStore({ path });
    expect(store.list().map((entry) => [entry.id, entry.request, entry.uses])).toEqual([
      ['old-1', 'read a.md', 3],
      ['old-2', 'read b.md', 0],
    ]);
    expect(store.list()[0]).toMatchObject({ qualifiers: undefined, pinned: {}, embedderId: undefined });
    expect(store.byFingerprint('read a')?.template).toEqual({ steps: [{ tool: 'fs_read' }] });
    expect(() =>
      readStoreFile(path, (db) =>
        db
          .prepare(`INSERT INTO fastpaths (id, fingerprint, request, template, slots, tools, uses, created_at)
                    VALUES ('x', 'read a', 'r', '{}', '[]', '[]', 0, 'now')`)
          .run(),
      ),
    ).toThrow(/UNIQUE/);
    store.save({ fingerprint: 'read c', request: 'read c.md', template: {}, slots: [], tools: [] });
    store.close();

    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
    expect(schemaOf(path)).toEqual(schemaOf(freshFile()));
  });

  it('is adopted by the L1 store: autopaths, clusters and observations read back, still append-only', () => {
    const path = legacyFile('autopath.sqlite', LEGACY_AUTOPATH_SQL, (db) => {
      db.prepare(`INSERT INTO clusters VALUES ('c1', ?, 2, '2026-04-01T10:00:00.000Z')`).run(vector(0.3));
      db.prepare(
        `INSERT INTO autopaths VALUES ('a1', 'c1', 'intent-read', 'plan-1', '{"steps":[]}', '[]', '[]',
         4, 4, 0, 400, 1, 0, 0.8, 'champion', '2026-04-01T10:00:00.000Z', '2026-04-02T10:00:00.000Z')`,
      ).run();
      db.prepare(
        `INSERT INTO observations (ts, turn_id, request, layer, latency_ms, outcome)
         VALUES ('2026-04-02T10:00:00.000Z', 'turn-1', 'read a.md', 'autopath', 12, 'success')`,
      ).run();
    });
    const store = createAutopathStore({ path });
    expect(store.list()).toMatchObject([{ id: 'a1', clusterId: 'c1', status: 'champion', uses: 4 }]);
    expect(store.championForIntent('intent-read')?.planHash).toBe('plan-1');
    expect(store.nearestCluster(new Float32Array(8).fill(0.3))?.id).toBe('c1');
    expect(store.observations('turn-1')).toHaveLength(1);
    store.close();
    expect(() => readStoreFile(path, (db) => db.prepare('DELETE FROM observations').run())).toThrow(
      /append-only/,
    );
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
    expect(schemaOf(path)).toEqual(schemaOf(freshFile()));
  });

  it('is adopted by the vector index: stored requests read back (and are re-embedded)', async () => {
    const path = legacyFile('memory.sqlite', LEGACY_VECTOR_INDEX_SQL, (db) => {
      const insert = db.prepare(
        `INSERT INTO memory_vectors VALUES (?, 'default', ?, ?, 'an-old-embedder', ?, '2026-04-01T10:00:00.000Z')`,
      );
      insert.run('v1', 'play some jazz', 'music', vector(0.5));
      insert.run('v2', 'will it rain tomorrow', 'weather', vector(0.5));
    });
    const index = await createVectorIndex({ path }, createHashingEmbedder());
    expect(index.entries().map((entry) => [entry.id, entry.label])).toEqual([
      ['v1', 'music'],
      ['v2', 'weather'],
    ]);
    expect((await index.search('jazz please', 1))[0]?.id).toBe('v1');
    index.close();
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
  });
});

describe('opening a store', () => {
  it('gives a fresh file every migration, recorded in the package table', () => {
    const path = freshFile();
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
    expect(schemaOf(path).objects).toContain('trigger observations_append_only');
  });

  it('twice changes nothing the second time, and keeps the rows', () => {
    for (const made of [freshFile(), legacyFile('twice.sqlite', LEGACY_FASTPATH_SQL)]) {
      const first = createFastpathStore({ path: made });
      first.save({ fingerprint: 'f', request: 'read f.md', template: {}, slots: [], tools: [] });
      first.close();
      const schemaBefore = schemaOf(made);
      const recordedBefore = recorded(made);
      const second = createFastpathStore({ path: made });
      expect(second.list().map((entry) => entry.fingerprint)).toEqual(['f']);
      second.close();
      expect(schemaOf(made)).toEqual(schemaBefore);
      expect(recorded(made)).toEqual(recordedBefore);
      expect(recordedBefore).toHaveLength(known.length);
    }
  });

  it('applies a later migration to a fresh file and to an adopted one alike', () => {
    const folder = join(root, `later-${counter++}`);
    cpSync(migrations.folder, folder, { recursive: true });
    const journalFile = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
    const last = journal.entries.at(-1);
    journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag: '9999_later' });
    writeFileSync(journalFile, JSON.stringify(journal));
    writeFileSync(join(folder, '9999_later.sql'), 'ALTER TABLE `fastpaths` ADD `note` text;');
    const later = { folder, table: migrations.table };

    const legacy = legacyFile('later-legacy.sqlite', LEGACY_FASTPATH_SQL, (db) => {
      db.prepare(
        `INSERT INTO fastpaths VALUES ('old', 'f', 'r', '{}', '[]', '[]', NULL, 0, '2026-04-01T10:00:00.000Z', NULL)`,
      ).run();
    });
    for (const path of [freshFile(), legacy]) {
      const { client } = openDatabase({ path }, later);
      const columns = (client.pragma('table_info(fastpaths)') as Array<{ name: string }>).map(
        (column) => column.name,
      );
      client.close();
      expect(columns).toContain('note');
      expect(recorded(path)).toHaveLength(known.length + 1);
    }
    expect(readStoreFile(legacy, (db) => db.prepare('SELECT id, note FROM fastpaths').all())).toEqual([
      { id: 'old', note: null },
    ]);
    expect(storeErrorFrom(() => createFastpathStore({ path: legacy })).reason).toBe('written_by_newer');
  });

  it('refuses to leave out a later migration dated before the last one a file has', () => {
    const folder = join(root, `misdated-${counter++}`);
    cpSync(migrations.folder, folder, { recursive: true });
    const journalFile = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8'));
    const last = journal.entries.at(-1);
    journal.entries.push({ ...last, idx: last.idx + 1, when: last.when - 1000, tag: '9999_misdated' });
    writeFileSync(journalFile, JSON.stringify(journal));
    writeFileSync(join(folder, '9999_misdated.sql'), 'ALTER TABLE `fastpaths` ADD `note` text;');
    const error = storeErrorFrom(() =>
      openDatabase({ path: freshFile() }, { folder, table: migrations.table }),
    );
    expect(error.reason).toBe('unopenable');
    expect(error.message).toMatch(/was not applied: drizzle applies only migrations dated after/);
  });
});

describe('a file written by a newer Metnos', () => {
  function newerFile(): string {
    const path = freshFile();
    readStoreFile(path, (db) => {
      db.prepare(`INSERT INTO "${migrations.table}" (hash, created_at) VALUES (?, ?)`).run(
        'f'.repeat(64),
        known.at(-1)!.folderMillis + 1,
      );
      db.exec('CREATE TABLE from_the_future (id TEXT)');
    });
    return path;
  }

  it('is refused by every store with a StoreError that names the file, and left untouched', async () => {
    const path = newerFile();
    const bytes = readFileSync(path);
    for (const open of [
      () => createFastpathStore({ path }),
      () => createAutopathStore({ path }),
      () => readStoreFile(path, (db) => openDatabase({ db }, migrations)),
    ]) {
      const error = storeErrorFrom(open);
      expect(error).toMatchObject({ file: path, reason: 'written_by_newer', code: 'store_written_by_newer' });
      expect(error.message).toContain(path);
      expect(error.message).toMatch(/was written by a newer Metnos/);
    }
    await expect(createVectorIndex({ path }, createHashingEmbedder())).rejects.toMatchObject({
      reason: 'written_by_newer',
    });
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(recorded(path)).toHaveLength(known.length + 1);
  });
});
