import {
  type CalibrationExample,
  type CalibrationTargets,
  createRecognizer,
  type DecisionRule,
  type Recognition,
  type Recognizer,
  type RecognizerIndex,
} from '@metnos/autopath';
import type { StoredCalibration } from '@metnos/autopath/stores';
import { describeRequest, type RequestKey, reuseFilter } from './request-key.ts';
import { normalizeRequest } from './slots.ts';
import type { EngineSettings } from './types.ts';

/** Which memory a recognizer reads. */
export type MemorySpace = 'fastpath' | 'autopath';

/**
 * The calibrated recognizers of L0 and L1, one per store, for one embedder:
 * the rule each starts from comes from the settings, the rule in force from
 * the store's calibration for this embedder id when it has one.
 */
export interface MemoryRecognition {
  /** Serve-or-miss for a request vector, leaving out entries the caller found incompatible. */
  recognize(space: MemorySpace, vector: Float32Array, excludeIds: ReadonlySet<string>): Recognition;
  rule(space: MemorySpace): DecisionRule;
  /**
   * Fits both rules again on what the stores hold (each stored request with
   * its own copy left out — at most 2,000 of them, spread over the store —
   * past turns' requests, and requests that ended at the Terminator as ones
   * nothing should serve), each scored without the plans its qualifiers and
   * slots cannot reuse, as a turn would score it; when the stored calibration
   * for this embedder is missing or older than `everyMs`, there are at least
   * ten in-scope examples, and the fit serves some of them (an infeasible fit
   * would refuse everything; the rule in force stays). Wrong reuse must be
   * shown within 1% with 95% confidence, else the fit may only tighten the
   * starting rule. Returns what it saved.
   */
  calibrate(options?: {
    everyMs?: number;
    force?: boolean;
  }): Promise<Partial<Record<MemorySpace, StoredCalibration>>>;
  /**
   * Fits a space again, whatever the age of its rule, when its store has
   * grown by a quarter since the last fit in this process (or since the
   * engine first looked): what a turn that learned a plan calls, so a new
   * memory does not wait for the daily maintenance to serve by meaning.
   */
  refitIfGrown(): Promise<Partial<Record<MemorySpace, StoredCalibration>>>;
}

const DAY = 86_400_000;

/** A calibration example with the request's key, to leave out what serving it would leave out. */
interface KeyedExample extends CalibrationExample {
  key: RequestKey;
}

const keyed = (request: string, label: string | null): KeyedExample => ({
  text: normalizeRequest(request),
  label,
  key: describeRequest(request),
});

/** How many past turns a calibration reads at most. */
const CALIBRATION_HISTORY = 2_000;

/**
 * How many stored L0 requests a calibration scores at most (spread evenly
 * over the store): each is compared with every stored request, so the cost
 * grows with the square of the store, and a few thousand examples already
 * measure error rates of a fraction of a percent.
 */
const CALIBRATION_ENTRIES = 2_000;

/**
 * What a fitted rule must keep: the recognizer's default error targets (1%
 * wrong reuse and out-of-scope hits, fitted to half of each), and wrong reuse
 * shown to be within 1% with 95% confidence — a memory too small to show it
 * keeps the rule it has.
 */
const CALIBRATION_TARGETS: CalibrationTargets = { confidence: 0.95 };

/** How much a store grows between two fits that do not wait for the daily maintenance. */
const REFIT_GROWTH = 1.25;

/**
 * Fewer in-scope examples than this say nothing a calibration could use:
 * with one stored request per plan, leaving each out leaves nothing to
 * serve it, and the fit refuses everything. Below it the starting rule stays.
 */
const MINIMUM_EXAMPLES = 10;

