import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// The one description of every table this package keeps. drizzle-kit reads this
// file (`pnpm --filter @metnos/planner db:generate`) and writes the migrations in
// `drizzle/`; the stores run them when they open a file. Keep the imports to
// drizzle-orm alone: drizzle-kit loads this module outside the metnos-source build.

/** Large observations of a turn, which the model reads back with `scratchpad_read`. */
export const scratchpadEntries = sqliteTable(
  'scratchpad_entries',
  {
    id: text('id').primaryKey(),
    turnId: text('turn_id').notNull(),
    kind: text('kind').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    content: text('content').notNull(),
    metadata: text('metadata').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('scratchpad_entries_turn').on(table.turnId)],
);

/** The Terminator's gap log: one row per cause and request signature, with a recurrence counter. */
export const gaps = sqliteTable(
  'terminator_gaps',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    cause: text('cause').notNull(),
    signature: text('signature').notNull(),
    example: text('example').notNull(),
    detail: text('detail').notNull(),
    count: integer('count').notNull(),
    firstSeen: text('first_seen').notNull(),
    lastSeen: text('last_seen').notNull(),
  },
  (table) => [uniqueIndex('terminator_gaps_key').on(table.cause, table.signature)],
);

/**
 * Object-pinned memory: one typed property of one subject (`user:me`,
 * `mail:work`), kept across turns; plans read it with `$ref:pinned/<subject>/<property>`.
 */
export const pinnedProperties = sqliteTable(
  'pinned_properties',
  {
    subject: text('subject').notNull(),
    property: text('property').notNull(),
    value: text('value').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [uniqueIndex('pinned_properties_key').on(table.subject, table.property)],
);

/**
 * Filler answers kept across turns and processes: the one-line value a
 * fast-tier model gave for a plan's `${FILLER:name}`, keyed by plan, filler
 * and the request's slots, so a plan served from memory asks no model again.
 */
export const fillerAnswers = sqliteTable('filler_answers', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * The multi-agent runtime's memory: one JSON value per run, scope
 * (`agent:<id>`, `shared`, `global`) and key. `global` rows have the run ''.
 */
export const agentMemory = sqliteTable(
  'agent_memory',
  {
    run: text('run').notNull(),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    value: text('value').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [uniqueIndex('agent_memory_key').on(table.run, table.scope, table.key)],
);
