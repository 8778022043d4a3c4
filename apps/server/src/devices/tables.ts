import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

// The device store's tables. drizzle-kit reads this file (`pnpm --filter @metnos/server
// db:generate:devices`) and writes the migrations in `apps/server/drizzle/devices/`; the
// store runs them when it opens `devices.sqlite`. Keep the imports to drizzle-orm alone.
// Instants are integers: milliseconds since the epoch.

/** One row per paired device: its key, its certificate, what it may run, whether it is revoked. */
export const devices = sqliteTable('devices', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** SPKI DER of the device's public key, base64. */
  publicKey: text('public_key').notNull(),
  /** SHA-256 of the device certificate's DER, hex: the one certificate this device is known by. */
  fingerprint: text('fingerprint').notNull(),
  /** The executors this device may run, JSON array of names. */
  executors: text('executors').notNull(),
  state: text('state').notNull(),
  platform: text('platform'),
  tier: text('tier'),
  createdAt: integer('created_at').notNull(),
  lastSeenAt: integer('last_seen_at'),
  revokedAt: integer('revoked_at'),
});

/** Open one-time codes, by the value a device finds them with; the code itself is never stored. */
export const pairings = sqliteTable('device_pairings', {
  lookup: text('lookup').primaryKey(),
  /** The secret derived from the code (hex), which the server proves and checks knowledge of the code with. */
  secret: text('secret').notNull(),
  executors: text('executors').notNull(),
  expiresAt: integer('expires_at').notNull(),
  usedAt: integer('used_at'),
  device: text('device'),
  attempts: integer('attempts').notNull().default(0),
  createdAt: integer('created_at').notNull(),
});

/**
 * One row per remote call (and undo) by idempotency key: who asked, the
 * before manifest the laptop reported before changing anything, then the
 * outcome, the after manifest and the laptop's own audit line.
 */
export const remoteCalls = sqliteTable(
  'device_calls',
  {
    key: text('key').primaryKey(),
    trace: text('trace').notNull(),
    device: text('device').notNull(),
    executor: text('executor').notNull(),
    version: text('version'),
    args: text('args').notNull(),
    caller: text('caller').notNull(),
    state: text('state').notNull(),
    result: text('result'),
    before: text('before'),
    after: text('after'),
    laptopAudit: text('laptop_audit'),
    undoOf: text('undo_of'),
    undoneBy: text('undone_by'),
    createdAt: integer('created_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (table) => [index('device_calls_trace').on(table.trace)],
);
