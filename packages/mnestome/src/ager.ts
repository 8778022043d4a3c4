import type Database from 'better-sqlite3';
import { and, eq, inArray } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { DAY_MS, decayed, type ResolvedRules } from './rules.ts';
import { executorUses, mnests } from './schema.ts';

/**
 * An executor unused for longer than the rules allow, proposed for the
 * lifecycle's `below_threshold` state. A proposal only: the ager changes no
 * state, and archival waits for the person to confirm it.
 */
export interface BelowThresholdProposal {
  executor: string;
  proposal: 'below_threshold';
  /** Its last successful run, if the mnestome ever saw one. */
  lastUsedAt: string | undefined;
  /** Days since the last use (or since the mnestome first saw it, when never used). */
  unusedDays: number;
  uses: number;
  reason: string;
}

/** What one run of the ager did. */
export interface AgerReport {
  /** Mnests whose weight was brought up to date. */
  decayed: number;
  /** Real mnests that went dormant, with the weight they fell to. */
  demoted: Array<{ src: string; dst: string; weight: number }>;
  /** Proto-mnests unused past the purge line, deleted. */
  purged: Array<{ src: string; dst: string; uses: number; lastUsedAt: string }>;
  belowThreshold: BelowThresholdProposal[];
}

type Db = ReturnType<typeof drizzle>;

function decayAndDemote(db: Db, rules: ResolvedRules, at: string, report: AgerReport): void {
  const purgeBefore = Date.parse(at) - rules.protoPurgeDays * DAY_MS;
  for (const row of db.select().from(mnests).all()) {
    const key = and(eq(mnests.src, row.src), eq(mnests.dst, row.dst));
    if (!row.dstExists && Date.parse(row.lastUsedAt) < purgeBefore) {
      db.delete(mnests).where(key).run();
      report.purged.push({ src: row.src, dst: row.dst, uses: row.uses, lastUsedAt: row.lastUsedAt });
      continue;
    }
    const weight = decayed(row.weight, row.decayedAt, at, rules);
    const demote = row.dstExists && row.state === 'active' && weight < rules.demoteBelow;
    if (weight === row.weight && !demote) continue;
    db.update(mnests)
      .set({ weight, decayedAt: at, ...(demote ? { state: 'dormant' as const } : {}) })
      .where(key)
      .run();
    report.decayed++;
    if (demote) report.demoted.push({ src: row.src, dst: row.dst, weight });
  }
}

function proposeBelowThreshold(
  db: Db,
  rules: ResolvedRules,
  at: string,
  executors: readonly string[],
): BelowThresholdProposal[] {
  if (executors.length === 0) return [];
  for (const executor of executors)
    db.insert(executorUses)
      .values({ executor, uses: 0, firstSeenAt: at, lastUsedAt: null })
      .onConflictDoNothing()
      .run();
  const rows = db
    .select()
    .from(executorUses)
    .where(inArray(executorUses.executor, [...executors]))
    .all();
  const proposals: BelowThresholdProposal[] = [];
  for (const row of rows) {
    const since = row.lastUsedAt ?? row.firstSeenAt;
    const unusedDays = Math.floor((Date.parse(at) - Date.parse(since)) / DAY_MS);
    if (unusedDays < rules.belowThresholdDays) continue;
    proposals.push({
      executor: row.executor,
      proposal: 'below_threshold',
      lastUsedAt: row.lastUsedAt ?? undefined,
      unusedDays,
      uses: row.uses,
      reason: row.lastUsedAt
        ? `not used for ${unusedDays} days (limit ${rules.belowThresholdDays}); archive it if you no longer need it`
        : `never used in the ${unusedDays} days since the mnestome first saw it (limit ${rules.belowThresholdDays})`,
    });
  }
  return proposals.sort((a, b) => b.unusedDays - a.unusedDays || a.executor.localeCompare(b.executor));
}

/**
 * One run of the ager, in one transaction, as of `now`: every mnest's weight
 * decays by the half-life since it was last brought up to date; a real mnest
 * that falls below the demotion line goes dormant (the pre-filter no longer
 * sees it; a new passage wakes it); a proto-mnest unused past the purge line
 * is deleted; and each executor named in `executors` that has not run for
 * `belowThresholdDays` (counted from its first sighting when it never ran) is
 * proposed for `below_threshold`. Running it twice at the same instant
 * changes nothing the second time.
 *
 * @example
 * const report = ageMnestome(client, DEFAULT_RULES, new Date(), catalog.executors().map((e) => e.name));
 */
export function ageMnestome(
  client: Database.Database,
  rules: ResolvedRules,
  now: Date,
  executors: readonly string[],
): AgerReport {
  const db = drizzle(client);
  const at = now.toISOString();
  const report: AgerReport = { decayed: 0, demoted: [], purged: [], belowThreshold: [] };
  client
    .transaction(() => {
      decayAndDemote(db, rules, at, report);
      report.belowThreshold = proposeBelowThreshold(db, rules, at, executors);
    })
    .immediate();
  return report;
}
