import { VectorIndexError } from './errors.ts';
import type { LabelSimilarity, ScanOptions, VectorIndex } from './vector-index.ts';

/**
 * What a recognizer reads: a {@link VectorIndex}, or any store that can say
 * how each of its labels looks from a query (the L0 and L1 stores, through
 * `labelSimilaritiesOf`). `entries()` names the stored texts so calibration
 * can leave an example's own copy out; a store without texts returns none.
 */
export type RecognizerIndex = Pick<VectorIndex, 'size' | 'entries' | 'embed' | 'labelSimilarities'>;

/**
 * When to serve a remembered plan. A label's score mixes the cosine with its
 * nearest stored request and with its centroid: `mix * nearest + (1 - mix) *
 * centroid`. The best label is served when its score reaches `threshold` and
 * leads the second-best label by at least `margin` (never on a tie).
 */
export interface DecisionRule {
  threshold: number;
  margin: number;
  mix: number;
}

/** The outcome of a recognition: serve a label's plan, or miss (and let the next layer work). */
export type Recognition =
  | { kind: 'serve'; label: string; score: number; margin: number; nearestId: string }
  | {
      kind: 'miss';
      reason: 'empty' | 'below_threshold' | 'ambiguous';
      label?: string;
      score: number;
      margin: number;
    };

/** A calibration example: a request and the label that should serve it, or `null` for one nothing should serve. */
export interface CalibrationExample {
  text: string;
  label: string | null;
}

/** The error rates a calibration must keep, as fractions. */
export interface CalibrationTargets {
  /** Served with another label's plan, over in-scope examples. Default 0.01. */
  wrongReuse?: number;
  /** Out-of-scope examples served at all, over out-of-scope examples. Default 0.01. */
  falseHits?: number;
  /**
   * The fraction of each target the calibration may spend. New requests are
   * never quite like the training ones (on CLINC150 the wrong-reuse rate of
   * val runs ~1.5x what the same rule scores on held-out train), so by default
   * the rule is fitted to half the targets. Default 0.5; 1 spends them whole.
   */
  safety?: number;
  /**
   * Below this many examples a fitted rule may not be looser than the
   * recognizer's starting rule: a handful of examples cannot show a 1% error
   * rate, and a threshold fitted on three requests serves almost anything.
   * Default 200.
   */
  minimumExamples?: number;
  /**
   * When set (say 0.95), a rule may also show no more wrong reuses on the
   * examples than a true rate at the `wrongReuse` target would give with
   * probability `1 - confidence` (a one-sided binomial test): on few
   * examples no error at all, and below about 300 (for 1% at 0.95) no rule,
   * since nothing that small can show the target. `calibrate` then treats
   * the examples as too few (see `minimumExamples`): the starting rule may
   * tighten, not loosen. Out-of-scope hits keep the `safety` rule alone:
   * their examples are the few requests that ended unserved, not a sample
   * anyone drew.
   */
  confidence?: number;
}

/**
 * The most errors `n` examples may show while a true error rate of `rate`
 * would give that few with probability at most `1 - confidence`; -1 when
 * even none would not (then no rule can show the rate).
 *
 * @example
 * confidentErrors(300, 0.01, 0.95); // 0 (0.99^300 ≈ 0.049)
 * confidentErrors(200, 0.01, 0.95); // -1
 */
export function confidentErrors(n: number, rate: number, confidence: number): number {
  const alpha = 1 - confidence;
  if (rate >= 1) return n;
  let probability = (1 - rate) ** n;
  let cumulative = probability;
  if (cumulative > alpha) return -1;
  for (let errors = 0; errors < n; errors++) {
    probability *= ((n - errors) / (errors + 1)) * (rate / (1 - rate));
    if (cumulative + probability > alpha) return errors;
    cumulative += probability;
  }
  return n;
}

