import { describe, expect, it } from 'vitest';
import { VectorIndexError } from './errors.ts';
import {
  type CalibrationPoint,
  confidentErrors,
  createRecognizer,
  evaluateRule,
  fitDecisionRule,
  type RecognizerIndex,
} from './recognizer.ts';
import type { LabelSimilarity, ScanOptions } from './vector-index.ts';

type Similarity = [label: string, nearest: number, centroid: number, nearestId?: string];

/**
 * An index whose answers are scripted: each text embeds to its position in `texts`, and
 * `labelSimilarities` answers the script for that text, less the excluded ids.
 */
function scriptedIndex(
  script: Record<string, Similarity[]>,
  stored: Array<{ id: string; text: string }> = [{ id: 'e1', text: 'stored' }],
) {
  const texts = Object.keys(script);
  const seenExclusions: Array<ReadonlySet<string> | undefined> = [];
  const index: RecognizerIndex = {
    get size() {
      return stored.length;
    },
    entries: () => stored.map((entry) => ({ ...entry, label: 'x', vector: new Float32Array() })) as never,
    embed: async (requested: string[]) => requested.map((text) => new Float32Array([texts.indexOf(text)])),
    labelSimilarities: (vector: Float32Array, options?: ScanOptions): LabelSimilarity[] => {
      seenExclusions.push(options?.excludeIds);
      const rows = script[texts[vector[0]!]!] ?? [];
      return rows
        .map(([label, nearest, centroid, nearestId]) => ({
          label,
          nearest,
          centroid,
          nearestId: nearestId ?? `${label}-1`,
          count: 1,
        }))
        .filter((row) => !options?.excludeIds?.has(row.nearestId));
    },
  };
  return { index, seenExclusions };
}

function recognizerFor(similarities: Similarity[], rule = { threshold: 0.5, margin: 0.1, mix: 0.5 }) {
  const { index } = scriptedIndex({ request: similarities });
  return createRecognizer({ index, rule });
}

