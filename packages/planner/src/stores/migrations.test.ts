import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createFastpathStore } from '@metnos/autopath/stores';
import {
  describeStoreSchema,
  readMigrationJournal,
  readStoreFile,
  recordedMigrations,
  storeErrorFrom,
  writeLegacyStoreFile,
} from '@metnos/autopath/test';
import type Database from 'better-sqlite3';
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../drizzle.config.ts';
import { LEGACY_GAP_LOG_SQL, LEGACY_SCRATCHPAD_SQL } from '../__fixtures__/legacy-schema.ts';
import { createGapLog } from '../engine/terminator.ts';
import { createScratchpad } from '../scratchpad.ts';
import { plannerStoreMigrations } from './migrations.ts';
import * as schema from './schema.ts';

const require = createRequire(import.meta.url);
const root = mkdtempSync(join(tmpdir(), 'metnos-planner-migrations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const migrations = plannerStoreMigrations();
const known = readMigrationFiles({ migrationsFolder: migrations.folder });
let counter = 0;
const fileNamed = (name: string) => join(root, `${counter++}-${name}`);

const recorded = (path: string, table = migrations.table) => recordedMigrations(path, table);
const schemaOf = (path: string) => readStoreFile(path, (db) => describeStoreSchema(db, [migrations.table]));
/** The tables of the baseline alone: later migrations add `pinned_properties` and `filler_answers`. */
const baselineOf = (path: string) =>
  readStoreFile(path, (db) =>
    describeStoreSchema(db, [migrations.table, 'pinned_properties', 'filler_answers', 'agent_memory']),
  );
const ALL_TABLES = [
  'agent_memory',
  'filler_answers',
  'pinned_properties',
  'scratchpad_entries',
  'terminator_gaps',
];
const legacyFile = (name: string, sql: string, fill?: (db: Database.Database) => void) =>
  writeLegacyStoreFile(fileNamed(name), sql, fill);

function freshFile(): string {
  const path = fileNamed('fresh.sqlite');
  createScratchpad({ path }).close();
  return path;
}

describe('the first migration of the scratchpad and the gap log', () => {
  it('creates the tables, columns, unique keys and indexes they created before migrations', () => {
    const before = schemaOf(legacyFile('legacy.sqlite', LEGACY_SCRATCHPAD_SQL + LEGACY_GAP_LOG_SQL));
    const fresh = freshFile();
    expect(Object.keys(schemaOf(fresh).tables).sort()).toEqual(ALL_TABLES);
    const after = baselineOf(fresh);
    expect(Object.keys(after.tables).sort()).toEqual(['scratchpad_entries', 'terminator_gaps']);
    expect(after.tables).toEqual(before.tables);
    expect(after.objects).toEqual(before.objects);
  });

  it('has been generated from the drizzle schema: no change to it lacks a migration', async () => {
    const { snapshot } = readMigrationJournal(migrations.folder);
    const pending = await generateSQLiteMigration(
      snapshot as never,
      (await generateSQLiteDrizzleJson(schema)) as never,
    );
    expect(pending, 'run `pnpm --filter @metnos/planner db:generate -- --name=<change>`').toEqual([]);
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
});

describe('a scratchpad or gap log file from before migrations', () => {
  it('is adopted: rows read back, the gap counter goes on, the baseline is recorded once', () => {
    const path = legacyFile('runtime.sqlite', LEGACY_SCRATCHPAD_SQL + LEGACY_GAP_LOG_SQL, (db) => {
      db.prepare(
        `INSERT INTO scratchpad_entries VALUES ('s1', 'turn-1', 'text', 9, 'HEAD-TAIL', '{}', '2026-04-01T10:00:00.000Z')`,
      ).run();
      db.prepare(
        `INSERT INTO terminator_gaps (cause, signature, example, detail, count, first_seen, last_seen)
         VALUES ('no_capability', ?, 'send a mail', 'no mail executor', 2, '2026-04-01', '2026-04-02')`,
      ).run('0b5dbb5c7f7b2c9e4d2a7a41');
    });
    const scratchpad = createScratchpad({ path });
    expect(scratchpad.read('turn-1', 's1', { mode: 'full' })).toEqual({
      content: 'HEAD-TAIL',
      total_chars: 9,
    });
    scratchpad.close();
    const gaps = createGapLog({ path });
    expect(gaps.list()).toMatchObject([{ cause: 'no_capability', example: 'send a mail', count: 2 }]);
    gaps.record({ cause: 'blocked', signature: 'rm -rf', example: 'delete all', detail: 'vaglio' });
    expect(
      gaps.record({ cause: 'blocked', signature: 'rm -rf', example: 'delete all', detail: 'vaglio' }),
    ).toBe(2);
    gaps.close();
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
    expect(schemaOf(path)).toEqual(schemaOf(freshFile()));
  });

  it('is adopted when it holds only one store, which gains the other table empty', () => {
    const path = legacyFile('gaps-only.sqlite', LEGACY_GAP_LOG_SQL);
    createGapLog({ path }).close();
    expect(createScratchpad({ path }).count('turn-1')).toBe(0);
    expect(Object.keys(schemaOf(path).tables).sort()).toEqual(ALL_TABLES);
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
  });
});

describe('opening the scratchpad or the gap log', () => {
  it('gives a fresh file every migration, and a second open changes nothing', () => {
    const path = freshFile();
    const scratchpad = createScratchpad({ path });
    const { scratchpad_id: id } = scratchpad.put('turn-1', 'x'.repeat(5000));
    scratchpad.close();
    const before = { schema: schemaOf(path), recorded: recorded(path) };
    expect(before.recorded).toEqual(known.map((migration) => migration.hash));
    const again = createScratchpad({ path });
    expect(again.read('turn-1', id, { mode: 'head', chars: 3 })?.content).toBe('xxx');
    again.close();
    expect({ schema: schemaOf(path), recorded: recorded(path) }).toEqual(before);
  });

  it('shares one file with the autopath stores: each package records its own migrations', () => {
    const path = fileNamed('shared.sqlite');
    for (let round = 0; round < 2; round++) {
      const fastpath = createFastpathStore({ path });
      const gaps = createGapLog({ path });
      gaps.close();
      fastpath.close();
    }
    expect(recorded(path)).toEqual(known.map((migration) => migration.hash));
    const autopathFolder = join(dirname(require.resolve('@metnos/autopath/package.json')), 'drizzle');
    expect(recorded(path, '__drizzle_migrations_autopath')).toEqual(
      readMigrationFiles({ migrationsFolder: autopathFolder }).map((migration) => migration.hash),
    );
  });

  it('refuses a file written by a newer Metnos, naming it, and leaves it untouched', () => {
    const path = freshFile();
    readStoreFile(path, (db) =>
      db
        .prepare(`INSERT INTO "${migrations.table}" (hash, created_at) VALUES (?, ?)`)
        .run('e'.repeat(64), known.at(-1)!.folderMillis + 1),
    );
    const bytes = readFileSync(path);
    for (const open of [() => createScratchpad({ path }), () => createGapLog({ path })]) {
      const error = storeErrorFrom(open);
      expect(error).toMatchObject({ file: path, reason: 'written_by_newer' });
      expect(error.message).toContain(`the store ${path} was written by a newer Metnos`);
    }
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
