import type { FireResult, Slot } from './scheduler.ts';

/** The synt as the nightly task drives it (`createSynt` of `@metnos/synt`). */
export interface SuggestingSynt {
  suggest(now?: Date): Promise<{ summary: string }>;
}

/** A nightly step: one function of the built-in's slot. */
export type NightlyStep = (slot: Slot) => Promise<FireResult>;

/**
 * `synt_suggest`: recurring proto-mnests through compose-only, and the
 * introspective proposals (merge, generalise, specialise, archive), filed
 * as cards for the person. Asks no model, signs nothing; the run's summary
 * says what it filed.
 *
 * @example
 * startSchedulerService({ ...settings, synt: syntSuggestTask({ synt }) });
 */
export function syntSuggestTask(settings: { synt: SuggestingSynt; clock?: () => Date }): NightlyStep {
  return async () => {
    const report = await settings.synt.suggest(settings.clock?.() ?? new Date());
    return { ok: true, summary: `synt_suggest: ${report.summary}` };
  };
}

/**
 * Several nightly steps as the one `mnestome_synt` built-in: each runs in
 * order (the ager first, so a faded proto-mnest is purged before the synt
 * reads them), each even when one before it failed; the summaries joined,
 * and the run failed (so the scheduler records and retries it) when any
 * step failed or threw.
 *
 * @example
 * synt: nightlySteps(mnestomeAgerTask({ mnestome, executors }), syntSuggestTask({ synt }))
 */
export function nightlySteps(...steps: NightlyStep[]): NightlyStep {
  return async (slot) => {
    const said: string[] = [];
    const failed: string[] = [];
    for (const step of steps) {
      try {
        const result = await step(slot);
        if (result.ok) said.push(result.summary ?? 'done');
        else failed.push(result.error ?? 'failed');
      } catch (error) {
        failed.push(error instanceof Error ? error.message : String(error));
      }
    }
    return failed.length === 0
      ? { ok: true, summary: said.join('; ') }
      : { ok: false, error: [...failed, ...said].join('; ') };
  };
}
