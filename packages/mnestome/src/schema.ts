import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

// The one description of every table the mnestome keeps. drizzle-kit reads this
// file (`pnpm --filter @metnos/mnestome db:generate`) and writes the migrations in
// `drizzle/`; the mnestome runs them when it opens a file. Keep the imports to
// drizzle-orm alone: drizzle-kit loads this module outside the metnos-source build.

/**
 * One mnest per passage from executor `src`'s output into `dst`. A row whose
 * `dst` does not exist yet (`dst_exists` 0) is a proto-mnest, with the
 * signature the missing executor was wished for.
 */
export const mnests = sqliteTable(
  'mnests',
  {
    src: text('src').notNull(),
    dst: text('dst').notNull(),
    dstExists: integer('dst_exists', { mode: 'boolean' }).notNull(),
    /** In [0, 1]: reinforced by each passage, decayed by time. */
    weight: real('weight').notNull(),
    uses: integer('uses').notNull(),
    firstUsedAt: text('first_used_at').notNull(),
    lastUsedAt: text('last_used_at').notNull(),
    /** The instant `weight` was last brought up to date (decay is applied from here). */
    decayedAt: text('decayed_at').notNull(),
    state: text('state', { enum: ['active', 'dormant'] }).notNull(),
    /** JSON of the wished-for signature; proto-mnests only. */
    desiredSignature: text('desired_signature'),
  },
  (table) => [
    primaryKey({ columns: [table.src, table.dst] }),
    index('mnests_dst_exists').on(table.dstExists),
  ],
);

/** When each executor was first seen and last used: what the ager's `below_threshold` proposals read. */
export const executorUses = sqliteTable('executor_uses', {
  executor: text('executor').primaryKey(),
  uses: integer('uses').notNull(),
  firstSeenAt: text('first_seen_at').notNull(),
  lastUsedAt: text('last_used_at'),
});