/** What a calibration chose and what it expects, measured on the examples it was given. */
export interface CalibrationReport {
  rule: DecisionRule;
  inScope: number;
  outOfScope: number;
  /** Fractions of in-scope examples: served right, served wrong, missed. */
  correctReuse: number;
  wrongReuse: number;
  misses: number;
  /** Fraction of out-of-scope examples served. */
  falseHits: number;
  /** Whether a rule met the targets with any reuse at all; if not the rule serves nothing. */
  feasible: boolean;
  /** True when there were fewer than `minimumExamples` and the starting rule bounded the fit. */
  bounded: boolean;
}

/** Settings of {@link createRecognizer}. */
export interface RecognizerSettings {
  index: RecognizerIndex;
  /**
   * Starting rule, replaced by `calibrate`, and the floor of a calibration on
   * fewer than `minimumExamples`. Defaults (for the hashing embedder): threshold
   * 0.6, margin 0.08, mix 0.5.
   */
  rule?: Partial<DecisionRule>;
  /**
   * A rule an earlier calibration fitted (say, read back from the store),
   * in force until the next `calibrate`. `rule` stays the floor a small
   * calibration may not loosen.
   */
  calibrated?: DecisionRule;
}

/** Options of {@link Recognizer.calibrate}. */
export interface CalibrationOptions<Example extends CalibrationExample = CalibrationExample> {
  /**
   * The stored ids an example may not be served from: what the caller leaves
   * out at serving time (`recognizeVector(vector, { excludeIds })`) for such a
   * request, so the fit sees the competition the request will really meet.
   * Called once per example; its own stored copy is left out besides.
   */
  exclude?: (example: Example) => ReadonlySet<string> | undefined;
}

/** Decides serve-or-miss for a request against the labelled requests of a vector index. */
export interface Recognizer {
  readonly rule: DecisionRule;
  recognize(text: string): Promise<Recognition>;
  recognizeVector(vector: Float32Array, options?: ScanOptions): Recognition;
  /**
   * Fits the rule on examples (training data only). An example whose text is
   * stored in the index is scored without its own copy (leave-one-out), and
   * without the ids `options.exclude` names for it.
   */
  calibrate<Example extends CalibrationExample>(
    examples: Example[],
    targets?: CalibrationTargets,
    options?: CalibrationOptions<Example>,
  ): Promise<CalibrationReport>;
}

/** The few best labels of one example, enough to rank labels under any mix. */
export interface CalibrationPoint {
  /** The label that should serve it, or `null` for out of scope. */
  truth: string | null;
  candidates: Array<{ label: string; nearest: number; centroid: number }>;
}

const MIXES = [1, 0.75, 0.5, 0.25, 0];
const MARGIN_STEP = 0.0025;
const MARGIN_MAX = 0.3;

function rank(
  candidates: CalibrationPoint['candidates'],
  mix: number,
): { label: string | undefined; score: number; margin: number } {
  let label: string | undefined;
  let first = Number.NEGATIVE_INFINITY;
  let second = Number.NEGATIVE_INFINITY;
  for (const candidate of candidates) {
    const score = mix * candidate.nearest + (1 - mix) * candidate.centroid;
    if (score > first) {
      second = first;
      first = score;
      label = candidate.label;
    } else if (score > second) second = score;
  }
  return { label, score: first, margin: label === undefined ? 0 : first - Math.max(second, 0) };
}

function candidatesOf(similarities: LabelSimilarity[], keep = 6): CalibrationPoint['candidates'] {
  const byNearest = similarities.slice(0, keep);
  const byCentroid = similarities
    .slice()
    .sort((left, right) => right.centroid - left.centroid)
    .slice(0, keep);
  const union = new Map<string, LabelSimilarity>();
  for (const similarity of [...byNearest, ...byCentroid]) union.set(similarity.label, similarity);
  return [...union.values()].map(({ label, nearest, centroid }) => ({ label, nearest, centroid }));
}

