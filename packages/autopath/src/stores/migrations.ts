import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator';
import { StoreError } from '../errors.ts';

/**
 * A package's migrations: the folder drizzle-kit generates into and the table
 * that records which of them a file has had. Each package has its own table,
 * so stores of two packages can share one file.
 */
export interface StoreMigrations {
  /** Absolute path of the folder holding `meta/_journal.json` and one `.sql` file per migration. */
  folder: string;
  /** The bookkeeping table (drizzle's `__drizzle_migrations`, named per package). */
  table: string;
}

/**
 * The migrations shipped in the package that holds `moduleUrl`: its
 * `drizzle/` folder, found by walking up to the package's `package.json`, so
 * the same call works from `src/` (tests, the CLI) and from a built `dist/`.
 *
 * @example
 * const migrations = packageMigrations(import.meta.url, '__drizzle_migrations_planner');
 */
export function packageMigrations(moduleUrl: string, table: string): StoreMigrations {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return { folder: join(folder, 'drizzle'), table };
    if (dirname(folder) === folder) throw new Error(`no package.json above ${start}: cannot find drizzle/`);
  }
}

let autopathMigrations: StoreMigrations | undefined;

/** The migrations of this package's stores (L0, L1, vector index), in `packages/autopath/drizzle`. */
export function autopathStoreMigrations(): StoreMigrations {
  autopathMigrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_autopath');
  return autopathMigrations;
}

/** What a statement of the first migration creates: `CREATE [UNIQUE] TABLE|INDEX|TRIGGER name`, after comments. */
const CREATES =
  /^(?:\s*--[^\n]*\n)*\s*CREATE\s+(?:UNIQUE\s+)?(TABLE|INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"]?(\w+)[`"]?/i;

function exists(client: Database.Database, type: string, name: string): boolean {
  return (
    client
      .prepare('SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?')
      .get(type.toLowerCase(), name) !== undefined
  );
}

/** The hashes a file has recorded; none when it has no bookkeeping table yet. */
function recordedHashes(client: Database.Database, table: string): string[] {
  if (!exists(client, 'table', table)) return [];
  const rows = client.prepare(`SELECT hash FROM "${table}"`).all() as Array<{ hash: string }>;
  return rows.map((row) => row.hash);
}

function objectsOf(migration: MigrationMeta): Array<{ statement: string; type: string; name: string }> {
  return migration.sql
    .filter((statement) => statement.trim() !== '')
    .map((statement) => {
      const match = CREATES.exec(statement);
      if (!match) throw new Error(`the first migration may only create objects: ${statement.slice(0, 80)}`);
      return { statement, type: match[1]!, name: match[2]! };
    });
}

/**
 * A file written before the stores had migrations holds some of the first
 * migration's tables and no record of any migration. It is adopted: what the
 * first migration would create and the file lacks (a table a store never
 * opened, an index) is created, nothing that exists is touched, and the first
 * migration is recorded as applied — the bookkeeping drizzle's `migrate` writes.
 */
function adoptLegacyFile(client: Database.Database, baseline: MigrationMeta, table: string): void {
  const objects = objectsOf(baseline);
  const legacy = objects.some(
    (object) => object.type.toUpperCase() === 'TABLE' && exists(client, 'table', object.name),
  );
  if (!legacy) return;
  for (const object of objects) if (!exists(client, object.type, object.name)) client.exec(object.statement);
  client.exec(
    `CREATE TABLE IF NOT EXISTS "${table}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
  );
  client
    .prepare(`INSERT INTO "${table}" ("hash", "created_at") VALUES (?, ?)`)
    .run(baseline.hash, baseline.folderMillis);
}

/**
 * Brings a store file up to the schema of this code, in three steps:
 *
 * 1. a file whose bookkeeping table names migrations this code does not know
 *    was written by a newer Metnos: it is refused with a {@link StoreError}
 *    (`written_by_newer`) and left as it is;
 * 2. a file from before migrations is adopted ({@link adoptLegacyFile});
 * 3. drizzle's `migrate` applies what is missing, in one transaction.
 *
 * Steps 1 and 2 run under SQLite's write lock. Two processes opening a fresh
 * file at once may both reach step 3; the one that loses finds every
 * migration recorded by the other and goes on. A migration drizzle skipped
 * (dated before one the file has) fails the open instead of going unnoticed.
 *
 * @example
 * migrateStore(client, '/home/ada/.local/share/metnos/fastpaths.sqlite', autopathStoreMigrations());
 */
export function migrateStore(client: Database.Database, file: string, migrations: StoreMigrations): void {
  const known = readMigrationFiles({ migrationsFolder: migrations.folder });
  const knownHashes = new Set(known.map((migration) => migration.hash));
  client
    .transaction(() => {
      const recorded = recordedHashes(client, migrations.table);
      const unknown = recorded.filter((hash) => !knownHashes.has(hash));
      if (unknown.length > 0)
        throw new StoreError({
          file,
          reason: 'written_by_newer',
          detail: `${unknown.length} unknown migration${unknown.length === 1 ? '' : 's'} in ${migrations.table}`,
        });
      if (recorded.length === 0 && known[0]) adoptLegacyFile(client, known[0], migrations.table);
    })
    .immediate();
  let failure: unknown;
  try {
    migrate(drizzle(client), { migrationsFolder: migrations.folder, migrationsTable: migrations.table });
  } catch (error) {
    failure = error;
  }
  const recorded = new Set(recordedHashes(client, migrations.table));
  const missing = known.filter((migration) => !recorded.has(migration.hash));
  if (missing.length === 0) return;
  throw (
    failure ??
    new Error(
      `the migration dated ${new Date(missing[0]!.folderMillis).toISOString()} was not applied: drizzle applies ` +
        'only migrations dated after the last one a file has, so each must be generated after the ones before it',
    )
  );
}
