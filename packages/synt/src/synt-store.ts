import {
  openDatabase,
  packageMigrations,
  type StoreLocation,
  type StoreMigrations,
} from '@metnos/autopath/stores';
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { ModelCallRecord } from './generate/lineage.ts';
import type { RunDraft, StageName, WaitingFor } from './generate/types.ts';
import { modelCalls, proposals, runStages, runs } from './store-schema.ts';

let migrations: StoreMigrations | undefined;

/** The synt's migrations (`packages/synt/drizzle`), in their own bookkeeping table. */
export function syntMigrations(): StoreMigrations {
  migrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_synt');
  return migrations;
}

// Declared by hand so the published declarations never name drizzle-orm (its own declarations do
// not typecheck under skipLibCheck: false); the assignments below keep them equal to the tables.
export type ProposalKind = 'generate' | 'compose' | 'merge' | 'generalise' | 'specialise' | 'archive';
export type ProposalState = 'open' | 'running' | 'waiting' | 'done' | 'rejected';
export type RunState = 'running' | 'waiting' | 'installed' | 'rejected';
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameAsTables: [
  Same<ProposalKind, (typeof proposals.$inferSelect)['kind']>,
  Same<ProposalState, (typeof proposals.$inferSelect)['state']>,
  Same<RunState, (typeof runs.$inferSelect)['state']>,
] = [true, true, true];
void sameAsTables;

/** A proposal card as the store gives it back, JSON columns parsed. */
export interface ProposalRecord {
  id: string;
  kind: ProposalKind;
  key: string;
  state: ProposalState;
  title: string;
  motivation: unknown;
  evidence: Record<string, unknown>;
  runId: string | null;
  note: string;
  createdAt: string;
  updatedAt: string;
  decidedAt: string | null;
}

/** A generation run as the store gives it back. */
export interface RunRecord {
  id: string;
  proposalId: string;
  state: RunState;
  stage: StageName;
  waitingFor: WaitingFor | null;
  reason: string | null;
  draft: RunDraft;
  createdAt: string;
  updatedAt: string;
}

/** One stage outcome of a run. */
export interface StageRecord {
  stage: StageName;
  outcome: 'done' | 'suspended' | 'failed' | 'rejected';
  note: string;
  detail: unknown;
  at: string;
}

