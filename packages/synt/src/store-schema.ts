import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

// The one description of every table the synt keeps. drizzle-kit reads this file
// (`pnpm --filter @metnos/synt db:generate`) and writes the migrations in `drizzle/`;
// the store runs them when it opens a file. Keep the imports to drizzle-orm alone:
// drizzle-kit loads this module outside the metnos-source build.

/**
 * One proposal card the person decides on: a new executor to generate, a
 * chain of existing ones, a merge, a generalisation, a specialisation, or
 * the archival of a fused executor whose mnests faded. `key` keeps one card
 * per subject (a second night's suggestion of the same thing refreshes it).
 */
export const proposals = sqliteTable(
  'synt_proposals',
  {
    id: text('id').primaryKey(),
    kind: text('kind', {
      enum: ['generate', 'compose', 'merge', 'generalise', 'specialise', 'archive'],
    }).notNull(),
    key: text('key').notNull().unique(),
    state: text('state', { enum: ['open', 'running', 'waiting', 'done', 'rejected'] }).notNull(),
    title: text('title').notNull(),
    /** JSON: why the card exists (the motivation a generation starts from). */
    motivation: text('motivation').notNull(),
    /** JSON: what was measured (uses, weight, overlap, call share, grants). */
    evidence: text('evidence').notNull(),
    /** The generation run an approval started. */
    runId: text('run_id'),
    /** What the card waits for, or how it ended, in one sentence. */
    note: text('note').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    decidedAt: text('decided_at'),
  },
  (table) => [index('synt_proposals_state').on(table.state)],
);

/**
 * One generation run: the seven stages' shared draft (specification,
 * artefacts, chosen profile, review, approval) as JSON, where the run stands
 * and what it waits for.
 */
export const runs = sqliteTable('synt_runs', {
  id: text('id').primaryKey(),
  proposalId: text('proposal_id').notNull(),
  state: text('state', { enum: ['running', 'waiting', 'installed', 'rejected'] }).notNull(),
  /** The stage the run is at (the one that suspended, or the next to run). */
  stage: text('stage').notNull(),
  waitingFor: text('waiting_for', { enum: ['spec', 'approval', 'fix'] }),
  /** Why it waits: the question, or the failure a fix must answer. */
  reason: text('reason'),
  /** JSON of the run's draft. */
  draft: text('draft').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** Each stage's outcome, in order: done, suspended (with the question) or failed (with the reason). */
export const runStages = sqliteTable(
  'synt_run_stages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    runId: text('run_id').notNull(),
    stage: text('stage').notNull(),
    outcome: text('outcome', { enum: ['done', 'suspended', 'failed', 'rejected'] }).notNull(),
    note: text('note').notNull(),
    /** JSON: what the stage measured (each rung tried, each birth case's result). */
    detail: text('detail'),
    at: text('at').notNull(),
  },
  (table) => [index('synt_run_stages_run').on(table.runId)],
);

/** The lineage of every model call a run made: which model, which prompt, what it answered. */
export const modelCalls = sqliteTable(
  'synt_model_calls',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    runId: text('run_id').notNull(),
    stage: text('stage').notNull(),
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    tier: text('tier').notNull(),
    /** SHA-256 of the system prompt and messages as sent. */
    promptHash: text('prompt_hash').notNull(),
    answer: text('answer'),
    error: text('error'),
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    at: text('at').notNull(),
  },
  (table) => [index('synt_model_calls_run').on(table.runId)],
);
