import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

// The laptop's ledger. drizzle-kit reads this file (`pnpm --filter @metnos/laptop-agent
// db:generate`) and writes the migrations in `apps/laptop-agent/drizzle/`; the ledger runs
// them when it opens its file. Keep the imports to drizzle-orm alone. Instants are
// integers: milliseconds since the epoch.

/**
 * One row per idempotency key: what was asked, how far it got, and once
 * done the outcome every later delivery of the same key answers with.
 * `state` moves received → planned → applying → done.
 */
export const calls = sqliteTable(
  'laptop_calls',
  {
    key: text('key').primaryKey(),
    trace: text('trace').notNull(),
    kind: text('kind').notNull(),
    executor: text('executor').notNull(),
    version: text('version'),
    digest: text('digest').notNull(),
    argsDigest: text('args_digest').notNull(),
    /** For an undo: the key of the call it undoes. */
    target: text('target'),
    state: text('state').notNull(),
    /** How many times an executor process was started for this key. */
    runs: integer('runs').notNull().default(0),
    /** The executor's result once it ran (JSON), kept so a resumed call answers the same. */
    plan: text('plan'),
    /** The reply (JSON: result, manifest, audit line) once done. */
    outcome: text('outcome'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('laptop_calls_trace').on(table.trace)],
);

/**
 * The operations of one call, in order, journaled before they are applied:
 * a crash between two of them leaves a row per operation saying whether it
 * happened, so a resumed call finishes the rest and never repeats one.
 */
export const operations = sqliteTable(
  'laptop_operations',
  {
    key: text('key').notNull(),
    seq: integer('seq').notNull(),
    /** `move`, `delete`, or for an undo `restore` (from the trash area). */
    op: text('op').notNull(),
    source: text('source').notNull(),
    target: text('target'),
    /** Where a replaced or deleted file went in the trash area. */
    trash: text('trash'),
    size: integer('size').notNull(),
    hash: text('hash').notNull(),
    /** Device and inode of the source when planned: how a resumed move recognises its own file. */
    identity: text('identity').notNull(),
    replacedSize: integer('replaced_size'),
    replacedHash: text('replaced_hash'),
    afterHash: text('after_hash'),
    state: text('state').notNull(),
  },
  (table) => [primaryKey({ columns: [table.key, table.seq] })],
);

/** Token nonces seen, until their token expires: a token is accepted once. */
export const nonces = sqliteTable('laptop_nonces', {
  nonce: text('nonce').primaryKey(),
  expiresAt: integer('expires_at').notNull(),
});