/** Creates the recognizers of an engine. */
export function createMemoryRecognition(
  settings: EngineSettings,
  embedderId: string,
  clock: () => Date,
): MemoryRecognition {
  const { fastpath, autopath, embedder } = settings;
  const embed = (texts: string[]) => embedder.embed(texts);
  const indexes: Record<MemorySpace, RecognizerIndex> = {
    fastpath: {
      get size() {
        return fastpath.list().filter((entry) => entry.vector && entry.embedderId === embedderId).length;
      },
      entries: () =>
        fastpath.list().map((entry) => ({
          id: entry.id,
          text: normalizeRequest(entry.request),
          label: entry.planHash ?? `entry:${entry.id}`,
          createdAt: entry.createdAt,
        })),
      embed,
      labelSimilarities: (vector, options) => fastpath.labelSimilarities(vector, { ...options, embedderId }),
    },
    autopath: {
      get size() {
        return autopath.champions(embedderId).length;
      },
      entries: () => [],
      embed,
      labelSimilarities: (vector, options) =>
        autopath.championSimilarities(vector, { ...options, embedderId }),
    },
  };
  const start: Record<MemorySpace, DecisionRule> = {
    fastpath: {
      threshold: settings.recognition?.fastpathThreshold ?? 0.9,
      margin: settings.recognition?.fastpathMargin ?? 0.02,
      mix: 1,
    },
    autopath: {
      threshold: settings.recognition?.autopathThreshold ?? 0.9,
      margin: settings.recognition?.autopathMargin ?? 0.02,
      mix: 1,
    },
  };
  const stores = { fastpath, autopath };
  const build = (space: MemorySpace): Recognizer =>
    createRecognizer({
      index: indexes[space],
      rule: start[space],
      calibrated: stores[space].calibrations.get(embedderId)?.rule,
    });
  const recognizers: Record<MemorySpace, Recognizer> = {
    fastpath: build('fastpath'),
    autopath: build('autopath'),
  };

  /**
   * The examples a space is fitted on, each with its request's key: a request
   * is scored without the remembered plans it could not reuse (other
   * qualifiers, slots or pinned values), as serving scores it. Fitted over
   * every plan instead, a request whose own plan was learned with other
   * qualifiers would meet rivals the turn never sees, and the lead of a
   * wrong plan that is the only compatible one would never be measured.
   */
  const examplesFor = (space: MemorySpace): KeyedExample[] => {
    const history = autopath.observations().slice(-CALIBRATION_HISTORY);
    const outOfScope = history
      .filter((row) => row.layer === 'terminator' && row.feedback === null)
      .map((row) => keyed(row.request, null));
    if (space === 'fastpath') {
      const entries = fastpath.list();
      const step = Math.max(1, entries.length / CALIBRATION_ENTRIES);
      const sampled = entries.filter((_, position) => Math.floor(position % step) === 0);
      return [
        ...sampled.map((entry) => keyed(entry.request, entry.planHash ?? `entry:${entry.id}`)),
        ...outOfScope,
      ];
    }
    const championOf = new Map<string, string>();
    for (const entry of autopath.champions(embedderId))
      championOf.set(`${entry.intentHash}|${entry.planHash}`, entry.id);
    const served: KeyedExample[] = [];
    for (const row of history) {
      if (row.outcome !== 'success' || row.feedback !== null) continue;
      const label = championOf.get(`${row.intentHash}|${row.planHash}`);
      if (label) served.push(keyed(row.request, label));
    }
    return [...served, ...outOfScope];
  };
  const incompatible = (space: MemorySpace) =>
    reuseFilter(space === 'fastpath' ? fastpath.list() : autopath.champions(embedderId));

  /** The size of each store when it was last fitted (or first looked at) in this process. */
  const fittedSize: Partial<Record<MemorySpace, number>> = {};

  /** Fits one space on what the stores hold; undefined when there is too little to fit or the fit serves nothing. */
  const fit = async (space: MemorySpace): Promise<StoredCalibration | undefined> => {
    const size = indexes[space].size;
    if (size === 0) return undefined;
    fittedSize[space] = size;
    const examples = examplesFor(space);
    if (examples.filter((example) => example.label !== null).length < MINIMUM_EXAMPLES) return undefined;
    const candidate = build(space);
    const excluded = incompatible(space);
    const report = await candidate.calibrate(examples, CALIBRATION_TARGETS, {
      exclude: (example) => excluded(example.key),
    });
    if (!report.feasible) return undefined;
    recognizers[space] = candidate;
    return stores[space].calibrations.save(embedderId, report);
  };

  return {
    recognize: (space, vector, excludeIds) => recognizers[space].recognizeVector(vector, { excludeIds }),
    rule: (space) => recognizers[space].rule,
    async calibrate(options = {}) {
      const saved: Partial<Record<MemorySpace, StoredCalibration>> = {};
      for (const space of ['fastpath', 'autopath'] as const) {
        const stored = stores[space].calibrations.get(embedderId);
        const age = stored ? clock().getTime() - Date.parse(stored.calibratedAt) : Number.POSITIVE_INFINITY;
        if (!options.force && age < (options.everyMs ?? DAY)) continue;
        const fitted = await fit(space);
        if (fitted) saved[space] = fitted;
      }
      return saved;
    },
    async refitIfGrown() {
      const saved: Partial<Record<MemorySpace, StoredCalibration>> = {};
      for (const space of ['fastpath', 'autopath'] as const) {
        const size = indexes[space].size;
        fittedSize[space] ??= size;
        const since = fittedSize[space];
        if (size <= since || size < Math.max(MINIMUM_EXAMPLES, since * REFIT_GROWTH)) continue;
        const fitted = await fit(space);
        if (fitted) saved[space] = fitted;
      }
      return saved;
    },
  };
}
