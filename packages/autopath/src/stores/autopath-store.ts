import { randomUUID } from 'node:crypto';
import { and, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { labelSimilaritiesOf } from '../label-similarities.ts';
import type { LabelSimilarity, ScanOptions } from '../vector-index.ts';
import { calibrationsOf } from './calibrations.ts';
import { autopathStoreMigrations } from './migrations.ts';
import { antiAutopaths, autopaths, clusters, observations } from './schema.ts';
import {
  blobToVector,
  dot,
  openDatabase,
  readPlanColumns,
  readStoredJson,
  type StoreLocation,
  vectorToBlob,
} from './sqlite.ts';

/** Promotion and exclusion rules. */
export interface AutopathRules {
  /** Cosine at or above which a request joins an existing cluster. Default 0.8. */
  clusterThreshold?: number;
  /** Successes before a plan becomes a cluster's champion. Default 2. */
  promoteAfter?: number;
  /** Uses a challenger needs before it may replace the champion. Default 3. */
  challengerMinUses?: number;
  /** Failures of one plan for one intent before it becomes an anti-autopath. Default 2. */
  antiAfter?: number;
  /** How long an anti-autopath lasts. Default 30 days. */
  antiDays?: number;
}

/** A stored autopath as the engine reads it. */
export interface AutopathEntry {
  id: string;
  clusterId: string;
  intentHash: string;
  planHash: string;
  template: unknown;
  slots: string[];
  tools: Array<{ name: string; version: string }>;
  uses: number;
  successes: number;
  failures: number;
  score: number;
  status: 'candidate' | 'champion' | 'challenger' | 'retired';
  /** The qualifiers of the requests it served; undefined when learned before they were kept. */
  qualifiers: string[] | undefined;
  /** Request slots the template does not bind: a request must carry the same values. */
  pinned: Record<string, string>;
}

/**
 * One turn as the `observations` table keeps it (`store.observations()`):
 * which layer answered, with what plan, how fast, and how it ended. Written
 * out rather than inferred from the table schema, so the package's public
 * types need no ORM types; `schema-rows.test-d.ts` fails the typecheck when
 * the two part.
 *
 * @example
 * const [row] = store.observations('turn-1');
 * if (row?.outcome === 'failure') console.log(row.layer, row.errorClass);
 */
export interface ObservationRow {
  id: number;
  /** When the turn ended, ISO 8601. */
  ts: string;
  turnId: string;
  request: string;
  intentHash: string | null;
  planHash: string | null;
  /** The plan that ran, as JSON. */
  plan: string | null;
  layer: string;
  latencyMs: number;
  /** The request's vector as Float32 bytes (`blobToVector` reads it). */
  vector: Buffer | null;
  outcome: 'success' | 'failure';
  errorClass: string | null;
  feedback: 'up' | 'down' | 'retry' | null;
}

/** One cluster as {@link AutopathStore.clusters} lists it. */
export interface ClusterRow {
  id: string;
  members: number;
  embedderId: string | null;
  createdAt: string;
}

/** One anti-autopath in force: a plan excluded for an intent, until `expiresAt`. */
export interface AntiAutopathRow {
  intentHash: string;
  planHash: string;
  reason: string;
  failures: number;
  expiresAt: string;
}

/** Composite score: Laplace success rate, nudged by feedback, discounted by latency. */
export function compositeScore(row: {
  uses: number;
  successes: number;
  feedbackUp: number;
  feedbackDown: number;
  totalLatencyMs: number;
}): number {
  const rate = (row.successes + 1) / (row.uses + 2);
  const feedback = Math.max(0.5, Math.min(1.5, 1 + 0.1 * (row.feedbackUp - row.feedbackDown)));
  const averageLatency = row.uses > 0 ? row.totalLatencyMs / row.uses : 0;
  return rate * feedback * (1 / (1 + averageLatency / 10_000));
}

/** The entry a row holds; undefined for a damaged row, which lookups skip. */
function toEntry(row: typeof autopaths.$inferSelect): AutopathEntry | undefined {
  const plan = readPlanColumns(row);
  if (!plan) return undefined;
  const { template, slots, tools, qualifiers, pinned } = plan;
  return {
    id: row.id,
    clusterId: row.clusterId,
    intentHash: row.intentHash,
    planHash: row.planHash,
    template,
    slots,
    tools,
    uses: row.uses,
    successes: row.successes,
    failures: row.failures,
    score: row.score,
    status: row.status,
    qualifiers,
    pinned,
  };
}

/** Rows compete for a cluster's championship only with rows of the same qualifiers. */
const qualifierGroup = (row: { qualifiers: string | null }) => row.qualifiers ?? 'null';

/**
 * The L1 Autopath store: `autopaths` (plans that worked, per semantic
 * cluster, with counters, a composite score and champion/challenger status),
 * `anti_autopaths` (plans that failed repeatedly, with a reason and an
 * expiry) and `observations` (append-only: one row per turn).
 *
 * @example
 * const store = createAutopathStore({ path: 'workspace/.runtime/autopath.sqlite' });
 * const cluster = store.assignCluster(vector);
 * store.recordSuccess({ clusterId: cluster.id, intentHash, planHash, template, slots, tools, latencyMs: 120 });
 */
export function createAutopathStore(
  location: StoreLocation & { rules?: AutopathRules; clock?: () => Date; ids?: () => string },
) {
  const { client, owned } = openDatabase(location, autopathStoreMigrations());
  const db = drizzle(client);
  const clock = location.clock ?? (() => new Date());
  const ids = location.ids ?? randomUUID;
  /**
   * Runs a write of several statements as one transaction, taking the write
   * lock first (so another process's writer makes it wait its busy timeout,
   * never fail halfway): a kill -9 leaves all of it or none. Nested, it is a
   * savepoint of the outer one.
   */
  const atomically = <T>(write: () => T): T => client.transaction(write).immediate();
  const rules = {
    clusterThreshold: location.rules?.clusterThreshold ?? 0.8,
    promoteAfter: location.rules?.promoteAfter ?? 2,
    challengerMinUses: location.rules?.challengerMinUses ?? 3,
    antiAfter: location.rules?.antiAfter ?? 2,
    antiDays: location.rules?.antiDays ?? 30,
  };

  const placeholder = sql.placeholder;
  /**
   * The statements a memory-served turn runs, prepared once: building and
   * preparing a query costs several times what running it does, and such a
   * turn runs a dozen (bench:turn measures the engine's share of a turn).
   */
  const statements = {
    byId: db
      .select()
      .from(autopaths)
      .where(eq(autopaths.id, placeholder('id')))
      .prepare(),
    byCluster: db
      .select()
      .from(autopaths)
      .where(eq(autopaths.clusterId, placeholder('clusterId')))
      .prepare(),
    byClusterPlan: db
      .select()
      .from(autopaths)
      .where(
        and(
          eq(autopaths.clusterId, placeholder('clusterId')),
          eq(autopaths.planHash, placeholder('planHash')),
        ),
      )
      .prepare(),
    champions: db.select().from(autopaths).where(eq(autopaths.status, 'champion')).prepare(),
    counted: db
      .update(autopaths)
      .set({
        uses: sql`${placeholder('uses')}`,
        successes: sql`${placeholder('successes')}`,
        totalLatencyMs: sql`${placeholder('totalLatencyMs')}`,
        score: sql`${placeholder('score')}`,
        updatedAt: sql`${placeholder('now')}`,
      })
      .where(eq(autopaths.id, placeholder('id')))
      .prepare(),
    rescored: db
      .update(autopaths)
      .set({ score: sql`${placeholder('score')}`, updatedAt: sql`${placeholder('now')}` })
      .where(eq(autopaths.id, placeholder('id')))
      .prepare(),
    anti: db
      .select()
      .from(antiAutopaths)
      .where(
        and(
          eq(antiAutopaths.intentHash, placeholder('intentHash')),
          eq(antiAutopaths.planHash, placeholder('planHash')),
          gt(antiAutopaths.expiresAt, placeholder('now')),
        ),
      )
      .prepare(),
    antiInForce: db
      .select({ intentHash: antiAutopaths.intentHash, planHash: antiAutopaths.planHash })
      .from(antiAutopaths)
      .where(
        and(gt(antiAutopaths.expiresAt, placeholder('now')), gt(antiAutopaths.failures, rules.antiAfter - 1)),
      )
      .prepare(),
    centroid: db
      .update(clusters)
      .set({ centroid: sql`${placeholder('centroid')}`, members: sql`${placeholder('members')}` })
      .where(eq(clusters.id, placeholder('id')))
      .prepare(),
    observe: db
      .insert(observations)
      .values({
        ts: placeholder('ts'),
        turnId: placeholder('turnId'),
        request: placeholder('request'),
        intentHash: placeholder('intentHash'),
        planHash: placeholder('planHash'),
        plan: placeholder('plan'),
        layer: placeholder('layer'),
        latencyMs: placeholder('latencyMs'),
        vector: placeholder('vector'),
        outcome: placeholder('outcome'),
        errorClass: placeholder('errorClass'),
        feedback: null,
      })
      .prepare(),
  };

  /** Changes whenever another connection commits to the file (SQLite's `data_version`). */
  const dataVersion = client.prepare('PRAGMA data_version').pluck();
  interface CachedCluster {
    centroid: Float32Array | undefined;
    members: number;
    embedderId: string | null;
  }
  let clusterCache: { version: unknown; byId: Map<string, CachedCluster> } | undefined;
  /**
   * Every cluster's centroid, kept in memory: each success and each L1 lookup
   * compares a request with all of them. This connection's writes update the
   * copy; another connection's commit makes it read the table again.
   */
  function clusterIndex(): Map<string, CachedCluster> {
    const version = dataVersion.get();
    if (clusterCache && clusterCache.version === version) return clusterCache.byId;
    const byId = new Map<string, CachedCluster>();
    for (const row of db.select().from(clusters).all())
      byId.set(row.id, {
        centroid: blobToVector(row.centroid),
        members: row.members,
        embedderId: row.embedderId,
      });
    clusterCache = { version, byId };
    return byId;
  }

  /** `intentHash|planHash` of every anti-autopath in force: one query for a whole listing. */
  function antiInForce(): Set<string> {
    return new Set(
      statements.antiInForce
        .all({ now: clock().toISOString() })
        .map((row) => `${row.intentHash}|${row.planHash}`),
    );
  }

  function rescore(id: string): void {
    const row = statements.byId.get({ id });
    if (row) statements.rescored.run({ id, score: compositeScore(row), now: clock().toISOString() });
  }

  /**
   * Champion and challengers, per cluster and per qualifier group (a plan for
   * "the first lines" never competes with one for "the last lines"). A plan
   * is promoted after `promoteAfter` successes, unless the user said down to
   * it more often than up; a challenger with `challengerMinUses` uses and a
   * better score takes the champion's place.
   */
  function settleCluster(clusterId: string): void {
    const rows = statements.byCluster.all({ clusterId });
    const groups = new Map<string, typeof rows>();
    for (const row of rows)
      groups.set(qualifierGroup(row), [...(groups.get(qualifierGroup(row)) ?? []), row]);
    for (const group of groups.values()) settleGroup(group);
  }

  function settleGroup(rows: Array<typeof autopaths.$inferSelect>): void {
    const setStatus = (id: string, status: AutopathEntry['status']) =>
      db.update(autopaths).set({ status }).where(eq(autopaths.id, id)).run();
    const champion = rows.find((row) => row.status === 'champion');
    for (const row of rows) {
      if (row.status === 'retired' || row.id === champion?.id) continue;
      if (!champion) {
        if (row.successes >= rules.promoteAfter && row.feedbackDown <= row.feedbackUp) {
          setStatus(row.id, 'champion');
          return;
        }
        continue;
      }
      if (row.successes > 0 && row.status === 'candidate') setStatus(row.id, 'challenger');
      if (
        row.uses >= rules.challengerMinUses &&
        row.score > champion.score &&
        row.feedbackDown <= row.feedbackUp
      ) {
        setStatus(champion.id, 'challenger');
        setStatus(row.id, 'champion');
        return;
      }
    }
  }

  const calibrations = calibrationsOf(db, 'autopath', clock);

  /** An up vote makes a plan its group's champion when the group has none (retired plans stay retired). */
  function promote(id: string): void {
    const row = db.select().from(autopaths).where(eq(autopaths.id, id)).get();
    if (!row || row.status === 'retired' || row.status === 'champion') return;
    if (row.feedbackDown > row.feedbackUp || store.isAnti(row.intentHash, row.planHash)) return;
    const rival = db
      .select()
      .from(autopaths)
      .where(and(eq(autopaths.clusterId, row.clusterId), eq(autopaths.status, 'champion')))
      .all()
      .some((other) => qualifierGroup(other) === qualifierGroup(row));
    db.update(autopaths)
      .set({ status: rival ? 'challenger' : 'champion' })
      .where(eq(autopaths.id, id))
      .run();
  }

  const store = {
    rules,
    /**
     * Puts a vector in the nearest cluster (updating its centroid) or starts a
     * new one. With `embedderId`, only clusters of that embedder are joined.
     */
    assignCluster(
      vector: Float32Array,
      embedderId?: string,
    ): { id: string; score: number; created: boolean } {
      const nearest = store.nearestCluster(vector, embedderId);
      const index = clusterIndex();
      if (nearest && nearest.score >= rules.clusterThreshold) {
        const cluster = index.get(nearest.id)!;
        const previous = cluster.centroid!;
        const members = cluster.members + 1;
        const centroid = new Float32Array(previous.length);
        let norm = 0;
        for (let dimension = 0; dimension < centroid.length; dimension++) {
          centroid[dimension] = previous[dimension]! + (vector[dimension]! - previous[dimension]!) / members;
          norm += centroid[dimension]! ** 2;
        }
        norm = Math.sqrt(norm) || 1;
        for (let dimension = 0; dimension < centroid.length; dimension++)
          centroid[dimension] = centroid[dimension]! / norm;
        statements.centroid.run({ id: nearest.id, centroid: vectorToBlob(centroid), members });
        index.set(nearest.id, { ...cluster, centroid, members });
        return { id: nearest.id, score: nearest.score, created: false };
      }
      const id = ids();
      db.insert(clusters)
        .values({
          id,
          centroid: vectorToBlob(vector),
          members: 1,
          createdAt: clock().toISOString(),
          embedderId: embedderId ?? null,
        })
        .run();
      index.set(id, { centroid: Float32Array.from(vector), members: 1, embedderId: embedderId ?? null });
      return { id, score: 1, created: true };
    },
    /** The cluster whose centroid is closest to the vector (of `embedderId`'s clusters, when given). */
    nearestCluster(vector: Float32Array, embedderId?: string): { id: string; score: number } | undefined {
      let best: { id: string; score: number } | undefined;
      for (const [id, { centroid, embedderId: owner }] of clusterIndex()) {
        if (embedderId !== undefined && owner !== embedderId) continue;
        if (!centroid || centroid.length !== vector.length) continue;
        const score = dot(vector, centroid);
        if (!best || score > best.score) best = { id, score };
      }
      return best;
    },
    /** Records a plan that worked for a cluster and intent; promotes per the rules. */
    recordSuccess(input: {
      clusterId: string;
      intentHash: string;
      planHash: string;
      template: unknown;
      slots: string[];
      tools: Array<{ name: string; version: string }>;
      latencyMs: number;
      qualifiers?: string[];
      pinned?: Record<string, string>;
    }): AutopathEntry {
      return atomically(() => {
        const now = clock().toISOString();
        const existing = statements.byClusterPlan.get({
          clusterId: input.clusterId,
          planHash: input.planHash,
        });
        if (existing) {
          const counted = {
            ...existing,
            uses: existing.uses + 1,
            successes: existing.successes + 1,
            totalLatencyMs: existing.totalLatencyMs + input.latencyMs,
          };
          statements.counted.run({
            id: existing.id,
            uses: counted.uses,
            successes: counted.successes,
            totalLatencyMs: counted.totalLatencyMs,
            score: compositeScore(counted),
            now,
          });
          if (existing.qualifiers === null && input.qualifiers)
            db.update(autopaths)
              .set({
                qualifiers: JSON.stringify(input.qualifiers),
                pinned: JSON.stringify(input.pinned ?? {}),
              })
              .where(eq(autopaths.id, existing.id))
              .run();
        } else {
          const id = ids();
          const row = {
            id,
            clusterId: input.clusterId,
            intentHash: input.intentHash,
            planHash: input.planHash,
            template: JSON.stringify(input.template),
            slots: JSON.stringify(input.slots),
            tools: JSON.stringify(input.tools),
            uses: 1,
            successes: 1,
            failures: 0,
            totalLatencyMs: input.latencyMs,
            feedbackUp: 0,
            feedbackDown: 0,
            score: 0,
            status: 'candidate' as const,
            createdAt: now,
            updatedAt: now,
            qualifiers: input.qualifiers ? JSON.stringify(input.qualifiers) : null,
            pinned: JSON.stringify(input.pinned ?? {}),
          };
          db.insert(autopaths)
            .values({ ...row, score: compositeScore(row) })
            .run();
        }
        settleCluster(input.clusterId);
        return toEntry(
          statements.byClusterPlan.get({ clusterId: input.clusterId, planHash: input.planHash })!,
        )!;
      });
    },
    /** Records a failure; repeated failures of one plan for one intent make an anti-autopath. */
    recordFailure(input: { intentHash: string; planHash: string; reason: string; clusterId?: string }): {
      anti: boolean;
    } {
      return atomically(() => {
        const now = clock();
        for (const row of db
          .select()
          .from(autopaths)
          .where(and(eq(autopaths.intentHash, input.intentHash), eq(autopaths.planHash, input.planHash)))
          .all()) {
          db.update(autopaths)
            .set({ uses: row.uses + 1, failures: row.failures + 1, updatedAt: now.toISOString() })
            .where(eq(autopaths.id, row.id))
            .run();
          rescore(row.id);
        }
        const anti = db
          .select()
          .from(antiAutopaths)
          .where(
            and(eq(antiAutopaths.intentHash, input.intentHash), eq(antiAutopaths.planHash, input.planHash)),
          )
          .get();
        const failures = (anti?.failures ?? 0) + 1;
        const expiresAt = new Date(now.getTime() + rules.antiDays * 86_400_000).toISOString();
        if (anti)
          db.update(antiAutopaths)
            .set({
              failures,
              reason: input.reason,
              expiresAt: failures >= rules.antiAfter ? expiresAt : anti.expiresAt,
            })
            .where(eq(antiAutopaths.id, anti.id))
            .run();
        else
          db.insert(antiAutopaths)
            .values({
              id: ids(),
              intentHash: input.intentHash,
              planHash: input.planHash,
              reason: input.reason,
              failures,
              expiresAt: failures >= rules.antiAfter ? expiresAt : now.toISOString(),
              createdAt: now.toISOString(),
            })
            .run();
        const isAnti = failures >= rules.antiAfter;
        if (isAnti) {
          db.update(autopaths)
            .set({ status: 'retired' })
            .where(and(eq(autopaths.intentHash, input.intentHash), eq(autopaths.planHash, input.planHash)))
            .run();
        }
        return { anti: isAnti };
      });
    },
    /** True while an unexpired anti-autopath covers this plan for this intent. */
    isAnti(intentHash: string, planHash: string): boolean {
      const row = statements.anti.get({ intentHash, planHash, now: clock().toISOString() });
      return row !== undefined && row.failures >= rules.antiAfter;
    },
    /** Plans excluded for an intent (anti-autopaths in force). */
    antiFor(intentHash: string): Array<{ planHash: string; reason: string; expiresAt: string }> {
      return db
        .select()
        .from(antiAutopaths)
        .where(
          and(eq(antiAutopaths.intentHash, intentHash), gt(antiAutopaths.expiresAt, clock().toISOString())),
        )
        .all()
        .filter((row) => row.failures >= rules.antiAfter)
        .map((row) => ({ planHash: row.planHash, reason: row.reason, expiresAt: row.expiresAt }));
    },
    /**
     * The champion of a cluster, unless an anti-autopath excludes it. With
     * `qualifiers`, the champion of that qualifier group only: a plan learned
     * for other qualifiers (or before they were kept) is never it.
     */
    champion(clusterId: string, qualifiers?: readonly string[]): AutopathEntry | undefined {
      const group = qualifiers === undefined ? undefined : JSON.stringify(qualifiers);
      const row = db
        .select()
        .from(autopaths)
        .where(and(eq(autopaths.clusterId, clusterId), eq(autopaths.status, 'champion')))
        .all()
        .find((candidate) => group === undefined || candidate.qualifiers === group);
      if (!row || store.isAnti(row.intentHash, row.planHash)) return undefined;
      return toEntry(row);
    },
    /**
     * How each champion looks from `vector`, through its cluster's centroid:
     * the recognizer's input for L1. Labels are autopath ids; champions of
     * clusters another embedder made, anti-autopaths and `excludeIds` are left out.
     */
    championSimilarities(
      vector: Float32Array,
      options: ScanOptions & { embedderId?: string } = {},
    ): LabelSimilarity[] {
      const centroids = new Map<string, Float32Array>();
      for (const [id, { centroid, embedderId }] of clusterIndex()) {
        if (options.embedderId !== undefined && embedderId !== options.embedderId) continue;
        if (centroid) centroids.set(id, centroid);
      }
      const anti = antiInForce();
      const items = statements.champions
        .all()
        .filter((row) => centroids.has(row.clusterId) && !anti.has(`${row.intentHash}|${row.planHash}`))
        .map((row) => ({ id: row.id, label: row.id, vector: centroids.get(row.clusterId)! }));
      return labelSimilaritiesOf(items, vector, options);
    },
    /** The champions in force (anti-autopaths left out), of `embedderId`'s clusters when given. */
    champions(embedderId?: string): AutopathEntry[] {
      const index = clusterIndex();
      const anti = antiInForce();
      return statements.champions
        .all()
        .filter((row) => {
          const cluster = index.get(row.clusterId);
          if (!cluster || (embedderId !== undefined && cluster.embedderId !== embedderId)) return false;
          return !anti.has(`${row.intentHash}|${row.planHash}`);
        })
        .map(toEntry)
        .filter((entry): entry is AutopathEntry => entry !== undefined);
    },
    /** An autopath by id. */
    get(id: string): AutopathEntry | undefined {
      const row = db.select().from(autopaths).where(eq(autopaths.id, id)).get();
      return row ? toEntry(row) : undefined;
    },
    /**
     * Retires the autopaths whose executors were superseded (another default
     * version) or disappeared; returns their ids.
     */
    invalidate(currentVersion: (name: string) => string | undefined): string[] {
      const doomed = db
        .select()
        .from(autopaths)
        .all()
        .filter((row) => row.status !== 'retired')
        .filter((row) => {
          const tools = readStoredJson(row.tools);
          return (
            !Array.isArray(tools) ||
            tools.some(
              (tool: { name?: unknown; version?: unknown }) =>
                typeof tool?.name !== 'string' || currentVersion(tool.name) !== tool.version,
            )
          );
        })
        .map((row) => row.id);
      if (doomed.length > 0)
        db.update(autopaths).set({ status: 'retired' }).where(inArray(autopaths.id, doomed)).run();
      return doomed;
    },
    /** The recognizer's calibrations, one per embedder id, kept in this file. */
    calibrations,
    /** The best champion for an exact intent hash. */
    championForIntent(intentHash: string): AutopathEntry | undefined {
      const rows = db
        .select()
        .from(autopaths)
        .where(and(eq(autopaths.intentHash, intentHash), eq(autopaths.status, 'champion')))
        .orderBy(desc(autopaths.score))
        .all();
      for (const row of rows) {
        const entry = store.isAnti(row.intentHash, row.planHash) ? undefined : toEntry(row);
        if (entry) return entry;
      }
      return undefined;
    },
    list(): AutopathEntry[] {
      return db
        .select()
        .from(autopaths)
        .all()
        .map(toEntry)
        .filter((entry): entry is AutopathEntry => entry !== undefined);
    },
    /**
     * Forgets one autopath by hand; its cluster's next best plan may become
     * champion. False when there is no autopath with that id.
     */
    remove(id: string): boolean {
      return atomically(() => {
        const row = statements.byId.get({ id });
        if (!row) return false;
        db.delete(autopaths).where(eq(autopaths.id, id)).run();
        settleCluster(row.clusterId);
        return true;
      });
    },
    /** Every cluster without its centroid: id, members, embedder, creation, newest first. */
    clusters(): ClusterRow[] {
      return db
        .select({
          id: clusters.id,
          members: clusters.members,
          embedderId: clusters.embedderId,
          createdAt: clusters.createdAt,
        })
        .from(clusters)
        .orderBy(desc(clusters.createdAt))
        .all();
    },
    /** The anti-autopaths in force (not expired, enough failures), the latest to expire first. */
    antiAutopaths(): AntiAutopathRow[] {
      return db
        .select({
          intentHash: antiAutopaths.intentHash,
          planHash: antiAutopaths.planHash,
          reason: antiAutopaths.reason,
          failures: antiAutopaths.failures,
          expiresAt: antiAutopaths.expiresAt,
        })
        .from(antiAutopaths)
        .where(
          and(
            gt(antiAutopaths.expiresAt, clock().toISOString()),
            gt(antiAutopaths.failures, rules.antiAfter - 1),
          ),
        )
        .orderBy(desc(antiAutopaths.expiresAt))
        .all();
    },
    /** The latest `limit` observations, newest first: a bounded read of the append-only log. */
    recentObservations(limit: number): ObservationRow[] {
      return db
        .select()
        .from(observations)
        .orderBy(desc(observations.id))
        .limit(Math.max(0, Math.floor(limit)))
        .all();
    },
    /** Appends one observation; returns its id. */
    observe(input: {
      turnId: string;
      request: string;
      intentHash?: string;
      planHash?: string;
      plan?: unknown;
      layer: string;
      latencyMs: number;
      vector?: Float32Array;
      outcome: 'success' | 'failure';
      errorClass?: string;
    }): number {
      const result = statements.observe.run({
        ts: clock().toISOString(),
        turnId: input.turnId,
        request: input.request,
        intentHash: input.intentHash ?? null,
        planHash: input.planHash ?? null,
        plan: input.plan === undefined ? null : JSON.stringify(input.plan),
        layer: input.layer,
        latencyMs: input.latencyMs,
        vector: input.vector ? vectorToBlob(input.vector) : null,
        outcome: input.outcome,
        errorClass: input.errorClass ?? null,
      });
      return Number(result.lastInsertRowid);
    },
    /**
     * Records feedback for a turn as a new observation row (the log stays
     * append-only) and applies it to the autopath that served or was learned:
     * `up` counts for the plan and promotes it when its group has no
     * champion; `down` and `retry` count against it, take its championship
     * away, and count towards an anti-autopath (the second makes one).
     */
    feedback(turnId: string, kind: 'up' | 'down' | 'retry'): boolean {
      return atomically(() => {
        const original = db
          .select()
          .from(observations)
          .where(eq(observations.turnId, turnId))
          .orderBy(desc(observations.id))
          .get();
        if (!original) return false;
        db.insert(observations)
          .values({ ...original, id: undefined, ts: clock().toISOString(), feedback: kind })
          .run();
        if (original.planHash && original.intentHash) {
          for (const row of db
            .select()
            .from(autopaths)
            .where(
              and(eq(autopaths.intentHash, original.intentHash), eq(autopaths.planHash, original.planHash)),
            )
            .all()) {
            const up = kind === 'up';
            db.update(autopaths)
              .set(
                up
                  ? { feedbackUp: row.feedbackUp + 1 }
                  : {
                      feedbackDown: row.feedbackDown + 1,
                      ...(row.status === 'champion' ? { status: 'challenger' as const } : {}),
                    },
              )
              .where(eq(autopaths.id, row.id))
              .run();
            rescore(row.id);
            if (up) promote(row.id);
            settleCluster(row.clusterId);
          }
          if (kind !== 'up')
            store.recordFailure({
              intentHash: original.intentHash,
              planHash: original.planHash,
              reason: `user feedback: ${kind}`,
            });
        }
        return true;
      });
    },
    observations(turnId?: string): ObservationRow[] {
      return turnId === undefined
        ? db.select().from(observations).all()
        : db.select().from(observations).where(eq(observations.turnId, turnId)).all();
    },
    close(): void {
      if (owned) client.close();
    },
  };
  return store;
}

export type AutopathStore = ReturnType<typeof createAutopathStore>;
