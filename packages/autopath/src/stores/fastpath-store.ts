import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { type LabelledVector, labelSimilaritiesOf } from '../label-similarities.ts';
import type { LabelSimilarity, ScanOptions } from '../vector-index.ts';
import { calibrationsOf } from './calibrations.ts';
import { autopathStoreMigrations } from './migrations.ts';
import { fastpaths } from './schema.ts';
import {
  blobToVector,
  dot,
  openDatabase,
  readPlanColumns,
  type StoreLocation,
  vectorToBlob,
} from './sqlite.ts';

/** A remembered plan: a template with slots, the executor versions it used, the request's vector. */
export interface FastpathEntry {
  id: string;
  fingerprint: string;
  request: string;
  template: unknown;
  slots: string[];
  tools: Array<{ name: string; version: string }>;
  vector: Float32Array | undefined;
  uses: number;
  createdAt: string;
  lastUsedAt: string | undefined;
  /** The intent it was learned for (anti-autopaths and feedback are keyed on it). */
  intentHash: string | undefined;
  /** The template's plan hash: the label recognition serves. */
  planHash: string | undefined;
  /** The request's qualifiers; undefined for an entry learned before they were kept. */
  qualifiers: string[] | undefined;
  /** Request slots the template does not bind: a request must carry the same values. */
  pinned: Record<string, string>;
  /** The embedder that made `vector`. */
  embedderId: string | undefined;
}

/** What {@link FastpathStore.save} keeps for a plan that worked. */
export interface FastpathInput {
  fingerprint: string;
  request: string;
  template: unknown;
  slots: string[];
  tools: Array<{ name: string; version: string }>;
  vector?: Float32Array;
  intentHash?: string;
  planHash?: string;
  qualifiers?: string[];
  pinned?: Record<string, string>;
  embedderId?: string;
}

/** Aging rules. */
export interface AgingRules {
  /** Entries never reused after this many days go. Default 30. */
  neverReusedDays?: number;
  /** Entries not used for this many days go. Default 180. */
  staleDays?: number;
  /** At most this many entries; the least recently used go first. Default 10,000. */
  cap?: number;
}

const DAY = 86_400_000;

/** The entry a row holds; undefined for a damaged row, which lookups skip. */
function toEntry(row: typeof fastpaths.$inferSelect): FastpathEntry | undefined {
  const plan = readPlanColumns(row);
  if (!plan) return undefined;
  const { template, slots, tools, qualifiers, pinned } = plan;
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    request: row.request,
    template,
    slots,
    tools,
    vector: blobToVector(row.vector),
    uses: row.uses,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt ?? undefined,
    intentHash: row.intentHash ?? undefined,
    planHash: row.planHash ?? undefined,
    qualifiers,
    pinned,
    embedderId: row.embedderId ?? undefined,
  };
}

function readable(rows: Array<typeof fastpaths.$inferSelect>): FastpathEntry[] {
  return rows.map(toEntry).filter((entry): entry is FastpathEntry => entry !== undefined);
}

/**
 * The L0 Fastpath store: every successful engine turn saves its plan as a
 * template here. Lookup is by exact fingerprint, then by vector similarity
 * (exact search over an in-memory copy of the vectors). Entries age out,
 * die when an executor they use changes version or disappears, and can be
 * removed by hand.
 *
 * @example
 * const store = createFastpathStore({ path: 'workspace/.runtime/fastpaths.sqlite' });
 * store.save({ fingerprint, request, template, slots, tools, vector });
 */