describe('the decision rule: serve the best label when its score reaches the threshold and it leads by the margin', () => {
  it('mixes the nearest and centroid cosines and serves with the label, score, margin and nearest entry', async () => {
    const recognizer = recognizerFor([
      ['a', 0.9, 0.7, 'a-near'],
      ['b', 0.5, 0.3],
    ]);
    const result = await recognizer.recognize('request');
    expect(result).toMatchObject({ kind: 'serve', label: 'a', nearestId: 'a-near' });
    if (result.kind !== 'serve') return;
    expect(result.score).toBeCloseTo(0.8, 9);
    expect(result.margin).toBeCloseTo(0.4, 9);
  });

  it('weighs the nearest cosine by mix and the centroid by 1 - mix', async () => {
    const byNearest = recognizerFor(
      [
        ['a', 0.9, 0.1],
        ['b', 0.6, 0.8],
      ],
      { threshold: 0, margin: 0.01, mix: 1 },
    );
    expect(await byNearest.recognize('request')).toMatchObject({ kind: 'serve', label: 'a', score: 0.9 });
    const byCentroid = recognizerFor(
      [
        ['a', 0.9, 0.1],
        ['b', 0.6, 0.8, 'b-near'],
      ],
      { threshold: 0, margin: 0.01, mix: 0 },
    );
    expect(await byCentroid.recognize('request')).toMatchObject({
      kind: 'serve',
      label: 'b',
      score: 0.8,
      nearestId: 'b-near',
    });
    const quarter = recognizerFor([['a', 1, 0]], { threshold: 0, margin: 0.01, mix: 0.25 });
    expect(await quarter.recognize('request')).toMatchObject({ score: 0.25 });
  });

  it('serves at exactly the threshold and misses just below it, naming the best label', async () => {
    const at = recognizerFor([['a', 0.5, 0.5]], { threshold: 0.5, margin: 0.1, mix: 0.5 });
    expect(await at.recognize('request')).toMatchObject({
      kind: 'serve',
      label: 'a',
      score: 0.5,
      margin: 0.5,
    });
    const below = recognizerFor([['a', 0.49, 0.49]], { threshold: 0.5, margin: 0.1, mix: 0.5 });
    expect(await below.recognize('request')).toEqual({
      kind: 'miss',
      reason: 'below_threshold',
      label: 'a',
      score: 0.49,
      margin: 0.49,
    });
  });

  it('serves at exactly the margin and calls a smaller lead ambiguous', async () => {
    const at = recognizerFor(
      [
        ['a', 0.75, 0.75],
        ['b', 0.5, 0.5],
      ],
      { threshold: 0.5, margin: 0.25, mix: 0.5 },
    );
    expect(await at.recognize('request')).toMatchObject({ kind: 'serve', margin: 0.25 });
    const close = recognizerFor(
      [
        ['a', 0.75, 0.75],
        ['b', 0.5, 0.5],
      ],
      { threshold: 0.5, margin: 0.26, mix: 0.5 },
    );
    expect(await close.recognize('request')).toEqual({
      kind: 'miss',
      reason: 'ambiguous',
      label: 'a',
      score: 0.75,
      margin: 0.25,
    });
  });

  it('never serves a tie, even with no margin required', async () => {
    const tie = recognizerFor(
      [
        ['a', 0.8, 0.8],
        ['b', 0.8, 0.8],
      ],
      { threshold: 0, margin: 0, mix: 0.5 },
    );
    expect(await tie.recognize('request')).toMatchObject({
      kind: 'miss',
      reason: 'ambiguous',
      label: 'a',
      margin: 0,
    });
  });

  it('measures the lead from zero when the runner-up scores below zero, and alone when there is none', async () => {
    const negative = recognizerFor(
      [
        ['a', 0.6, 0.6],
        ['b', -0.5, -0.5],
      ],
      { threshold: 0, margin: 0.6, mix: 0.5 },
    );
    expect(await negative.recognize('request')).toMatchObject({ kind: 'serve', margin: 0.6 });
    const alone = recognizerFor([['a', 0.3, 0.3]], { threshold: 0, margin: 0.3, mix: 0.5 });
    expect(await alone.recognize('request')).toMatchObject({ kind: 'serve', score: 0.3, margin: 0.3 });
  });

  it('ranks the second-best label among all candidates, not only the ones before the best', async () => {
    const recognizer = recognizerFor(
      [
        ['a', 0.9, 0.9],
        ['b', 0.2, 0.2],
        ['c', 0.85, 0.85],
      ],
      { threshold: 0, margin: 0.1, mix: 0.5 },
    );
    expect(await recognizer.recognize('request')).toMatchObject({ kind: 'miss', reason: 'ambiguous' });
  });

  it('looks at the best six labels by nearest and by centroid', async () => {
    const similarities: Similarity[] = [
      ...Array.from({ length: 7 }, (_, index): Similarity => [`n${index}`, 0.9 - index / 100, 0]),
      ['late', 0.1, 0.95, 'late-near'],
    ];
    const recognizer = recognizerFor(similarities, { threshold: 0, margin: 0.01, mix: 0 });
    expect(await recognizer.recognize('request')).toMatchObject({
      kind: 'serve',
      label: 'late',
      nearestId: 'late-near',
    });
  });

  it('misses on an empty answer with nothing to name', async () => {
    const recognizer = recognizerFor([]);
    expect(await recognizer.recognize('request')).toEqual({
      kind: 'miss',
      reason: 'empty',
      score: 0,
      margin: 0,
    });
  });

  it('passes the scan options through recognizeVector', () => {
    const recognizer = recognizerFor([
      ['a', 0.9, 0.9, 'a-1'],
      ['b', 0.6, 0.6, 'b-1'],
    ]);
    expect(recognizer.recognizeVector(new Float32Array([0]), { excludeIds: new Set(['a-1']) })).toMatchObject(
      {
        kind: 'serve',
        label: 'b',
      },
    );
  });
});

describe('the rule in force', () => {
  it('starts at threshold 0.6, margin 0.08, mix 0.5, overridable in part, or at an earlier calibration', () => {
    const { index } = scriptedIndex({});
    expect(createRecognizer({ index }).rule).toEqual({ threshold: 0.6, margin: 0.08, mix: 0.5 });
    expect(createRecognizer({ index, rule: { margin: 0.2 } }).rule).toEqual({
      threshold: 0.6,
      margin: 0.2,
      mix: 0.5,
    });
    const earlier = { threshold: 0.3, margin: 0.01, mix: 1 };
    expect(createRecognizer({ index, rule: { margin: 0.2 }, calibrated: earlier }).rule).toEqual(earlier);
  });
});