/**
 * Chooses the rule that serves the most in-scope points correctly while wrong
 * reuse and out-of-scope hits stay within the targets (times `safety`). For each mix and
 * margin it sweeps the threshold down the sorted scores; both error counts
 * only grow as the threshold falls, so the sweep stops at the first breach.
 *
 * @example
 * const { rule } = fitDecisionRule(points, { wrongReuse: 0.01, falseHits: 0.01 });
 */
export function fitDecisionRule(
  points: CalibrationPoint[],
  targets: CalibrationTargets = {},
): CalibrationReport {
  const safety = targets.safety ?? 0.5;
  const wrongTarget = (targets.wrongReuse ?? 0.01) * safety;
  const falseTarget = (targets.falseHits ?? 0.01) * safety;
  const inScope = points.filter((point) => point.truth !== null).length;
  const outOfScope = points.length - inScope;
  const allowedWrong = Math.min(
    Math.floor(wrongTarget * inScope + 1e-9),
    targets.confidence === undefined
      ? Number.POSITIVE_INFINITY
      : confidentErrors(inScope, targets.wrongReuse ?? 0.01, targets.confidence),
  );
  const allowedFalse = Math.floor(falseTarget * outOfScope + 1e-9);
  let best = {
    rule: { threshold: Number.POSITIVE_INFINITY, margin: MARGIN_MAX, mix: 0.5 },
    correct: 0,
    wrong: 0,
    falseHits: 0,
  };
  for (const mix of MIXES) {
    const ranked = points
      .map((point) => ({ ...rank(point.candidates, mix), truth: point.truth }))
      .sort((left, right) => right.score - left.score);
    // Margins from the widest down, thresholds from the highest down: among rules that serve
    // equally many, the first found is the most cautious.
    for (let step = Math.round(MARGIN_MAX / MARGIN_STEP); step >= 0; step--) {
      const margin = step * MARGIN_STEP;
      let correct = 0;
      let wrong = 0;
      let falseHits = 0;
      for (let position = 0; position < ranked.length; position++) {
        const point = ranked[position]!;
        if (point.margin < margin || point.margin <= 0 || point.label === undefined) continue;
        if (point.truth === null) falseHits++;
        else if (point.truth === point.label) correct++;
        else wrong++;
        if (wrong > allowedWrong || falseHits > allowedFalse) break;
        const next = ranked[position + 1];
        if (next && next.score === point.score) continue;
        if (correct > best.correct)
          best = { rule: { threshold: point.score, margin, mix }, correct, wrong, falseHits };
      }
    }
  }
  return {
    rule: best.rule,
    inScope,
    outOfScope,
    correctReuse: inScope > 0 ? best.correct / inScope : 0,
    wrongReuse: inScope > 0 ? best.wrong / inScope : 0,
    misses: inScope > 0 ? (inScope - best.correct - best.wrong) / inScope : 0,
    falseHits: outOfScope > 0 ? best.falseHits / outOfScope : 0,
    feasible: best.correct > 0,
    bounded: false,
  };
}

/**
 * Scores a fixed rule on calibration points: what it would serve right,
 * serve wrong, miss, and serve out of scope.
 *
 * @example
 * const { wrongReuse } = evaluateRule(points, { threshold: 0.4, margin: 0.2, mix: 0.5 });
 */
export function evaluateRule(points: CalibrationPoint[], rule: DecisionRule): CalibrationReport {
  let correct = 0;
  let wrong = 0;
  let falseHits = 0;
  for (const point of points) {
    const ranked = rank(point.candidates, rule.mix);
    if (
      ranked.label === undefined ||
      ranked.score < rule.threshold ||
      ranked.margin < rule.margin ||
      ranked.margin <= 0
    )
      continue;
    if (point.truth === null) falseHits++;
    else if (point.truth === ranked.label) correct++;
    else wrong++;
  }
  const inScope = points.filter((point) => point.truth !== null).length;
  const outOfScope = points.length - inScope;
  return {
    rule,
    inScope,
    outOfScope,
    correctReuse: inScope > 0 ? correct / inScope : 0,
    wrongReuse: inScope > 0 ? wrong / inScope : 0,
    misses: inScope > 0 ? (inScope - correct - wrong) / inScope : 0,
    falseHits: outOfScope > 0 ? falseHits / outOfScope : 0,
    feasible: correct > 0,
    bounded: false,
  };
}

