import { openDatabase, type StoreLocation } from '@metnos/autopath/stores';
import { and, desc, eq, gte, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { type AgerReport, ageMnestome } from './ager.ts';
import { type DesiredSignature, desiredSignatureSchema, readDesiredSignature } from './desired-signature.ts';
import { mnestomeMigrations } from './migrations.ts';
import { DEFAULT_RULES, decayed, type MnestomeRules, reinforced } from './rules.ts';
import { executorUses, mnests } from './schema.ts';

/** One passage from executor `src`'s output into `dst`, as the mnestome keeps it. */
export interface Mnest {
  src: string;
  dst: string;
  /** False for a proto-mnest: `dst` does not exist yet. */
  dstExists: boolean;
  /** In [0, 1], decayed to the instant it was read. */
  weight: number;
  uses: number;
  firstUsedAt: string;
  lastUsedAt: string;
  /** `dormant` once the weight fell below the demotion line; a new passage wakes it. */
  state: 'active' | 'dormant';
  /** What the missing executor was wished for (proto-mnests only). */
  desiredSignature?: DesiredSignature;
}

/** Which proto-mnests {@link Mnestome.protoMnests} lists. */
export interface ProtoFilter {
  /** Only those used at or after this instant. */
  since?: Date;
  /** Only those used at least this many times. */
  minUses?: number;
  /** Only those whose weight, decayed to now, is at least this. */
  minWeight?: number;
}

/** Settings of {@link createMnestome}: where the graph lives, plus clock, rules and the error sink. */
export type MnestomeSettings = StoreLocation & {
  rules?: MnestomeRules;
  clock?: () => Date;
  /**
   * Told of a write (or a read during a turn) that failed; the failure goes
   * no further. Default: one line on stderr.
   */
  onError?: (error: unknown, operation: string) => void;
};

const reportToStderr = (error: unknown, operation: string) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`metnos: the mnestome could not ${operation}: ${message}\n`);
};

type MnestRow = typeof mnests.$inferSelect;

/**
 * Opens the mnestome: the SQLite graph of passages between executors (seed
 * 000's mnestome hooks). The planner calls {@link Mnestome.recordPassing}
 * when an executor's output fed another one's input, and for an unknown tool
 * fed from a real one (a proto-mnest, with the signature it was wished for);
 * the pre-filter reads {@link Mnestome.passagesFrom}; the nightly task calls
 * {@link Mnestome.age}. Writes are fail-safe: an error goes to `onError` and
 * never to the turn. Opening a file that cannot be used throws autopath's
 * `StoreError`, as every Metnos store does.
 *
 * @example
 * const mnestome = createMnestome({ path: join(dataDir, 'mnestome.sqlite') });
 * mnestome.recordPassing('fs_read', 'text_stats', true);
 * mnestome.recordPassing('fs_read', 'csv_sum', false, signature);
 * mnestome.passagesFrom('fs_read'); // [{ src: 'fs_read', dst: 'text_stats', weight: 0.15, … }]
 */