export function createFastpathStore(location: StoreLocation & { clock?: () => Date; ids?: () => string }) {
  const { client, owned } = openDatabase(location, autopathStoreMigrations());
  const db = drizzle(client);
  const clock = location.clock ?? (() => new Date());
  const ids = location.ids ?? randomUUID;
  let cache: FastpathEntry[] | undefined;
  const entries = () => (cache ??= readable(db.select().from(fastpaths).all()));
  const calibrations = calibrationsOf(db, 'fastpath', clock);
  /** What every memory-served turn runs, prepared once (building a query costs more than running it). */
  const statements = {
    byFingerprint: db
      .select()
      .from(fastpaths)
      .where(eq(fastpaths.fingerprint, sql.placeholder('fingerprint')))
      .prepare(),
    used: db
      .update(fastpaths)
      .set({ uses: sql`${fastpaths.uses} + 1`, lastUsedAt: sql`${sql.placeholder('now')}` })
      .where(eq(fastpaths.id, sql.placeholder('id')))
      .prepare(),
  };
  /** Puts one entry as now stored into the in-memory copy, if there is one, instead of reading them all again. */
  const refresh = (entry: FastpathEntry | undefined, id: string) => {
    if (!cache) return;
    const position = cache.findIndex((cached) => cached.id === id);
    if (entry && position >= 0) cache[position] = entry;
    else if (entry) cache.push(entry);
    else if (position >= 0) cache.splice(position, 1);
  };

  return {
    /** Saves (or refreshes) the plan for a fingerprint. */
    save(input: FastpathInput): FastpathEntry {
      const now = clock().toISOString();
      const existing = statements.byFingerprint.get({ fingerprint: input.fingerprint });
      const values = {
        request: input.request,
        template: JSON.stringify(input.template),
        slots: JSON.stringify(input.slots),
        tools: JSON.stringify(input.tools),
        vector: input.vector ? vectorToBlob(input.vector) : null,
        intentHash: input.intentHash ?? null,
        planHash: input.planHash ?? null,
        qualifiers: input.qualifiers ? JSON.stringify(input.qualifiers) : null,
        pinned: JSON.stringify(input.pinned ?? {}),
        embedderId: input.vector ? (input.embedderId ?? null) : null,
      };
      if (existing) db.update(fastpaths).set(values).where(eq(fastpaths.id, existing.id)).run();
      else
        db.insert(fastpaths)
          .values({
            id: ids(),
            fingerprint: input.fingerprint,
            uses: 0,
            createdAt: now,
            lastUsedAt: null,
            ...values,
          })
          .run();
      const row = statements.byFingerprint.get({ fingerprint: input.fingerprint })!;
      const saved = toEntry(row)!;
      refresh(saved, row.id);
      return saved;
    },
    byFingerprint(fingerprint: string): FastpathEntry | undefined {
      const row = statements.byFingerprint.get({ fingerprint });
      return row ? toEntry(row) : undefined;
    },
    /** The `k` most similar entries to a (normalised) vector, best first. */
    nearest(vector: Float32Array, k = 2): Array<{ entry: FastpathEntry; score: number }> {
      return entries()
        .filter((entry) => entry.vector && entry.vector.length === vector.length)
        .map((entry) => ({ entry, score: dot(vector, entry.vector!) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, k);
    },
    /**
     * Every label's (plan's) nearest entry and centroid as seen from `vector`,
     * for the recognizer: entries whose vector another embedder made (or an
     * unknown one, before the store kept embedder ids) are left out, as are
     * `excludeIds` — entries the caller found incompatible with the request.
     */
    labelSimilarities(
      vector: Float32Array,
      options: ScanOptions & { embedderId?: string } = {},
    ): LabelSimilarity[] {
      const items: LabelledVector[] = [];
      for (const entry of entries()) {
        if (!entry.vector) continue;
        if (options.embedderId !== undefined && entry.embedderId !== options.embedderId) continue;
        items.push({ id: entry.id, label: entry.planHash ?? `entry:${entry.id}`, vector: entry.vector });
      }
      return labelSimilaritiesOf(items, vector, options);
    },
    /** An entry by id. */
    get(id: string): FastpathEntry | undefined {
      return entries().find((entry) => entry.id === id);
    },
    /** Replaces vectors (say, re-embedded by a new embedder) and records whose they are. */
    setVectors(updates: Array<{ id: string; vector: Float32Array }>, embedderId: string): void {
      client.transaction(() => {
        for (const update of updates)
          db.update(fastpaths)
            .set({ vector: vectorToBlob(update.vector), embedderId })
            .where(eq(fastpaths.id, update.id))
            .run();
      })();
      cache = undefined;
    },
    /** Removes the entries that replay one plan for one intent (a plan the user said down to); returns their ids. */
    removePlan(intentHash: string, planHash: string): string[] {
      const doomed = db
        .select({ id: fastpaths.id })
        .from(fastpaths)
        .where(and(eq(fastpaths.intentHash, intentHash), eq(fastpaths.planHash, planHash)))
        .all()
        .map((row) => row.id);
      if (doomed.length > 0) db.delete(fastpaths).where(inArray(fastpaths.id, doomed)).run();
      cache = undefined;
      return doomed;
    },
    /** The recognizer's calibrations, one per embedder id, kept in this file. */
    calibrations,
    markUsed(id: string): void {
      const now = clock().toISOString();
      if (statements.used.run({ id, now }).changes === 0) return;
      const cached = cache?.find((entry) => entry.id === id);
      if (cached) refresh({ ...cached, uses: cached.uses + 1, lastUsedAt: now }, id);
      else cache = undefined;
    },
    /** Removes an entry by hand. */
    remove(id: string): boolean {
      const changes = db.delete(fastpaths).where(eq(fastpaths.id, id)).run().changes;
      cache = undefined;
      return changes > 0;
    },
    /** Every readable entry, oldest first (from the in-memory copy lookups use: a turn may read it whole). */
    list(): FastpathEntry[] {
      return [...entries()].sort((a, b) =>
        a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0,
      );
    },
    /** Applies the aging rules; returns the ids removed. */
    age(rules: AgingRules = {}): string[] {
      const now = clock().getTime();
      const neverReused = (rules.neverReusedDays ?? 30) * DAY;
      const stale = (rules.staleDays ?? 180) * DAY;
      const cap = rules.cap ?? 10_000;
      const all = db.select().from(fastpaths).all();
      const doomed = new Set<string>();
      for (const row of all) {
        if (row.uses === 0 && now - Date.parse(row.createdAt) > neverReused) doomed.add(row.id);
        const last = Date.parse(row.lastUsedAt ?? row.createdAt);
        if (now - last > stale) doomed.add(row.id);
      }
      const alive = all.filter((row) => !doomed.has(row.id));
      if (alive.length > cap) {
        alive
          .sort((a, b) => Date.parse(a.lastUsedAt ?? a.createdAt) - Date.parse(b.lastUsedAt ?? b.createdAt))
          .slice(0, alive.length - cap)
          .forEach((row) => {
            doomed.add(row.id);
          });
      }
      if (doomed.size > 0)
        db.delete(fastpaths)
          .where(inArray(fastpaths.id, [...doomed]))
          .run();
      cache = undefined;
      return [...doomed];
    },
    /** Drops entries whose executors were superseded (another default version) or disappeared. */
    invalidate(currentVersion: (name: string) => string | undefined): string[] {
      const doomed = entries()
        .filter((entry) => entry.tools.some((tool) => currentVersion(tool.name) !== tool.version))
        .map((entry) => entry.id);
      if (doomed.length > 0) db.delete(fastpaths).where(inArray(fastpaths.id, doomed)).run();
      cache = undefined;
      return doomed;
    },
    close(): void {
      if (owned) client.close();
    },
  };
}

export type FastpathStore = ReturnType<typeof createFastpathStore>;
