import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { z } from 'zod';

/** A table as SQLite sees it, with the differences that do not matter to a store smoothed out. */
export interface TableShape {
  /** Name, declared type (upper case), default, primary-key position; NOT NULL implied by the key. */
  columns: string[];
  /**
   * Column lists some unique index covers, each once, whether an inline `UNIQUE` or a named unique
   * index (or, in a file adopted from before migrations, both) makes it.
   */
  uniqueKeys: string[];
  /** Plain (non-unique) indexes as `name(columns)`. */
  indexes: string[];
}

/** What a store file holds, for comparing a file made one way with a file made another. */
export interface StoreSchema {
  tables: Record<string, TableShape>;
  /** Trigger name to its SQL, without `IF NOT EXISTS`, quotes and layout. */
  triggers: Record<string, string>;
  /** Every named table, index and trigger (SQLite's own `sqlite_*` objects left out). */
  objects: string[];
}

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

const normalise = (sql: string) =>
  sql
    .replace(/IF NOT EXISTS\s+/i, '')
    .replace(/[`"]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

function tableShape(client: Database.Database, table: string): TableShape {
  const columns = (client.pragma(`table_info("${table}")`) as ColumnInfo[]).map(
    (column) =>
      `${column.name} ${column.type.toUpperCase()}${column.notnull || column.pk ? ' NOT NULL' : ''}` +
      `${column.dflt_value === null ? '' : ` DEFAULT ${column.dflt_value}`}${column.pk ? ` PK${column.pk}` : ''}`,
  );
  const uniqueKeys: string[] = [];
  const indexes: string[] = [];
  for (const index of client.pragma(`index_list("${table}")`) as Array<{
    name: string;
    unique: number;
    origin: string;
  }>) {
    if (index.origin === 'pk') continue;
    const keys = (client.pragma(`index_info("${index.name}")`) as Array<{ name: string }>).map(
      (column) => column.name,
    );
    if (index.unique) uniqueKeys.push(keys.join(','));
    else indexes.push(`${index.name}(${keys.join(',')})`);
  }
  return { columns, uniqueKeys: [...new Set(uniqueKeys)].sort(), indexes: indexes.sort() };
}

/**
 * The schema of an open SQLite file as a plain object, so a test can compare
 * a file made by the migrations with one made by the SQL the stores ran
 * before them. A text primary key counts as NOT NULL either way (SQLite let
 * the old tables hold a NULL key; no store ever wrote one), and a unique key
 * counts the same whether an inline `UNIQUE` or a named unique index holds it.
 * Tables named in `ignore` (a migrations table) are left out.
 *
 * @example
 * expect(describeStoreSchema(migrated).tables).toEqual(describeStoreSchema(legacy).tables);
 */
export function describeStoreSchema(client: Database.Database, ignore: string[] = []): StoreSchema {
  const rows = client
    .prepare(
      `SELECT type, name, tbl_name AS owner, sql FROM sqlite_master
       WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
    )
    .all() as Array<{ type: string; name: string; owner: string; sql: string | null }>;
  const kept = rows.filter((row) => !ignore.includes(row.owner));
  const tables: Record<string, TableShape> = {};
  const triggers: Record<string, string> = {};
  for (const row of kept) {
    if (row.type === 'table') tables[row.name] = tableShape(client, row.name);
    if (row.type === 'trigger') triggers[row.name] = normalise(row.sql ?? '');
  }
  return { tables, triggers, objects: kept.map((row) => `${row.type} ${row.name}`) };
}

const journalSchema = z.object({
  entries: z.array(z.object({ idx: z.number(), tag: z.string(), when: z.number() })),
});

/**
 * The journal of a drizzle migrations folder and the snapshot drizzle-kit
 * wrote with its last migration: the schema the migrations add up to, which
 * a test diffs against the drizzle tables to find a change nobody generated a
 * migration for.
 *
 * @example
 * const { snapshot } = readMigrationJournal(folder);
 * expect(await generateSQLiteMigration(snapshot, await generateSQLiteDrizzleJson(schema))).toEqual([]);
 */
export function readMigrationJournal(folder: string): {
  entries: Array<{ idx: number; tag: string; when: number }>;
  snapshot: unknown;
} {
  const { entries } = journalSchema.parse(
    JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')),
  );
  const last = entries.at(-1);
  if (!last) throw new Error(`${folder} has no migrations`);
  const file = join(folder, 'meta', `${String(last.idx).padStart(4, '0')}_snapshot.json`);
  return { entries, snapshot: JSON.parse(readFileSync(file, 'utf8')) };
}
