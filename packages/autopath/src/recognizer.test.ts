import { describe, expect, it } from 'vitest';
import { VectorIndexError } from './errors.ts';
import { createHashingEmbedder } from './hashing-embedder.ts';
import { type CalibrationPoint, confidentErrors, createRecognizer, fitDecisionRule } from './recognizer.ts';
import { createVectorIndex } from './vector-index.ts';

const stored = [
  ['play some jazz music', 'music'],
  ['put on my rock playlist', 'music'],
  ['play the latest album by adele', 'music'],
  ['start playing classical music', 'music'],
  ['what is the weather like in rome', 'weather'],
  ['will it rain in paris tomorrow', 'weather'],
  ['weather forecast for the weekend', 'weather'],
  ['is it going to be sunny today', 'weather'],
  ['set an alarm for 7 am', 'alarm'],
  ['wake me up at six thirty', 'alarm'],
  ['set an alarm for tomorrow morning', 'alarm'],
  ['alarm at 8 please', 'alarm'],
  ['start a timer for ten minutes', 'timer'],
  ['set a timer for 5 minutes', 'timer'],
  ['countdown timer of one hour', 'timer'],
  ['timer for twenty minutes please', 'timer'],
].map(([text, label]) => ({ text: text!, label: label! }));

const heldOut = [
  ['play jazz music in the kitchen', 'music'],
  ['put on some rock music', 'music'],
  ['what is the weather in london', 'weather'],
  ['will it rain tomorrow in rome', 'weather'],
  ['set an alarm for 6 am', 'alarm'],
  ['wake me up at seven', 'alarm'],
  ['set a timer for ten minutes', 'timer'],
  ['start a countdown timer', 'timer'],
].map(([text, label]) => ({ text: text!, label: label! }));

const outOfScope = [
  'who won the football match last night',
  'translate good morning into german',
  'how many calories in an apple',
  'book me a flight to tokyo',
  'play football with me tomorrow',
  'set the table for dinner',
  'what time is it in tokyo',
  'put the kettle on',
].map((text) => ({ text, label: null }));

async function calibrated() {
  const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
  await index.add(stored);
  const recognizer = createRecognizer({ index });
  const report = await recognizer.calibrate([...stored, ...heldOut, ...outOfScope], {
    safety: 1,
    minimumExamples: 0,
  });
  return { index, recognizer, report };
}

describe('createRecognizer', () => {
  it('calibrates on training examples and serves new in-scope requests with the right label', async () => {
    const { recognizer, report } = await calibrated();
    expect(report.feasible).toBe(true);
    expect(report.wrongReuse).toBe(0);
    expect(report.falseHits).toBe(0);
    expect(report.inScope).toBe(stored.length + heldOut.length);
    const served = await recognizer.recognize('please play some classical jazz');
    expect(served).toMatchObject({ kind: 'serve', label: 'music' });
    const alarm = await recognizer.recognize('set an alarm for 9 am');
    expect(alarm).toMatchObject({ kind: 'serve', label: 'alarm' });
    if (alarm.kind === 'serve') expect(alarm.margin).toBeGreaterThanOrEqual(recognizer.rule.margin);
  });

  it('misses requests nothing stored should serve', async () => {
    const { recognizer } = await calibrated();
    for (const text of [
      'what is the capital of australia',
      'order a pizza with mushrooms',
      'how tall is mount everest',
    ]) {
      expect((await recognizer.recognize(text)).kind).toBe('miss');
    }
  });

  it('refuses a request that two labels explain equally well', async () => {
    const { index, recognizer } = await calibrated();
    await index.add([
      { text: 'set a reminder for the meeting', label: 'reminder' },
      { text: 'set a reminder for the meeting', label: 'calendar' },
    ]);
    const result = await recognizer.recognize('set a reminder for the meeting');
    expect(result).toMatchObject({ kind: 'miss', reason: 'ambiguous' });
    expect(result.margin).toBeCloseTo(0, 6);
  });

  it('does not let a handful of examples loosen the starting rule', async () => {
    const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
    await index.add(stored);
    const recognizer = createRecognizer({ index, rule: { threshold: 0.5, margin: 0.1 } });
    const report = await recognizer.calibrate([heldOut[0]!, heldOut[2]!, outOfScope[0]!]);
    expect(report.bounded).toBe(true);
    expect(recognizer.rule.threshold).toBeGreaterThanOrEqual(0.5);
    expect(recognizer.rule.margin).toBeGreaterThanOrEqual(0.1);
    expect((await recognizer.recognize('play football with me tomorrow')).kind).toBe('miss');
  });

  it('scores each example without the ids the caller leaves out for it, as serving would', async () => {
    const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
    await index.add(stored);
    const alarms = new Set(
      index
        .entries()
        .filter((entry) => entry.label === 'alarm')
        .map((entry) => entry.id),
    );
    const examples = [
      { text: 'set an alarm for 6 am', label: 'alarm' },
      { text: 'wake me up at seven', label: 'alarm' },
    ];
    const targets = { wrongReuse: 1, falseHits: 1, safety: 1, minimumExamples: 0 };
    const seen: string[] = [];
    const withoutAlarms = await createRecognizer({ index }).calibrate(examples, targets, {
      exclude: (example) => {
        seen.push(example.text);
        return alarms;
      },
    });
    expect(seen).toEqual(examples.map((example) => example.text));
    // with every alarm left out, an alarm request can only be served wrong
    expect(withoutAlarms).toMatchObject({ correctReuse: 0, feasible: false });
    const open = await createRecognizer({ index }).calibrate(examples, targets);
    expect(open).toMatchObject({ correctReuse: 1, wrongReuse: 0, feasible: true });
  });

  it('treats examples too few to show the target with confidence as too few to loosen the starting rule', async () => {
    const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
    await index.add(stored);
    const examples = [...stored, ...heldOut, ...outOfScope];
    const start = { threshold: 0.7, margin: 0.1 };
    const plain = createRecognizer({ index, rule: start });
    await plain.calibrate(examples, { safety: 1, minimumExamples: 0 });
    expect(plain.rule.threshold).toBeLessThan(0.7);
    const confident = createRecognizer({ index, rule: start });
    const report = await confident.calibrate(examples, { safety: 1, minimumExamples: 0, confidence: 0.95 });
    expect(report.bounded).toBe(true);
    expect(confident.rule.threshold).toBeGreaterThanOrEqual(0.7);
    expect(confident.rule.margin).toBeGreaterThanOrEqual(0.1);
  });

  it('misses on an empty store and refuses to calibrate without entries', async () => {
    const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
    const recognizer = createRecognizer({ index });
    expect(await recognizer.recognize('anything')).toMatchObject({ kind: 'miss', reason: 'empty' });
    const error = await recognizer.calibrate(heldOut).catch((caught: unknown) => caught);
    expect(VectorIndexError.isInstance(error) && error.code).toBe('not_calibrated');
  });
});

