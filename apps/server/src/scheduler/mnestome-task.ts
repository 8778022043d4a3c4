import type { FireResult, Slot } from './scheduler.ts';

/** What the ager reports (`AgerReport` of `@metnos/mnestome`), as far as the summary reads it. */
export interface AgerSummary {
  decayed: number;
  demoted: readonly unknown[];
  purged: readonly unknown[];
  belowThreshold: ReadonlyArray<{ executor: string; unusedDays: number }>;
}

/** The mnestome as the nightly task drives it (`createMnestome` of `@metnos/mnestome`). */
export interface AgedGraph {
  age(now?: Date, options?: { executors?: readonly string[] }): AgerSummary;
}

/** What {@link mnestomeAgerTask} needs. */
export interface MnestomeTaskSettings {
  mnestome: AgedGraph;
  /** The catalog's executor names, read at each run: who may be proposed for `below_threshold`. */
  executors: () => readonly string[];
  clock?: () => Date;
}

/**
 * The ager's report as the scheduler records it: counts, and each
 * `below_threshold` proposal with its days unused (a proposal only: the
 * person confirms archival).
 *
 * @example
 * describeAger({ decayed: 3, demoted: [], purged: [{}], belowThreshold: [] });
 * // 'mnestome: 3 weights decayed, 0 mnests demoted, 1 proto-mnest purged; no executor below threshold'
 */
export function describeAger(report: AgerSummary): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const proposals = report.belowThreshold.map(
    (proposal) => `${proposal.executor} (${proposal.unusedDays} days unused)`,
  );
  const counts = [
    `${plural(report.decayed, 'weight')} decayed`,
    `${plural(report.demoted.length, 'mnest')} demoted`,
    `${plural(report.purged.length, 'proto-mnest')} purged`,
  ].join(', ');
  const proposed =
    proposals.length > 0
      ? `proposed below_threshold, archive on your confirmation: ${proposals.join(', ')}`
      : 'no executor below threshold';
  return `mnestome: ${counts}; ${proposed}`;
}

/**
 * The server's nightly `mnestome_synt` built-in: one run of the mnestome's
 * ager (decay, demotion, proto purge, `below_threshold` proposals for the
 * catalog's executors), its report as the run's summary. A store that
 * cannot be written fails the run, which the scheduler records and retries.
 *
 * @example
 * startSchedulerService({ ...settings, synt: mnestomeAgerTask({ mnestome, executors: () => catalog.executors().map((e) => e.name) }) });
 */
export function mnestomeAgerTask(settings: MnestomeTaskSettings): (slot: Slot) => Promise<FireResult> {
  return async () => {
    const now = settings.clock?.() ?? new Date();
    const report = settings.mnestome.age(now, { executors: settings.executors() });
    return { ok: true, summary: describeAger(report) };
  };
}
