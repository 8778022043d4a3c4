/**
 * Learning benchmark: how the engine's memory learns from the plans that
 * worked, on CLINC150's 150 intents.
 *
 *   pnpm bench:learning --data /work/shared/data/clinc150/train_val.json
 *
 * (a) Learning curve. For 10, 20 and 50 stored requests per intent, fresh
 *     stores are filled through the real engine (each stored request goes to
 *     the Proposer, which learns its plan in L0 and L1), the engine calibrates
 *     its recognizers on what it stored, and held-out requests of every
 *     intent are replayed through the engine's own L0 and L1 layers over a
 *     read-only view of the stores. Correct reuse: served from memory with
 *     the plan of the request's intent; wrong reuse: with another intent's.
 * (b) Mixed workload. 500 turns through the real engine (`createEngine`,
 *     every layer), drawn with a Zipf law over the intents and, within an
 *     intent, over its utterances: a request seen before is an exact repeat,
 *     an unseen utterance of a seen intent a paraphrase, one of an unseen
 *     intent a new request. Share of turns served with no Proposer call, and
 *     wrong reuse, after 50, 100 and 500 turns.
 *
 * Both parts: real SQLite stores in a temp dir, the lexical default embedder,
 * the rules-judge vaglio, one small signed stand-in executor per intent
 * (loaded by the real catalog) run by an in-process invoker behind the
 * Invoker interface (no sandbox). The Proposer is a scripted proposer (an
 * oracle), not a model: it answers every request with its intent's gold plan
 * (that intent's executor, given the request's literal values). The intent
 * extractor's fast tier is scripted to answer something that is not JSON, so
 * the engine falls back to its own rules; the gold intent never reaches it.
 *
 * Options: --seed 20260101 --turns 500 --zipf 1 --shots 10,20,50
 *   --queries-per-intent 20 (learning-curve queries per intent; 0 = all held out)
 *   --wrong-target 0.01 --served-target 0.7 --skip curve|workload
 *   --explain (print every wrong reuse with the stored request that served it)
 *
 * Data: CLINC150, Larson et al. 2019 (github.com/clinc/oos-eval), CC BY 3.0
 * (the LICENSE file beside the data). Read from --data, never copied here.
 */

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createDefaultEmbedder } from '@metnos/autopath';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createCatalog, type ExecutorResult, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createVaglio } from '@metnos/vaglio';
import { z } from 'zod';
import {
  type ChatModel,
  createEngine,
  createGapLog,
  describeRequest,
  ENGINE_LAYERS,
  type EngineResult,
  type EngineSettings,
  extractSlots,
  finishTurn,
  type Layer,
  normalizeRequest,
} from '../src/index.ts';
import { createScriptedModel, type RecordedChatRequest, type ScriptStep } from '../src/test/index.ts';

const { values } = parseArgs({
  options: {
    data: {
      type: 'string',
      default: resolve(import.meta.dirname, '../../../../shared/data/clinc150/train_val.json'),
    },
    seed: { type: 'string', default: '20260101' },
    turns: { type: 'string', default: '500' },
    zipf: { type: 'string', default: '1' },
    shots: { type: 'string', default: '10,20,50' },
    'queries-per-intent': { type: 'string', default: '20' },
    'wrong-target': { type: 'string', default: '0.01' },
    'served-target': { type: 'string', default: '0.7' },
    skip: { type: 'string', default: '' },
    explain: { type: 'boolean', default: false },
  },
});
const seed = Number(values.seed);
const turnCount = Number(values.turns);
const zipfExponent = Number(values.zipf);
const shotCounts = values.shots.split(',').map(Number);
const queriesPerIntent = Number(values['queries-per-intent']);
const wrongTarget = Number(values['wrong-target']);
const servedTarget = Number(values['served-target']);
const skip = new Set(values.skip.split(',').filter(Boolean));
const started = performance.now();

// --- data --------------------------------------------------------------------------------------

const pairs = z.array(z.tuple([z.string(), z.string()]));
const dataset = z
  .object({ train: pairs, val: pairs, oos_train: pairs, oos_val: pairs })
  .parse(JSON.parse(readFileSync(values.data, 'utf8')));