describe('fitDecisionRule', () => {
  const point = (
    truth: string | null,
    first: [string, number],
    second: [string, number],
  ): CalibrationPoint => ({
    truth,
    candidates: [first, second].map(([label, score]) => ({ label, nearest: score, centroid: score })),
  });

  it('lowers the threshold until the first error it may not afford', () => {
    const points = [
      point('a', ['a', 0.9], ['b', 0.2]),
      point('b', ['b', 0.8], ['a', 0.1]),
      point('a', ['b', 0.7], ['a', 0.1]),
      point('b', ['b', 0.6], ['a', 0.1]),
      point(null, ['a', 0.5], ['b', 0.1]),
    ];
    const report = fitDecisionRule(points, { wrongReuse: 0, falseHits: 0, safety: 1 });
    expect(report.rule.threshold).toBeCloseTo(0.8, 6);
    expect(report).toMatchObject({
      correctReuse: 0.5,
      wrongReuse: 0,
      falseHits: 0,
      inScope: 4,
      outOfScope: 1,
      feasible: true,
    });
  });

  it('uses the margin to serve confident points below an ambiguous one', () => {
    const points = [
      point('a', ['b', 0.9], ['a', 0.85]),
      point('a', ['a', 0.8], ['b', 0.3]),
      point('b', ['b', 0.7], ['a', 0.2]),
    ];
    const report = fitDecisionRule(points, { wrongReuse: 0, falseHits: 0, safety: 1 });
    expect(report.correctReuse).toBeCloseTo(2 / 3, 9);
    expect(report.rule.margin).toBeGreaterThan(0.05);
    expect(report.rule.threshold).toBeLessThanOrEqual(0.7);
  });

  it('with a confidence, allows only the errors a true rate at the target would rarely show', () => {
    expect(confidentErrors(200, 0.01, 0.95)).toBe(-1);
    expect(confidentErrors(300, 0.01, 0.95)).toBe(0);
    const allowed = confidentErrors(2000, 0.01, 0.95);
    expect(allowed).toBeGreaterThan(5);
    expect(allowed).toBeLessThan(20);
    // the binomial tail at `allowed` is within 5%, one more error is not
    const tail = (errors: number) => {
      let probability = 0.99 ** 2000;
      let sum = probability;
      for (let k = 0; k < errors; k++) {
        probability *= ((2000 - k) / (k + 1)) * (0.01 / 0.99);
        sum += probability;
      }
      return sum;
    };
    expect(tail(allowed)).toBeLessThanOrEqual(0.05);
    expect(tail(allowed + 1)).toBeGreaterThan(0.05);

    // 400 examples: one wrong point above the rest is affordable at half of 1%, not at 95% confidence
    const points = [
      point('a', ['b', 0.95], ['a', 0.1]),
      ...Array.from({ length: 399 }, (_, index) => point('a', ['a', 0.9 - index / 1000], ['b', 0.1])),
    ];
    const loose = fitDecisionRule(points, { safety: 0.5 });
    expect(loose.wrongReuse).toBeCloseTo(1 / 400, 9);
    expect(loose.correctReuse).toBeCloseTo(399 / 400, 9);
    const confident = fitDecisionRule(points, { safety: 0.5, confidence: 0.95 });
    expect(confident.wrongReuse).toBe(0);
    expect(confident.rule.threshold).toBeGreaterThan(0.95);
    // 250 examples cannot show 1% at 95%: no rule at all
    expect(fitDecisionRule(points.slice(1, 251), { confidence: 0.95 }).feasible).toBe(false);
    expect(fitDecisionRule(points.slice(1, 251), {}).feasible).toBe(true);
  });

  it('serves nothing when no rule meets the targets', () => {
    const report = fitDecisionRule([point('a', ['b', 0.9], ['a', 0.1])], { wrongReuse: 0, falseHits: 0 });
    expect(report.feasible).toBe(false);
    expect(report.rule.threshold).toBe(Number.POSITIVE_INFINITY);
  });
});
