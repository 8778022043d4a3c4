import { blob, index, integer, primaryKey, real, sqliteTable, text, unique } from 'drizzle-orm/sqlite-core';

// The one description of every table this package keeps. drizzle-kit reads this
// file (`pnpm --filter @metnos/autopath db:generate`) and writes the migrations in
// `drizzle/`; the stores run them when they open a file. Keep the imports to
// drizzle-orm alone: drizzle-kit loads this module outside the metnos-source build.

/** The L0 store: one remembered plan template per request fingerprint. */
export const fastpaths = sqliteTable('fastpaths', {
  id: text('id').primaryKey(),
  fingerprint: text('fingerprint').notNull().unique(),
  request: text('request').notNull(),
  template: text('template').notNull(),
  slots: text('slots').notNull(),
  tools: text('tools').notNull(),
  vector: blob('vector', { mode: 'buffer' }),
  uses: integer('uses').notNull(),
  createdAt: text('created_at').notNull(),
  lastUsedAt: text('last_used_at'),
  /** The intent the plan was learned for; anti-autopaths and feedback are keyed on it. */
  intentHash: text('intent_hash'),
  /** The template's plan hash: the label the recognizer serves. */
  planHash: text('plan_hash'),
  /** The request's qualifiers (JSON array); null for a row learned before they were kept. */
  qualifiers: text('qualifiers'),
  /** Request slots the template does not bind (JSON object): a request must carry the same values. */
  pinned: text('pinned'),
  /** The embedder that made `vector`; vectors of another embedder are re-embedded or ignored. */
  embedderId: text('embedder_id'),
});

/** The L1 store's semantic clusters: a centroid and how many requests joined it. */
export const clusters = sqliteTable('clusters', {
  id: text('id').primaryKey(),
  centroid: blob('centroid', { mode: 'buffer' }).notNull(),
  members: integer('members').notNull(),
  createdAt: text('created_at').notNull(),
  /** The embedder of the centroid; clusters of another embedder are not matched. */
  embedderId: text('embedder_id'),
});

/** The L1 store's plans per cluster, with counters, score and champion/challenger status. */
export const autopaths = sqliteTable(
  'autopaths',
  {
    id: text('id').primaryKey(),
    clusterId: text('cluster_id').notNull(),
    intentHash: text('intent_hash').notNull(),
    planHash: text('plan_hash').notNull(),
    template: text('template').notNull(),
    slots: text('slots').notNull(),
    tools: text('tools').notNull(),
    uses: integer('uses').notNull(),
    successes: integer('successes').notNull(),
    failures: integer('failures').notNull(),
    totalLatencyMs: real('total_latency_ms').notNull(),
    feedbackUp: integer('feedback_up').notNull(),
    feedbackDown: integer('feedback_down').notNull(),
    score: real('score').notNull(),
    status: text('status', { enum: ['candidate', 'champion', 'challenger', 'retired'] }).notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    /** As in `fastpaths`: the qualifiers (null: learned before they were kept) and the pinned slots. */
    qualifiers: text('qualifiers'),
    pinned: text('pinned'),
  },
  (table) => [unique().on(table.clusterId, table.planHash), index('autopaths_intent').on(table.intentHash)],
);

/** Plans that failed an intent repeatedly, kept away from it until they expire. */
export const antiAutopaths = sqliteTable(
  'anti_autopaths',
  {
    id: text('id').primaryKey(),
    intentHash: text('intent_hash').notNull(),
    planHash: text('plan_hash').notNull(),
    reason: text('reason').notNull(),
    failures: integer('failures').notNull(),
    expiresAt: text('expires_at').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [unique().on(table.intentHash, table.planHash)],
);

/**
 * One row per turn. Append-only: the first migration adds the trigger
 * `observations_append_only`, which drizzle's schema cannot express; a
 * migration that rebuilds this table must create the trigger again.
 */
export const observations = sqliteTable(
  'observations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ts: text('ts').notNull(),
    turnId: text('turn_id').notNull(),
    request: text('request').notNull(),
    intentHash: text('intent_hash'),
    planHash: text('plan_hash'),
    plan: text('plan'),
    layer: text('layer').notNull(),
    latencyMs: real('latency_ms').notNull(),
    vector: blob('vector', { mode: 'buffer' }),
    outcome: text('outcome', { enum: ['success', 'failure'] }).notNull(),
    errorClass: text('error_class'),
    feedback: text('feedback', { enum: ['up', 'down', 'retry'] }),
  },
  (table) => [index('observations_turn').on(table.turnId)],
);

/** The table behind every vector index; `space` keeps several indexes apart in one file. */
export const memoryVectors = sqliteTable(
  'memory_vectors',
  {
    id: text('id').primaryKey(),
    space: text('space').notNull(),
    text: text('text').notNull(),
    label: text('label'),
    embedderId: text('embedder_id').notNull(),
    vector: blob('vector', { mode: 'buffer' }).notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('memory_vectors_space').on(table.space)],
);

/**
 * The recognizer's decision rule per store (`space`: `fastpath`, `autopath`)
 * and per embedder: a calibration fitted on one embedder's vectors says
 * nothing about another's, so each keeps its own beside the vectors.
 */
export const recognizerCalibrations = sqliteTable(
  'recognizer_calibrations',
  {
    space: text('space').notNull(),
    embedderId: text('embedder_id').notNull(),
    threshold: real('threshold').notNull(),
    margin: real('margin').notNull(),
    mix: real('mix').notNull(),
    /** How many examples the fit saw, and what it measured on them (fractions). */
    examples: integer('examples').notNull(),
    correctReuse: real('correct_reuse').notNull(),
    wrongReuse: real('wrong_reuse').notNull(),
    falseHits: real('false_hits').notNull(),
    /** 1 when the examples were too few and the starting rule bounded the fit. */
    bounded: integer('bounded', { mode: 'boolean' }).notNull(),
    calibratedAt: text('calibrated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.space, table.embedderId] })],
);