/** Every in-scope utterance (train and val) by intent, in the data's order. */
const byIntent = new Map<string, string[]>();
for (const [text, intent] of [...dataset.train, ...dataset.val]) {
  const texts = byIntent.get(intent) ?? [];
  if (texts.length === 0) byIntent.set(intent, texts);
  if (!texts.includes(text)) texts.push(text);
}
const intents = [...byIntent.keys()].sort();
const goldOf = new Map<string, string>();
for (const [intent, texts] of byIntent) for (const text of texts) goldOf.set(text, intent);

// --- seeded randomness ---------------------------------------------------------------------------

/** mulberry32: a small, fixed PRNG, so a seed gives the same run everywhere. */
function random(seedValue: number): () => number {
  let state = seedValue >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

/** Draws ranks 0..n-1 with P(rank k) ∝ 1 / (k + 1)^s. */
function zipfSampler(n: number, exponent: number, next: () => number): () => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= n; rank++) {
    total += 1 / rank ** exponent;
    cumulative.push(total);
  }
  return () => {
    const target = next() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

// --- the stand-in world: one signed executor per intent, an in-process invoker, the oracle -------

const executorOf = (intent: string) => `clinc_${intent}`;
const intentOfExecutor = (name: string) => name.replace(/^clinc_/, '');

const worldDir = await mkdtemp(join(tmpdir(), 'metnos-learning-bench-'));
const key = await generateSigningKey();
const schema = {
  definitions: {
    Input: {
      type: 'object',
      properties: { values: { type: 'array', items: { type: ['string', 'number'] } } },
      required: ['values'],
      additionalProperties: false,
    },
    Output: {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    },
  },
};
for (const intent of intents)
  await writeSignedExecutor({ root: join(worldDir, 'executors'), name: executorOf(intent), key, schema });
const catalog = createCatalog({
  root: join(worldDir, 'executors'),
  trustedKeys: [key],
  stateDir: join(worldDir, 'state'),
});
await catalog.load();
if (catalog.executors().length !== intents.length)
  throw new Error(`the catalog loaded ${catalog.executors().length} of ${intents.length} stand-in executors`);

/** Runs a stand-in executor in process: it answers with its intent and the values it was given. */
const invoker = {
  async invoke(name: string, args: unknown): Promise<ExecutorResult> {
    const given = (args as { values?: unknown[] }).values ?? [];
    return { ok: true, content: { answer: `${intentOfExecutor(name)}(${given.join(', ')})` } };
  },
};

/** The gold plan of a request: its intent's executor, given the request's literal values. */
function goldPlan(request: string): string {
  const intent = goldOf.get(request);
  if (intent === undefined) return JSON.stringify({ steps: [], out_of_scope: 'not a CLINC150 request' });
  return JSON.stringify({
    steps: [{ tool: executorOf(intent), args: { values: extractSlots(request).map((slot) => slot.value) } }],
    final_message: '${step1.content.answer}',
  });
}

const requestOf = (prompt: string) => /^Request: (.*)$/m.exec(prompt)?.[1] ?? '';

/** Counts what each tier was asked: the Proposer (wise) and the intent extractor (fast). */
const calls = { proposer: 0, intent: 0 };

/** A tier that answers every call with a one-step scripted model built for that call. */
function scriptedTier(id: string, answer: (request: RecordedChatRequest) => ScriptStep): ChatModel {
  return {
    id,
    provider: 'scripted',
    generate: (request) => createScriptedModel([answer], { id }).generate(request),
  };
}
const oracle = scriptedTier('oracle', (request) => {
  calls.proposer++;
  const message = request.messages[0];
  return { text: goldPlan(requestOf(message?.role === 'user' ? String(message.content) : '')) };
});
/** Answers the intent prompt with prose the engine cannot parse: it falls back to its rules. */
const fastTier = scriptedTier('no-intent', () => {
  calls.intent++;
  return { text: 'no classification' };
});

const reviewer = createVaglio({});
const workspace = join(worldDir, 'workspace');

async function openEngine(dir: string, overrides: Partial<EngineSettings> = {}, layers = ENGINE_LAYERS) {
  const stores = {
    fastpath: createFastpathStore({ path: join(dir, 'fastpaths.sqlite') }),
    autopath: createAutopathStore({ path: join(dir, 'autopath.sqlite') }),
    gaps: createGapLog({ path: join(dir, 'gaps.sqlite') }),
  };
  const engine = createEngine(
    {
      catalog,
      invoker,
      reviewer,
      models: { fast: fastTier, wise: oracle },
      embedder: createDefaultEmbedder(),
      ...stores,
      workspace,
      ...overrides,
    },
    layers,
  );
  const close = () => {
    stores.fastpath.close();
    stores.autopath.close();
    stores.gaps.close();
  };
  return { engine, stores, close };
}

/** Prints a wrong reuse: the request, its intent, what served it and the nearest stored request of that plan. */
async function explain(
  request: string,
  intent: string | undefined,
  result: EngineResult,
  stored: Array<{ request: string; template: unknown }>,
): Promise<void> {
  const served = servedIntent(result);
  const embedder = createDefaultEmbedder();
  const [query] = await embedder.embed([normalizeRequest(request)]);
  let nearest = { request: '', score: -1 };
  for (const entry of stored) {
    if (!JSON.stringify(entry.template).includes(`"${executorOf(served ?? '')}"`)) continue;
    const [vector] = await embedder.embed([normalizeRequest(entry.request)]);
    let score = 0;
    for (let index = 0; index < query!.length; index++) score += query![index]! * vector![index]!;
    if (score > nearest.score) nearest = { request: entry.request, score };
  }
  const key = (text: string) => `[${describeRequest(text).qualifiers.join(' ')}]`;
  console.log(
    `    wrong: "${request}" ${key(request)} (${intent ?? 'oos'}) served by ${result.layer} with ${served}; nearest of that plan ${nearest.score.toFixed(3)}: "${nearest.request}" ${key(nearest.request)}`,
  );
}

/** Which intent a turn's answer served, when memory served it. */
function servedIntent(result: EngineResult): string | undefined {
  const step = result.plan?.steps[0];
  return step && 'tool' in step ? intentOfExecutor(step.tool) : undefined;
}
const fromMemory = (result: EngineResult) =>
  (result.layer === 'fastpath' || result.layer === 'autopath') && result.plan !== undefined;

const percent = (count: number, total: number) =>
  total === 0 ? '—' : `${((100 * count) / total).toFixed(1)}%`;
const verdict = (met: boolean) => (met ? 'MET' : 'MISSED');

console.log(
  `Metnos learning benchmark — node ${process.version}, seed ${seed}, embedder ${createDefaultEmbedder().id}`,
);
console.log(
  `data: CLINC150 (Larson et al. 2019, CC BY 3.0), ${intents.length} intents, ${goldOf.size} in-scope utterances (train + val), ${dataset.oos_val.length} oos_val`,
);
console.log(
  'scripted proposer (oracle): answers every intent with its gold plan (its stand-in executor, given the request’s literal values); not a model',
);
console.log(
  'intent extraction: the fast tier is scripted to answer prose, so the engine falls back to its own rules; the gold intent never reaches it',
);
console.log(
  `executors: ${intents.length} signed stand-ins (one per intent) loaded by the real catalog, run in process behind the Invoker interface (no sandbox)\n`,
);

// --- (a) learning curve --------------------------------------------------------------------------

/** A layer that ends a query turn without the Proposer: memory did not serve it. */
const missLayer: Layer = {
  name: 'miss',
  async run(turn) {
    return {
      answer: finishTurn(turn, { layer: 'terminator', finalKind: 'terminated', finalMessage: 'miss' }),
    };
  },
};

/** The stores as a replay sees them, with every write left out: a query must not teach memory. */
function readOnly(stores: Awaited<ReturnType<typeof openEngine>>['stores']): Partial<EngineSettings> {
  return {
    fastpath: { ...stores.fastpath, markUsed: () => undefined },
    autopath: {
      ...stores.autopath,
      observe: () => 0,
      assignCluster: () => ({ id: 'read-only', score: 0, created: false }),
      recordSuccess: () => undefined as never,
      recordFailure: () => ({ anti: false }),
    },
  };
}

const wrongMet: boolean[] = [];
if (!skip.has('curve')) {
  const order = random(seed);
  const perIntent = new Map(intents.map((intent) => [intent, shuffled(byIntent.get(intent)!, order)]));
  const oosQueries = dataset.oos_val.map(([text]) => text);
  console.log('(a) learning curve — stored requests per intent → held-out requests served from memory');
  console.log(
    `    queries: ${queriesPerIntent || 'all'} held-out utterances per intent${queriesPerIntent ? ' (the first after the stored ones, seeded order)' : ''}, plus ${oosQueries.length} oos_val (nothing should serve them)`,
  );
  console.log(
    '    the stores are filled through the real engine (turns that skip memory, so each reaches the Proposer and is learned); `engine.maintain({ forceCalibration: true })` then fits L0 and L1; queries walk the engine’s L0 and L1 layers over a read-only view of the stores\n',
  );
  const header =
    'stored/intent  stored  queries  correct reuse  wrong reuse  oos served  via L0 / L1   rule L0 (thr/margin/mix)  rule L1             fill s  query ms';
  console.log(header);
  for (const shots of shotCounts) {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-learning-curve-'));
    const fillStarted = performance.now();
    const { engine, stores, close } = await openEngine(dir, { maintenanceEveryMs: false });
    for (const intent of intents)
      for (const text of perIntent.get(intent)!.slice(0, shots))
        await engine.runTurn(text, { avoid: { memory: true } });
    const report = await engine.maintain({ forceCalibration: true });
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const reader = await openEngine(dir, { ...readOnly(stores), maintenanceEveryMs: false }, [
      ...ENGINE_LAYERS.filter((layer) => layer.name === 'fastpath' || layer.name === 'autopath'),
      missLayer,
    ]);
    const queries = intents.flatMap((intent) => {
      const held = perIntent.get(intent)!.slice(shots);
      return (queriesPerIntent > 0 ? held.slice(0, queriesPerIntent) : held).map((text) => ({
        text,
        intent: intent as string | undefined,
      }));
    });
    let correct = 0;
    let wrong = 0;
    let oosServed = 0;
    const via = { fastpath: 0, autopath: 0 };
    const queryStarted = performance.now();
    for (const query of [...queries, ...oosQueries.map((text) => ({ text, intent: undefined }))]) {
      const result = await reader.engine.runTurn(query.text);
      if (!fromMemory(result)) continue;
      via[result.layer as 'fastpath' | 'autopath']++;
      if (query.intent === undefined) oosServed++;
      else if (servedIntent(result) === query.intent) correct++;
      else wrong++;
      if (values.explain && servedIntent(result) !== query.intent)
        await explain(query.text, query.intent, result, stores.fastpath.list());
    }
    const queryMs = (performance.now() - queryStarted) / (queries.length + oosQueries.length);
    const rule = (space: 'fastpath' | 'autopath') => {
      const stored = (space === 'fastpath' ? stores.fastpath : stores.autopath).calibrations.get(
        createDefaultEmbedder().id,
      );
      const fitted = report.calibrated[space] ?? stored;
      return fitted
        ? `${fitted.rule.threshold.toFixed(3)}/${fitted.rule.margin.toFixed(4)}/${fitted.rule.mix}`
        : 'start rule';
    };
    const met = wrong <= wrongTarget * queries.length;
    wrongMet.push(met);
    console.log(
      `${String(shots).padStart(13)}  ${String(shots * intents.length).padStart(6)}  ${String(queries.length).padStart(7)}  ${percent(correct, queries.length).padStart(13)}  ${`${percent(wrong, queries.length)} ${verdict(met)}`.padStart(11)}  ${percent(oosServed, oosQueries.length).padStart(10)}  ${`${via.fastpath} / ${via.autopath}`.padStart(11)}   ${rule('fastpath').padEnd(24)}  ${rule('autopath').padEnd(18)}  ${fillSeconds.toFixed(0).padStart(6)}  ${queryMs.toFixed(1).padStart(8)}`,
    );
    reader.close();
    close();
    await rm(dir, { recursive: true, force: true });
  }
  console.log();
}

// --- (b) mixed workload through the real engine ---------------------------------------------------

type Kind = 'repeat' | 'paraphrase' | 'new';
interface TurnRecord {
  kind: Kind;
  layer: EngineResult['layer'];
  proposerCalls: number;
  intentCalls: number;
  servedFromMemory: boolean;
  wrong: boolean;
  latencyMs: number;
}

let workloadMet = { wrong: true, served: true };
if (!skip.has('workload')) {
  const next = random(seed + 1);
  const intentRanks = shuffled(intents, next);
  const utteranceRanks = new Map(intents.map((intent) => [intent, shuffled(byIntent.get(intent)!, next)]));
  const drawIntent = zipfSampler(intents.length, zipfExponent, next);
  const drawUtterance = new Map(
    intents.map((intent) => [intent, zipfSampler(utteranceRanks.get(intent)!.length, zipfExponent, next)]),
  );
  const seenRequests = new Set<string>();
  const seenIntents = new Set<string>();
  const workload = Array.from({ length: turnCount }, () => {
    const intent = intentRanks[drawIntent()]!;
    const text = utteranceRanks.get(intent)![drawUtterance.get(intent)!()]!;
    const kind: Kind = seenRequests.has(text) ? 'repeat' : seenIntents.has(intent) ? 'paraphrase' : 'new';
    seenRequests.add(text);
    seenIntents.add(intent);
    return { text, intent, kind };
  });

  const dir = await mkdtemp(join(tmpdir(), 'metnos-learning-workload-'));
  const { engine, stores, close } = await openEngine(dir);
  const records: TurnRecord[] = [];
  const workloadStarted = performance.now();
  for (const { text, intent, kind } of workload) {
    const before = { ...calls };
    const result = await engine.runTurn(text);
    const proposerCalls = calls.proposer - before.proposer;
    const served = fromMemory(result);
    records.push({
      kind,
      layer: result.layer,
      proposerCalls,
      intentCalls: calls.intent - before.intent,
      servedFromMemory: served,
      wrong: served && servedIntent(result) !== intent,
      latencyMs: result.latencyMs,
    });
    if (values.explain && served && servedIntent(result) !== intent)
      await explain(text, intent, result, stores.fastpath.list());
  }
  const workloadSeconds = (performance.now() - workloadStarted) / 1000;
  const embedderId = createDefaultEmbedder().id;
  const rules = (['fastpath', 'autopath'] as const).map((space) => {
    const stored = stores[space].calibrations.get(embedderId);
    return stored
      ? `${space === 'fastpath' ? 'L0' : 'L1'} ${stored.rule.threshold.toFixed(3)}/${stored.rule.margin.toFixed(4)}/${stored.rule.mix} (${stored.examples} examples${stored.bounded ? ', bounded by the starting rule' : ''})`
      : `${space === 'fastpath' ? 'L0' : 'L1'} the starting rule (never calibrated)`;
  });
  const remembered = stores.fastpath.list().length;
  close();
  await rm(dir, { recursive: true, force: true });

  const count = (kind: Kind) => workload.filter((turn) => turn.kind === kind).length;
  console.log(
    `(b) mixed workload — ${turnCount} turns through createEngine (every layer), Zipf s = ${zipfExponent} over intents and over each intent's utterances, seed ${seed}`,
  );
  console.log(
    `    mix as drawn: ${count('repeat')} exact repeats, ${count('paraphrase')} paraphrases (unseen utterance of a seen intent), ${count('new')} new requests (unseen intent); ${workloadSeconds.toFixed(1)} s\n`,
  );
  const checkpoints = [50, 100, turnCount].filter(
    (value, index, all) => value <= turnCount && all.indexOf(value) === index,
  );
  console.log(
    'after turn  window      turns  0 Proposer calls  from memory  by rule  wrong reuse   repeats  paraphrases  new  (each: share served with 0 Proposer calls)',
  );
  const summarize = (slice: TurnRecord[]) => {
    const zero = slice.filter((record) => record.proposerCalls === 0).length;
    const memory = slice.filter((record) => record.servedFromMemory).length;
    const rule = slice.filter((record) => record.proposerCalls === 0 && !record.servedFromMemory).length;
    const wrong = slice.filter((record) => record.wrong).length;
    const byKind = (kind: Kind) => {
      const ofKind = slice.filter((record) => record.kind === kind);
      return percent(ofKind.filter((record) => record.proposerCalls === 0).length, ofKind.length);
    };
    return { zero, memory, rule, wrong, byKind };
  };
  let previous = 0;
  for (const checkpoint of checkpoints) {
    const rows: Array<[string, TurnRecord[]]> = [[`1–${checkpoint}`, records.slice(0, checkpoint)]];
    if (previous > 0) rows.push([`${previous + 1}–${checkpoint}`, records.slice(previous, checkpoint)]);
    for (const [label, slice] of rows) {
      const { zero, memory, rule, wrong, byKind } = summarize(slice);
      console.log(
        `${String(checkpoint).padStart(10)}  ${label.padEnd(10)}  ${String(slice.length).padStart(5)}  ${percent(zero, slice.length).padStart(16)}  ${percent(memory, slice.length).padStart(11)}  ${percent(rule, slice.length).padStart(7)}  ${percent(wrong, slice.length).padStart(11)}   ${byKind('repeat').padStart(7)}  ${byKind('paraphrase').padStart(11)}  ${byKind('new').padStart(4)}`,
      );
    }
    previous = checkpoint;
  }
  const afterWarmup = records.slice(100);
  const wrongAll = records.filter((record) => record.wrong).length;
  const memoryAfter = afterWarmup.filter((record) => record.proposerCalls === 0).length;
  workloadMet = {
    wrong: checkpoints.every((checkpoint) => {
      const slice = records.slice(0, checkpoint);
      return slice.filter((record) => record.wrong).length <= wrongTarget * slice.length;
    }),
    served: afterWarmup.length > 0 && memoryAfter >= servedTarget * afterWarmup.length,
  };
  const layers = new Map<string, number>();
  for (const record of records) layers.set(record.layer, (layers.get(record.layer) ?? 0) + 1);
  console.log(
    `\n    layers: ${[...layers].map(([layer, n]) => `${layer} ${n}`).join(', ')}; Proposer calls ${records.reduce((sum, record) => sum + record.proposerCalls, 0)}, intent-extractor calls ${records.reduce((sum, record) => sum + record.intentCalls, 0)} (answered by rule after the scripted fast tier's prose)`,
  );
  console.log(
    `    memory at the end: ${remembered} L0 shortcuts; rules in force (threshold/margin/mix): ${rules.join('; ')}`,
  );
  const latencies = records.map((record) => record.latencyMs).sort((a, b) => a - b);
  console.log(
    `    turn latency (in process, no sandbox): p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p99 ${latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))]!.toFixed(1)} ms`,
  );
  console.log('\ntargets:');
  console.log(
    `  wrong reuse ≤ ${wrongTarget * 100}% at every checkpoint (workload ${percent(wrongAll, records.length)} over ${records.length} turns) — ${verdict(workloadMet.wrong)}`,
  );
  console.log(
    `  ≥ ${servedTarget * 100}% of turns served with 0 Proposer calls after 100 turns (turns 101–${turnCount}): ${percent(memoryAfter, afterWarmup.length)} — ${verdict(workloadMet.served)}`,
  );
}
if (wrongMet.length > 0)
  console.log(
    `  wrong reuse ≤ ${wrongTarget * 100}% on the learning curve at ${shotCounts.join(', ')} stored per intent — ${verdict(wrongMet.every(Boolean))}`,
  );
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
await rm(worldDir, { recursive: true, force: true });