function parse(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Settings of {@link createSyntStore}: where it lives, and the clock. */
export type SyntStoreSettings = StoreLocation & { clock?: () => Date };

/**
 * The synt's SQLite record: proposal cards, generation runs with their
 * draft, each stage's outcome, and the lineage of every model call
 * (drizzle, migrations by drizzle-kit). Opening a file that cannot be used
 * throws autopath's `StoreError`, as every Metnos store does.
 *
 * @example
 * const store = createSyntStore({ path: join(dataDir, 'synt.sqlite') });
 * store.proposals({ states: ['open', 'waiting'] });
 */
export function createSyntStore(settings: SyntStoreSettings) {
  const clock = settings.clock ?? (() => new Date());
  const { client, owned } = openDatabase(settings, syntMigrations());
  const db = drizzle(client);
  const now = () => clock().toISOString();

  const toProposal = (row: typeof proposals.$inferSelect): ProposalRecord => ({
    ...row,
    motivation: parse(row.motivation),
    evidence: (parse(row.evidence) as Record<string, unknown> | undefined) ?? {},
  });
  const toRun = (row: typeof runs.$inferSelect): RunRecord => ({
    ...row,
    stage: row.stage as StageName,
    draft: (parse(row.draft) as RunDraft | undefined) ?? ({ motivation: undefined } as unknown as RunDraft),
  });

  return {
    /**
     * Files a card, one per `key`: a new key makes an open card; a card still
     * open is refreshed (evidence, note); one decided or under way is left as
     * it is. Returns the card and whether it is new.
     */
    file(card: {
      id: string;
      kind: ProposalKind;
      key: string;
      title: string;
      motivation: unknown;
      evidence: Record<string, unknown>;
      note: string;
    }): { proposal: ProposalRecord; created: boolean } {
      return client
        .transaction(() => {
          const found = db.select().from(proposals).where(eq(proposals.key, card.key)).get();
          const at = now();
          if (!found) {
            db.insert(proposals)
              .values({
                ...card,
                motivation: JSON.stringify(card.motivation),
                evidence: JSON.stringify(card.evidence),
                state: 'open',
                runId: null,
                createdAt: at,
                updatedAt: at,
                decidedAt: null,
              })
              .run();
            return {
              proposal: toProposal(db.select().from(proposals).where(eq(proposals.id, card.id)).get()!),
              created: true,
            };
          }
          if (found.state === 'open')
            db.update(proposals)
              .set({
                title: card.title,
                motivation: JSON.stringify(card.motivation),
                evidence: JSON.stringify(card.evidence),
                note: card.note,
                updatedAt: at,
              })
              .where(eq(proposals.id, found.id))
              .run();
          return {
            proposal: toProposal(db.select().from(proposals).where(eq(proposals.id, found.id)).get()!),
            created: false,
          };
        })
        .immediate();
    },

    proposal(id: string): ProposalRecord | undefined {
      const row = db.select().from(proposals).where(eq(proposals.id, id)).get();
      return row ? toProposal(row) : undefined;
    },

    /** Cards, newest first; only the given states when `states` is set. */
    proposals(filter: { states?: ProposalState[] } = {}): ProposalRecord[] {
      const where = filter.states ? inArray(proposals.state, filter.states) : undefined;
      return db
        .select()
        .from(proposals)
        .where(where)
        .orderBy(desc(proposals.updatedAt), desc(proposals.id))
        .all()
        .map(toProposal);
    },

    /**
     * Moves a card to `to` only if it is in one of `from` (one immediate
     * transaction): two approvals of the same card cannot both start it.
     */
    claimProposal(
      id: string,
      from: ProposalState[],
      to: ProposalState,
      patch: { note?: string; runId?: string } = {},
    ): boolean {
      const at = now();
      const decided = to === 'done' || to === 'rejected' || to === 'running' ? { decidedAt: at } : {};
      const result = db
        .update(proposals)
        .set({ state: to, updatedAt: at, ...decided, ...patch })
        .where(and(eq(proposals.id, id), inArray(proposals.state, from)))
        .run();
      return result.changes === 1;
    },

    createRun(run: { id: string; proposalId: string; draft: RunDraft }): RunRecord {
      const at = now();
      db.insert(runs)
        .values({
          id: run.id,
          proposalId: run.proposalId,
          state: 'running',
          stage: 'pattern',
          waitingFor: null,
          reason: null,
          draft: JSON.stringify(run.draft),
          createdAt: at,
          updatedAt: at,
        })
        .run();
      return toRun(db.select().from(runs).where(eq(runs.id, run.id)).get()!);
    },

    run(id: string): RunRecord | undefined {
      const row = db.select().from(runs).where(eq(runs.id, id)).get();
      return row ? toRun(row) : undefined;
    },

    updateRun(
      id: string,
      patch: {
        state?: RunState;
        stage?: StageName;
        waitingFor?: WaitingFor | null;
        reason?: string | null;
        draft?: RunDraft;
      },
    ): void {
      const { draft, ...rest } = patch;
      db.update(runs)
        .set({ ...rest, ...(draft ? { draft: JSON.stringify(draft) } : {}), updatedAt: now() })
        .where(eq(runs.id, id))
        .run();
    },

    /** Moves a run from `from` to `to` if it is there; false when another decision came first. */
    claimRun(id: string, from: RunState, to: RunState): boolean {
      return (
        db
          .update(runs)
          .set({ state: to, updatedAt: now() })
          .where(and(eq(runs.id, id), eq(runs.state, from)))
          .run().changes === 1
      );
    },

    recordStage(runId: string, record: Omit<StageRecord, 'at'>): void {
      db.insert(runStages)
        .values({
          runId,
          stage: record.stage,
          outcome: record.outcome,
          note: record.note,
          detail: record.detail === undefined ? null : JSON.stringify(record.detail),
          at: now(),
        })
        .run();
    },

    stages(runId: string): StageRecord[] {
      return db
        .select()
        .from(runStages)
        .where(eq(runStages.runId, runId))
        .orderBy(asc(runStages.id))
        .all()
        .map((row) => ({
          stage: row.stage as StageName,
          outcome: row.outcome,
          note: row.note,
          detail: parse(row.detail),
          at: row.at,
        }));
    },

    recordModelCall(call: ModelCallRecord): void {
      db.insert(modelCalls)
        .values({
          runId: call.runId,
          stage: call.stage,
          provider: call.provider,
          model: call.model,
          tier: call.tier,
          promptHash: call.promptHash,
          answer: call.answer ?? null,
          error: call.error ?? null,
          inputTokens: call.inputTokens ?? null,
          outputTokens: call.outputTokens ?? null,
          at: call.at,
        })
        .run();
    },

    modelCalls(runId: string): ModelCallRecord[] {
      return db
        .select()
        .from(modelCalls)
        .where(eq(modelCalls.runId, runId))
        .orderBy(asc(modelCalls.id))
        .all()
        .map((row) => ({
          runId: row.runId,
          stage: row.stage as StageName,
          provider: row.provider,
          model: row.model,
          tier: 'wise' as const,
          promptHash: row.promptHash,
          ...(row.answer === null ? {} : { answer: row.answer }),
          ...(row.error === null ? {} : { error: row.error }),
          ...(row.inputTokens === null ? {} : { inputTokens: row.inputTokens }),
          ...(row.outputTokens === null ? {} : { outputTokens: row.outputTokens }),
          at: row.at,
        }));
    },

    close(): void {
      if (owned) client.close();
    },
  };
}

export type SyntStore = ReturnType<typeof createSyntStore>;