describe('calibrate', () => {
  const script: Record<string, Similarity[]> = {
    'in a': [
      ['a', 0.9, 0.9],
      ['b', 0.1, 0.1],
    ],
    'in b': [
      ['b', 0.8, 0.8],
      ['a', 0.1, 0.1],
    ],
    out: [
      ['a', 0.3, 0.3],
      ['b', 0.1, 0.1],
    ],
  };
  const examples = [
    { text: 'in a', label: 'a' },
    { text: 'in b', label: 'b' },
    { text: 'out', label: null },
  ];

  it('refuses to calibrate an empty store with a typed error', async () => {
    const { index } = scriptedIndex(script, []);
    const error = await createRecognizer({ index })
      .calibrate(examples)
      .catch((caught: unknown) => caught);
    expect(VectorIndexError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'not_calibrated', message: 'calibrate needs stored entries' });
  });

  it('takes the fitted rule whole when there are enough examples', async () => {
    const { index } = scriptedIndex(script);
    const recognizer = createRecognizer({ index, rule: { threshold: 0.95, margin: 0.5 } });
    const report = await recognizer.calibrate(examples, { safety: 1, minimumExamples: 3 });
    expect(report.bounded).toBe(false);
    expect(recognizer.rule).toEqual(report.rule);
    expect(recognizer.rule.threshold).toBeCloseTo(0.8, 9);
    expect(report).toMatchObject({
      inScope: 2,
      outOfScope: 1,
      correctReuse: 1,
      falseHits: 0,
      feasible: true,
    });
  });

  it('on too few examples keeps the stricter of the fit and the starting rule, and scores that rule', async () => {
    const { index } = scriptedIndex(script);
    const loose = createRecognizer({ index, rule: { threshold: 0.85, margin: 0.5, mix: 0.25 } });
    const report = await loose.calibrate(examples, { safety: 1, minimumExamples: 4 });
    expect(loose.rule.threshold).toBe(0.85);
    expect(loose.rule.margin).toBe(0.5);
    expect(loose.rule.mix).not.toBe(0.25);
    expect(report).toMatchObject({
      bounded: true,
      rule: loose.rule,
      correctReuse: 0.5,
      inScope: 2,
      outOfScope: 1,
    });

    const strict = createRecognizer({ index, rule: { threshold: 0.1, margin: 0.01 } });
    await strict.calibrate(examples, { safety: 1 });
    expect(strict.rule.threshold).toBeCloseTo(0.8, 9);
    expect(strict.rule.margin).toBeGreaterThan(0.01);
  });

  it('keeps the starting mix when nothing can be served within the targets', async () => {
    const { index } = scriptedIndex({
      wrong: [
        ['b', 0.9, 0.9],
        ['a', 0.1, 0.1],
      ],
    });
    const recognizer = createRecognizer({ index, rule: { threshold: 0.6, margin: 0.08, mix: 0.75 } });
    const report = await recognizer.calibrate([{ text: 'wrong', label: 'a' }], { wrongReuse: 0, safety: 1 });
    expect(recognizer.rule.mix).toBe(0.75);
    expect(recognizer.rule.threshold).toBe(Number.POSITIVE_INFINITY);
    expect(report).toMatchObject({ bounded: true, feasible: false, correctReuse: 0 });
  });

  it('with a confidence it cannot show, bounds a fit made without it', async () => {
    const { index } = scriptedIndex(script);
    const recognizer = createRecognizer({ index, rule: { threshold: 0.2, margin: 0.01 } });
    const report = await recognizer.calibrate(examples, { safety: 1, minimumExamples: 0, confidence: 0.95 });
    expect(report.bounded).toBe(true);
    expect(recognizer.rule.threshold).toBeCloseTo(0.8, 9);
    expect(report.correctReuse).toBe(1);
  });

  it('leaves out each example its own stored copies and the ids the caller names', async () => {
    const { index, seenExclusions } = scriptedIndex(script, [
      { id: 'e1', text: 'in a' },
      { id: 'e2', text: 'in a' },
      { id: 'e3', text: 'other' },
    ]);
    await createRecognizer({ index }).calibrate(
      examples,
      { safety: 1 },
      {
        exclude: (example) =>
          example.text === 'out' || example.text === 'in a' ? new Set(['x1']) : undefined,
      },
    );
    expect(seenExclusions.map((ids) => (ids ? [...ids].sort() : undefined))).toEqual([
      ['e1', 'e2', 'x1'],
      undefined,
      ['x1'],
    ]);
    seenExclusions.length = 0;
    await createRecognizer({ index }).calibrate(examples, { safety: 1 });
    expect(seenExclusions.map((ids) => (ids ? [...ids].sort() : undefined))).toEqual([
      ['e1', 'e2'],
      undefined,
      undefined,
    ]);
  });

  it('by default needs 200 examples before a fit may loosen the starting rule', async () => {
    const { index } = scriptedIndex(script);
    const recognizer = createRecognizer({ index, rule: { threshold: 0.95 } });
    const many = Array.from({ length: 199 }, () => examples[0]!);
    await recognizer.calibrate(many, { safety: 1 });
    expect(recognizer.rule.threshold).toBe(0.95);
    await recognizer.calibrate([...many, examples[1]!], { safety: 1 });
    expect(recognizer.rule.threshold).toBeCloseTo(0.8, 9);
  });
});

