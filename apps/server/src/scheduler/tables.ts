import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// The scheduler's tables. drizzle-kit reads this file (`pnpm --filter @metnos/server
// db:generate`) and writes the migrations in `apps/server/drizzle/`; the store runs
// them when it opens the file. Keep the imports to drizzle-orm alone. Instants are
// integers: milliseconds since the epoch.

/** One row per schedule; the lifecycle and the failure counters live here. */
export const schedules = sqliteTable(
  'scheduler_schedules',
  {
    id: text('id').primaryKey(),
    name: text('name'),
    target: text('target').notNull(),
    cadence: text('cadence').notNull(),
    timezone: text('timezone').notNull(),
    channel: text('channel'),
    count: integer('count'),
    expiry: integer('expiry'),
    onFailure: text('on_failure').notNull(),
    maxConsecutiveFailures: integer('max_consecutive_failures'),
    state: text('state').notNull(),
    closedReason: text('closed_reason'),
    fired: integer('fired').notNull().default(0),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    anchor: integer('anchor').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [uniqueIndex('scheduler_schedules_name').on(table.name)],
);

/**
 * The claim of one slot (schedule, scheduled instant): inserted before the
 * firing, unique, so a slot is fired at most once; its status moves
 * claimed → running → ok | failed, or to interrupted when its process died.
 */
export const slots = sqliteTable(
  'scheduler_slots',
  {
    scheduleId: text('schedule_id').notNull(),
    slotAt: integer('slot_at').notNull(),
    status: text('status').notNull(),
    holder: text('holder').notNull(),
    attempts: integer('attempts').notNull().default(0),
    claimedAt: integer('claimed_at').notNull(),
    finishedAt: integer('finished_at'),
    summary: text('summary'),
    error: text('error'),
  },
  (table) => [
    uniqueIndex('scheduler_slots_key').on(table.scheduleId, table.slotAt),
    index('scheduler_slots_status').on(table.status),
  ],
);

/** Append-only history: creation, changes, every claim, attempt and outcome, closure. */
export const runs = sqliteTable(
  'scheduler_runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    scheduleId: text('schedule_id').notNull(),
    slotAt: integer('slot_at'),
    event: text('event').notNull(),
    at: integer('at').notNull(),
    holder: text('holder'),
    detail: text('detail'),
  },
  (table) => [index('scheduler_runs_schedule').on(table.scheduleId, table.id)],
);

/** The leader lease: one row per lease name; only its unexpired holder ticks. */
export const leases = sqliteTable('scheduler_leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: integer('expires_at').notNull(),
  acquiredAt: integer('acquired_at').notNull(),
});