/**
 * The recognizer the fast path (L0) and the autopath (L1) ask before the
 * model: given a request, serve the plan of the closest label or miss. A
 * nearest-neighbour score alone over-serves (an unrelated request always has
 * some nearest neighbour), so the rule also demands a lead over the
 * second-best label, and the thresholds come from `calibrate` on training
 * data: stored requests (leave-one-out), held-out requests, and requests
 * nothing should serve.
 *
 * @example
 * const recognizer = createRecognizer({ index });
 * await recognizer.calibrate([...heldOut, ...outOfScope.map((text) => ({ text, label: null }))]);
 * const result = await recognizer.recognize('wake me at 7');
 * if (result.kind === 'serve') runPlan(result.label);
 */
export function createRecognizer(settings: RecognizerSettings): Recognizer {
  const { index } = settings;
  const start: DecisionRule = { threshold: 0.6, margin: 0.08, mix: 0.5, ...settings.rule };
  let rule = settings.calibrated ?? start;

  const recognizeVector = (vector: Float32Array, options?: ScanOptions): Recognition => {
    const similarities = index.labelSimilarities(vector, options);
    if (similarities.length === 0) return { kind: 'miss', reason: 'empty', score: 0, margin: 0 };
    const ranked = rank(candidatesOf(similarities), rule.mix);
    const label = ranked.label!;
    if (ranked.score < rule.threshold)
      return { kind: 'miss', reason: 'below_threshold', label, score: ranked.score, margin: ranked.margin };
    if (ranked.margin < rule.margin || ranked.margin <= 0)
      return { kind: 'miss', reason: 'ambiguous', label, score: ranked.score, margin: ranked.margin };
    const nearestId = similarities.find((similarity) => similarity.label === label)!.nearestId;
    return { kind: 'serve', label, score: ranked.score, margin: ranked.margin, nearestId };
  };

  return {
    get rule() {
      return rule;
    },
    async recognize(text) {
      const [vector] = await index.embed([text]);
      return recognizeVector(vector!);
    },
    recognizeVector,
    async calibrate(examples, targets, options = {}) {
      if (index.size === 0)
        throw new VectorIndexError({ code: 'not_calibrated', message: 'calibrate needs stored entries' });
      const idsByText = new Map<string, Set<string>>();
      for (const entry of index.entries()) {
        const ids = idsByText.get(entry.text) ?? new Set<string>();
        idsByText.set(entry.text, ids);
        ids.add(entry.id);
      }
      const vectors = await index.embed(examples.map((example) => example.text));
      const points = examples.map((example, position) => {
        const own = idsByText.get(example.text);
        const excluded = options.exclude?.(example);
        const excludeIds = own && excluded ? new Set([...excluded, ...own]) : (excluded ?? own);
        return {
          truth: example.label,
          candidates: candidatesOf(index.labelSimilarities(vectors[position]!, { excludeIds })),
        };
      });
      const fitted = fitDecisionRule(points, targets);
      const unproven = targets?.confidence !== undefined && !fitted.feasible;
      if (examples.length >= (targets?.minimumExamples ?? 200) && !unproven) {
        rule = fitted.rule;
        return fitted;
      }
      // Too few examples to trust a looser rule: the fit may tighten the starting rule, never loosen it.
      const floor = unproven ? fitDecisionRule(points, { ...targets, confidence: undefined }) : fitted;
      rule = {
        threshold: Math.max(floor.rule.threshold, start.threshold),
        margin: Math.max(floor.rule.margin, start.margin),
        mix: floor.feasible ? floor.rule.mix : start.mix,
      };
      return { ...evaluateRule(points, rule), bounded: true };
    },
  };
}
