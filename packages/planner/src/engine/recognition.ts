import {
  type CalibrationExample,
  createRecognizer,
  type DecisionRule,
  type Recognition,
  type Recognizer,
  type RecognizerIndex,
} from '@metnos/autopath';
import type { StoredCalibration } from '@metnos/autopath/stores';
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
   * its own copy left out, past turns' requests, and requests that ended at
   * the Terminator as ones nothing should serve) when the stored calibration
   * for this embedder is missing or older than `everyMs`, there are at least
   * ten in-scope examples, and the fit serves some of them (an infeasible fit
   * would refuse everything; the rule in force stays). Returns what it saved.
   */
  calibrate(options?: {
    everyMs?: number;
    force?: boolean;
  }): Promise<Partial<Record<MemorySpace, StoredCalibration>>>;
}

const DAY = 86_400_000;

/** How many past turns a calibration reads at most. */
const CALIBRATION_HISTORY = 2_000;

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

  const examplesFor = (space: MemorySpace): CalibrationExample[] => {
    const history = autopath.observations().slice(-CALIBRATION_HISTORY);
    const outOfScope = history
      .filter((row) => row.layer === 'terminator' && row.feedback === null)
      .map((row) => ({ text: normalizeRequest(row.request), label: null }));
    if (space === 'fastpath')
      return [...indexes.fastpath.entries().map(({ text, label }) => ({ text, label })), ...outOfScope];
    const championOf = new Map<string, string>();
    for (const entry of autopath.champions(embedderId))
      championOf.set(`${entry.intentHash}|${entry.planHash}`, entry.id);
    const served: CalibrationExample[] = [];
    for (const row of history) {
      if (row.outcome !== 'success' || row.feedback !== null) continue;
      const label = championOf.get(`${row.intentHash}|${row.planHash}`);
      if (label) served.push({ text: normalizeRequest(row.request), label });
    }
    return [...served, ...outOfScope];
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
        if (indexes[space].size === 0) continue;
        const examples = examplesFor(space);
        if (examples.filter((example) => example.label !== null).length < MINIMUM_EXAMPLES) continue;
        const candidate = build(space);
        const report = await candidate.calibrate(examples);
        if (!report.feasible) continue;
        recognizers[space] = candidate;
        saved[space] = stores[space].calibrations.save(embedderId, report);
      }
      return saved;
    },
  };
}