export function createMnestome(settings: MnestomeSettings) {
  const rules = { ...DEFAULT_RULES, ...settings.rules };
  const clock = settings.clock ?? (() => new Date());
  const onError = settings.onError ?? reportToStderr;
  const { client, owned } = openDatabase(settings, mnestomeMigrations());
  const db = drizzle(client);

  /** Runs `work`; a failure is reported and `fallback` returned instead. */
  const failSafe = <T>(operation: string, fallback: T, work: () => T): T => {
    try {
      return work();
    } catch (error) {
      try {
        onError(error, operation);
      } catch {}
      return fallback;
    }
  };

  const toMnest = (row: MnestRow, now: string): Mnest => {
    const desired = row.dstExists ? undefined : readDesiredSignature(row.desiredSignature);
    return {
      src: row.src,
      dst: row.dst,
      dstExists: row.dstExists,
      weight: decayed(row.weight, row.decayedAt, now, rules),
      uses: row.uses,
      firstUsedAt: row.firstUsedAt,
      lastUsedAt: row.lastUsedAt,
      state: row.state,
      ...(desired ? { desiredSignature: desired } : {}),
    };
  };

  const upsertPassing = (src: string, dst: string, dstExists: boolean, desired?: DesiredSignature) => {
    const now = clock().toISOString();
    const signature = desired === undefined ? null : JSON.stringify(desiredSignatureSchema.parse(desired));
    client
      .transaction(() => {
        const row = db
          .select()
          .from(mnests)
          .where(and(eq(mnests.src, src), eq(mnests.dst, dst)))
          .get();
        if (!row) {
          db.insert(mnests)
            .values({
              src,
              dst,
              dstExists,
              weight: rules.bootstrapWeight,
              uses: 1,
              firstUsedAt: now,
              lastUsedAt: now,
              decayedAt: now,
              state: 'active',
              desiredSignature: dstExists ? null : signature,
            })
            .run();
          return;
        }
        db.update(mnests)
          .set({
            // a proto whose executor now exists becomes a real mnest; a real one never goes back
            dstExists: row.dstExists || dstExists,
            weight: reinforced(decayed(row.weight, row.decayedAt, now, rules), rules),
            uses: row.uses + 1,
            lastUsedAt: now,
            decayedAt: now,
            state: 'active',
            desiredSignature: row.dstExists || dstExists ? null : (signature ?? row.desiredSignature),
          })
          .where(and(eq(mnests.src, src), eq(mnests.dst, dst)))
          .run();
      })
      .immediate();
  };

  const mnestome = {
    /**
     * Records one passage from `src`'s output into `dst`: the mnest is born
     * with the bootstrap weight or reinforced. `dstExists: false` makes (or
     * reinforces) a proto-mnest, keeping the latest `desiredSignature`. Never
     * throws.
     */
    recordPassing(src: string, dst: string, dstExists: boolean, desiredSignature?: DesiredSignature): void {
      failSafe('record a passage', undefined, () => upsertPassing(src, dst, dstExists, desiredSignature));
    },

    /** Counts one successful run of `executor` (what `below_threshold` proposals read). Never throws. */
    recordUse(executor: string): void {
      failSafe('record a use', undefined, () => {
        const now = clock().toISOString();
        db.insert(executorUses)
          .values({ executor, uses: 1, firstSeenAt: now, lastUsedAt: now })
          .onConflictDoUpdate({
            target: executorUses.executor,
            set: { uses: sql`${executorUses.uses} + 1`, lastUsedAt: now },
          })
          .run();
      });
    },

    /**
     * The active mnests out of `src` into existing executors, heaviest
     * first: what usually follows `src`. Empty (and reported) when the store
     * cannot be read.
     */
    passagesFrom(src: string): Mnest[] {
      return failSafe('read passages', [] as Mnest[], () => {
        const now = clock().toISOString();
        return db
          .select()
          .from(mnests)
          .where(and(eq(mnests.src, src), eq(mnests.dstExists, true), eq(mnests.state, 'active')))
          .all()
          .map((row) => toMnest(row, now))
          .sort((a, b) => b.weight - a.weight || a.dst.localeCompare(b.dst));
      });
    },

    /** Proto-mnests, most used first, filtered by last use, uses and current weight. */
    protoMnests(filter: ProtoFilter = {}): Mnest[] {
      const now = clock().toISOString();
      const conditions = [eq(mnests.dstExists, false)];
      if (filter.since) conditions.push(gte(mnests.lastUsedAt, filter.since.toISOString()));
      if (filter.minUses !== undefined) conditions.push(gte(mnests.uses, filter.minUses));
      return db
        .select()
        .from(mnests)
        .where(and(...conditions))
        .orderBy(desc(mnests.uses), mnests.src, mnests.dst)
        .all()
        .map((row) => toMnest(row, now))
        .filter((mnest) => filter.minWeight === undefined || mnest.weight >= filter.minWeight);
    },

    /** Every mnest, real and proto, with its current weight. */
    mnests(): Mnest[] {
      const now = clock().toISOString();
      return db
        .select()
        .from(mnests)
        .orderBy(mnests.src, mnests.dst)
        .all()
        .map((row) => toMnest(row, now));
    },

    /**
     * The ager (see {@link ageMnestome}): decay, demotion, proto purge, and
     * `below_threshold` proposals for the `executors` named (the catalog's),
     * as of `now`. Changes no executor's state. Throws when the store cannot
     * be written, so the nightly task records the failure.
     */
    age(now: Date = clock(), options: { executors?: readonly string[] } = {}): AgerReport {
      return ageMnestome(client, rules, now, options.executors ?? []);
    },

    close(): void {
      if (owned) client.close();
    },
  };
  return mnestome;
}

export type Mnestome = ReturnType<typeof createMnestome>;