describe('evaluateRule and fitDecisionRule reports', () => {
  const point = (truth: string | null, ...candidates: Array<[string, number]>): CalibrationPoint => ({
    truth,
    candidates: candidates.map(([label, score]) => ({ label, nearest: score, centroid: score })),
  });
  const points = [
    point('a', ['a', 0.9], ['b', 0.1]),
    point('a', ['b', 0.85], ['a', 0.1]),
    point('b', ['b', 0.5], ['a', 0.25]),
    point(null, ['a', 0.7], ['b', 0.1]),
    point(null, ['a', 0.2]),
    point('b'),
  ];

  it('counts right, wrong, missed and out-of-scope serves of a fixed rule', () => {
    const report = evaluateRule(points, { threshold: 0.6, margin: 0.1, mix: 0.5 });
    expect(report).toEqual({
      rule: { threshold: 0.6, margin: 0.1, mix: 0.5 },
      inScope: 4,
      outOfScope: 2,
      correctReuse: 0.25,
      wrongReuse: 0.25,
      misses: 0.5,
      falseHits: 0.5,
      feasible: true,
      bounded: false,
    });
    expect(evaluateRule(points, { threshold: 0.9, margin: 0.8, mix: 0.5 })).toMatchObject({
      correctReuse: 0.25,
      wrongReuse: 0,
      falseHits: 0,
      misses: 0.75,
    });
    expect(evaluateRule(points, { threshold: 0.95, margin: 0, mix: 0.5 }).feasible).toBe(false);
    expect(evaluateRule(points, { threshold: 0.4, margin: 0.26, mix: 0.5 }).correctReuse).toBe(0.25);
    expect(evaluateRule(points, { threshold: 0.4, margin: 0.25, mix: 0.5 }).correctReuse).toBe(0.5);
    expect(evaluateRule(points, { threshold: 0.5, margin: 0.25, mix: 0.5 }).correctReuse).toBe(0.5);
  });

  it('reports zeros rather than dividing by nothing', () => {
    expect(evaluateRule([], { threshold: 0, margin: 0, mix: 0.5 })).toMatchObject({
      inScope: 0,
      outOfScope: 0,
      correctReuse: 0,
      wrongReuse: 0,
      misses: 0,
      falseHits: 0,
    });
    expect(fitDecisionRule([])).toMatchObject({
      inScope: 0,
      outOfScope: 0,
      correctReuse: 0,
      wrongReuse: 0,
      misses: 0,
      falseHits: 0,
      feasible: false,
      bounded: false,
      rule: { threshold: Number.POSITIVE_INFINITY, margin: 0.3, mix: 0.5 },
    });
  });

  it('fits the widest margin and highest threshold that serve the most, within the error budget', () => {
    const report = fitDecisionRule(points, { wrongReuse: 0, falseHits: 0, safety: 1 });
    expect(report.rule.threshold).toBeCloseTo(0.9, 9);
    expect(report.rule.margin).toBeCloseTo(0.3, 9);
    expect(report).toMatchObject({
      correctReuse: 0.25,
      wrongReuse: 0,
      falseHits: 0,
      misses: 0.75,
      feasible: true,
    });
    const generous = fitDecisionRule(points, { wrongReuse: 1, falseHits: 1, safety: 1 });
    expect(generous.correctReuse).toBe(0.5);
    expect(generous.rule.margin).toBeCloseTo(0.25, 9);
    expect(generous.rule.threshold).toBe(0.5);
  });

  it('spends half of each target by default', () => {
    const many = [
      ...Array.from({ length: 150 }, (_, index) => point('a', ['a', 0.9 - index / 1000], ['b', 0])),
      point('a', ['b', 0.95], ['a', 0]),
      point('a', ['b', 0.5], ['a', 0]),
    ];
    expect(fitDecisionRule(many).wrongReuse).toBe(0);
    expect(fitDecisionRule(many, { safety: 1 }).wrongReuse).toBeCloseTo(1 / 152, 9);
    expect(fitDecisionRule(many, { wrongReuse: 0.02 }).wrongReuse).toBeCloseTo(1 / 152, 9);
  });

  it('does not split points of equal score between served and missed', () => {
    const tied = [
      point('a', ['a', 0.8], ['b', 0]),
      point('b', ['a', 0.8], ['b', 0]),
      point('a', ['a', 0.7], ['b', 0]),
    ];
    const report = fitDecisionRule(tied, { wrongReuse: 0, falseHits: 0, safety: 1 });
    expect(report.rule.threshold).toBe(Number.POSITIVE_INFINITY);
    expect(report).toMatchObject({ correctReuse: 0, feasible: false });
  });
});

describe('confidentErrors', () => {
  it('is n when the rate is certain, -1 when even no error is too likely', () => {
    expect(confidentErrors(10, 1, 0.95)).toBe(10);
    expect(confidentErrors(10, 0.01, 0.95)).toBe(-1);
    expect(confidentErrors(1000, 0.01, 0.95)).toBe(4);
    expect(confidentErrors(5, 0.99, 0.5)).toBe(4);
    expect(confidentErrors(1, 0.5, 0.1)).toBe(0);
    expect(confidentErrors(1, 0.5, 0)).toBe(1);
  });
});
