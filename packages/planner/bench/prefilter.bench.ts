/**
 * Pre-filter benchmark: how often the planner's bag-of-words pre-filter (BM25F
 * over affinity + name words and summary, with light stemming: see
 * src/prefilter.ts) puts the right tool in front of the model, against a plain
 * BM25 baseline computed in the same run, how long one ranking takes as the
 * catalog grows, and how many prompt tokens the tool list costs with and
 * without it. The pre-filter splits names into words itself, so the row
 * without affinity shows what the name words passed as affinity add on top.
 *
 *   pnpm bench:prefilter --data ../shared/data/metatool
 *
 * --data: MetaTool's folder (plugin_des.json, all_clean_data.csv,
 * multi_tool_query_golden.json) or a folder with tools.jsonl ({ name,
 * description }) and queries.jsonl ({ query, tools: [gold names] }).
 * Options: --sizes 1000,4000 (catalog sizes for latency) --latency-queries 1000
 * --warmup 200.
 *
 * --nestful: NESTFUL's folder (executable-spec.json, executable-data.json;
 * default ../shared/data/nestful, skipped when absent). Every step after the
 * first of its 85 multi-step requests is ranked with and without the history
 * boost: the previous step's executor and a real mnestome holding the
 * passages ($varN references) of the other 84 requests, never its own.
 *
 * Data: MetaTool, Huang et al. 2024 (github.com/HowieHwong/MetaTool), MIT.
 * NESTFUL, IBM (github.com/IBM/NESTFUL), Apache-2.0.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createMnestome } from '@metnos/mnestome';
import { HISTORY_BOOST, type PrefilterEntry, prefilter, STOP_WORDS, tokenize } from '../src/prefilter.ts';
import { createBm25Ranker } from './bm25.ts';
import { loadNestfulData, type NestfulSequence } from './nestful-data.ts';
import { type BenchQuery, type BenchTool, loadToolRetrievalData } from './tool-retrieval-data.ts';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: resolve(import.meta.dirname, '../../../../shared/data/metatool') },
    nestful: { type: 'string', default: resolve(import.meta.dirname, '../../../../shared/data/nestful') },
    sizes: { type: 'string', default: '1000,4000' },
    'latency-queries': { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '200' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const latencyQueryCount = Number(values['latency-queries']);
const warmup = Number(values.warmup);
const RECALL_DEPTHS = [1, 3, 5] as const;
const P50_TARGET_MS = 1;

/** A ranker under test: the names it would put first for a request, best first. */
interface Ranker {
  label: string;
  rank(query: string, k: number): string[];
}

/** "PDF&URLTool" → ["pdf", "url", "tool"]: a tool name's words, which stand in for affinity keywords. */
function nameWords(name: string): string[] {
  return tokenize(name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2'));
}

const contentTokens = (text: string) => tokenize(text).filter((token) => !STOP_WORDS.has(token));

/** A data-set tool as the pre-filter sees an executor: name, summary, affinity keywords. */
function toEntry(tool: BenchTool, affinity: boolean): PrefilterEntry {
  return { name: tool.name, summary: tool.description, affinity: affinity ? nameWords(tool.name) : [] };
}

function bagOfWords(tools: BenchTool[], affinity: boolean): Ranker {
  const entries = tools.map((tool) => toEntry(tool, affinity));
  return {
    label: `bag-of-words pre-filter, affinity = ${affinity ? 'name words' : 'none'}`,
    rank: (query, k) =>
      prefilter(query, entries, { kMin: k, kMax: k })
        .candidates.filter((candidate) => candidate.score > 0)
        .map((candidate) => candidate.entry.name),
  };
}

/** BM25 over the very words the pre-filter sees: name words, the whole name, the description without stop words. */
function bm25(tools: BenchTool[]): Ranker {
  const documents = tools.map((tool) => [
    ...new Set([...nameWords(tool.name), ...tokenize(tool.name)]),
    ...contentTokens(tool.description),
  ]);
  const byName = tools.map((_, index) => index).sort((a, b) => tools[a]!.name.localeCompare(tools[b]!.name));
  const order = new Array<number>(tools.length);
  byName.forEach((document, position) => {
    order[document] = position;
  });
  const index = createBm25Ranker(documents, order);
  return {
    label: 'BM25 baseline (k1 1.2, b 0.75)',
    rank: (query, k) => index.top(contentTokens(query), k).map((hit) => tools[hit.document]!.name),
  };
}

/** Mean share of each query's gold tools found in the ranker's first k, for each k. */
function recall(ranker: Ranker, queries: BenchQuery[]): number[] {
  const found = RECALL_DEPTHS.map(() => 0);
  const deepest = Math.max(...RECALL_DEPTHS);
  for (const { query, tools } of queries) {
    const ranked = ranker.rank(query, deepest);
    RECALL_DEPTHS.forEach((depth, column) => {
      const top = new Set(ranked.slice(0, depth));
      found[column]! += tools.filter((tool) => top.has(tool)).length / tools.length;
    });
  }
  return found.map((sum) => sum / queries.length);
}

/**
 * The catalog grown to `size` tools, deterministically: tool j past the data
 * set's n is named `<tool (j mod n)>_<copy>` (copy = ⌊j / n⌋) and described by
 * the first half of that tool's description followed by the second half of
 * tool ((j mod n) + 37·copy) mod n's, so every added tool reads like a real one
 * and shares its words with two of them.
 */
function scaleCatalog(tools: BenchTool[], size: number): BenchTool[] {
  const count = tools.length;
  const grown = tools.slice(0, size);
  for (let index = count; index < size; index++) {
    const copy = Math.floor(index / count);
    const base = tools[index % count]!;
    const donor = tools[((index % count) + 37 * copy) % count]!;
    const baseWords = base.description.split(/\s+/);
    const donorWords = donor.description.split(/\s+/);
    const description = [
      ...baseWords.slice(0, Math.ceil(baseWords.length / 2)),
      ...donorWords.slice(Math.floor(donorWords.length / 2)),
    ].join(' ');
    grown.push({ name: `${base.name}_${copy}`, description });
  }
  return grown;
}

/** Prompt tokens of one tool as the model is offered it, estimated as characters / 4 of its JSON. */
function toolTokens(tool: { name: string; description: string }): number {
  const spec = {
    name: tool.name,
    description: tool.description,
    parameters: { type: 'object', properties: {} },
  };
  return Math.ceil(JSON.stringify(spec).length / 4);
}

const quantile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
const ms = (value: number) => value.toFixed(value < 10 ? 3 : 1);
const percent = (value: number) => `${(100 * value).toFixed(1)}%`;

/** Every ⌈n / count⌉-th query: a fixed sample spread over the whole file. */
function sample(queries: BenchQuery[], count: number): BenchQuery[] {
  const step = Math.max(1, Math.ceil(queries.length / count));
  return queries.filter((_, index) => index % step === 0).slice(0, count);
}

/** Milliseconds of each call of `run` over the queries, sorted, after `warmup` unmeasured calls. */
function time(queries: BenchQuery[], run: (query: string) => unknown): number[] {
  for (let index = 0; index < warmup; index++) run(queries[index % queries.length]!.query);
  const samples = queries.map(({ query }) => {
    const started = performance.now();
    run(query);
    return performance.now() - started;
  });
  return samples.sort((a, b) => a - b);
}

/** What the planner sends the model for each query: the adaptive-K candidates, their count and their tokens. */
function sent(tools: BenchTool[], queries: BenchQuery[]) {
  const entries = tools.map((tool) => ({ ...toEntry(tool, true), tokens: toolTokens(tool) }));
  let found = 0;
  const counts: number[] = [];
  const tokens: number[] = [];
  for (const { query, tools: gold } of queries) {
    const { candidates } = prefilter(query, entries);
    const names = new Set(candidates.map((candidate) => candidate.entry.name));
    found += gold.filter((name) => names.has(name)).length / gold.length;
    counts.push(candidates.length);
    tokens.push(candidates.reduce((sum, candidate) => sum + candidate.entry.tokens, 0));
  }
  const mean = (list: number[]) => list.reduce((sum, value) => sum + value, 0) / list.length;
  return {
    recall: found / queries.length,
    meanK: mean(counts),
    meanTokens: mean(tokens),
    p99Tokens: quantile(
      tokens.sort((a, b) => a - b),
      0.99,
    ),
    catalogTokens: tools.reduce((sum, tool) => sum + toolTokens(tool), 0),
  };
}

/** Recall of the pre-filter (with and without affinity) and of BM25, per group; returns recall@5 of the first group. */
function printRecall(data: { tools: BenchTool[]; queries: BenchQuery[] }) {
  const groups = [
    { name: 'single-tool queries', queries: data.queries.filter((query) => query.tools.length === 1) },
    { name: 'multi-tool queries', queries: data.queries.filter((query) => query.tools.length > 1) },
  ].filter((group) => group.queries.length > 0);
  const ours = bagOfWords(data.tools, true);
  const baseline = bm25(data.tools);
  const atFive = new Map<Ranker, number>();
  for (const [index, group] of groups.entries()) {
    console.log(
      `\nrecall@1 / @3 / @5 on ${group.queries.length} ${group.name} (${data.tools.length} tools):`,
    );
    for (const ranker of [ours, bagOfWords(data.tools, false), baseline]) {
      const row = recall(ranker, group.queries);
      if (index === 0) atFive.set(ranker, row[2]!);
      const cells = row.map((value) => percent(value).padStart(6)).join('  ');
      console.log(`  ${ranker.label.padEnd(48)} ${cells}`);
    }
  }
  return { group: groups[0]!.name, ours: atFive.get(ours)!, baseline: atFive.get(baseline)! };
}

/** What the planner sends the model on all queries: recall among the candidates, K, prompt tokens. */
function printSent(data: { tools: BenchTool[]; queries: BenchQuery[] }) {
  const offered = sent(data.tools, data.queries);
  console.log(
    `\nwhat the planner sends (adaptive K, kMin 5 … kMax 40) on all ${data.queries.length} queries:`,
  );
  console.log(
    `  gold tools among the candidates sent: ${percent(offered.recall)}, mean K ${offered.meanK.toFixed(1)}`,
  );
  console.log(
    "  prompt tokens of the tool list (characters / 4 of each tool's { name, description, parameters } JSON):",
  );
  const fewer = (offered.catalogTokens / offered.meanTokens).toFixed(1);
  console.log(
    `  whole catalog ${offered.catalogTokens}; with the pre-filter mean ${Math.round(offered.meanTokens)}, p99 ${offered.p99Tokens} (${fewer}× fewer)`,
  );
}

/** p50 / p99 of sorted samples, as printed. */
const spread = (sorted: number[]) => `${ms(quantile(sorted, 0.5))} / ${ms(quantile(sorted, 0.99))}`;

/** Latency of one ranking and tokens sent, on the data set's catalog and the grown ones; returns p50 by size. */
function printLatencyAndTokens(tools: BenchTool[], queries: BenchQuery[]) {
  const picked = sample(queries, latencyQueryCount);
  const p50At = new Map<number, number>();
  console.log(
    `\none ranking (planner default: kMin 5, kMax 40), ${picked.length} queries, ${warmup} warm-up calls first:`,
  );
  console.log(
    '  tools   pre-filter p50 / p99 ms   BM25 p50 / p99 ms   p50 ratio   tokens: whole list → sent mean, p99 (K)',
  );
  for (const size of [tools.length, ...sizes]) {
    const catalog = scaleCatalog(tools, size);
    const entries = catalog.map((tool) => toEntry(tool, true));
    const baseline = bm25(catalog);
    const ours = time(picked, (query) => prefilter(query, entries));
    const theirs = time(picked, (query) => baseline.rank(query, 5));
    const offered = sent(catalog, picked);
    p50At.set(size, quantile(ours, 0.5));
    const ratio = `${(quantile(ours, 0.5) / quantile(theirs, 0.5)).toFixed(1)}×`;
    const tokens = `${offered.catalogTokens} → ${Math.round(offered.meanTokens)}, ${offered.p99Tokens} (K ${offered.meanK.toFixed(1)})`;
    console.log(
      `  ${String(size).padStart(5)}   ${spread(ours).padEnd(25)} ${spread(theirs).padEnd(19)} ${ratio.padStart(9)}   ${tokens}`,
    );
  }
  return p50At;
}

/** The passages of some requests in a fresh in-memory mnestome: each `$varN` read is one, from its producer. */
function mnestomeOf(sequences: NestfulSequence[]) {
  const mnestome = createMnestome({
    path: ':memory:',
    clock: () => new Date('2026-01-01T00:00:00Z'),
    onError: (error) => {
      throw error;
    },
  });
  for (const { steps } of sequences) {
    const producers = new Map(steps.map((step) => [step.label, step.tool]));
    for (const step of steps)
      for (const label of step.reads) {
        const source = producers.get(label);
        if (source) mnestome.recordPassing(source, step.tool, true);
      }
  }
  return mnestome;
}

/**
 * Recall@1/3/5 of every step after the first, ranked for the request with
 * and without the history boost (at each share in `boosts`), leave-one-out:
 * the mnestome holds the other requests' passages. Returns recall@3 without
 * and with the default share.
 */
function printHistory(folder: string, boosts: number[]) {
  const data = loadNestfulData(folder);
  const entries = data.tools.map((tool) => toEntry(tool, true));
  const deepest = Math.max(...RECALL_DEPTHS);
  const rows = new Map<number, number[]>([[0, RECALL_DEPTHS.map(() => 0)]]);
  for (const boost of boosts)
    rows.set(
      boost,
      RECALL_DEPTHS.map(() => 0),
    );
  let ranked = 0;
  data.sequences.forEach((sequence, held) => {
    const mnestome = mnestomeOf(data.sequences.filter((_, index) => index !== held));
    for (let index = 1; index < sequence.steps.length; index++) {
      const gold = sequence.steps[index]!.tool;
      const previous = sequence.steps[index - 1]!.tool;
      ranked++;
      for (const [boost, found] of rows) {
        const history = boost === 0 ? undefined : { previous, passagesFrom: mnestome.passagesFrom, boost };
        const names = prefilter(sequence.query, entries, { kMin: deepest, kMax: deepest, history })
          .candidates.filter((candidate) => candidate.score > 0)
          .map((candidate) => candidate.entry.name);
        RECALL_DEPTHS.forEach((depth, column) => {
          if (names.slice(0, depth).includes(gold)) found[column]!++;
        });
      }
    }
    mnestome.close();
  });
  console.log(
    `\nhistory boost — NESTFUL (${folder}): ${data.tools.length} tools, ${data.sequences.length} requests, ${ranked} steps after the first`,
  );
  console.log("  (the previous step's executor and the passages of the other requests; recall@1 / @3 / @5)");
  const without = rows.get(0)!.map((count) => count / ranked);
  for (const [boost, found] of rows) {
    const recallAt = found.map((count) => count / ranked);
    const label =
      boost === 0
        ? 'without history'
        : `with history, boost ${boost}${boost === HISTORY_BOOST ? ' (default)' : ''}`;
    const ratios =
      boost === 0
        ? ''
        : `   ratio ${recallAt.map((value, column) => `${(value / without[column]!).toFixed(2)}×`).join(' / ')}`;
    console.log(
      `  ${label.padEnd(34)} ${recallAt.map((value) => percent(value).padStart(6)).join('  ')}${ratios}`,
    );
  }
  const withDefault = rows.get(HISTORY_BOOST)!.map((count) => count / ranked);
  return { without: without[1]!, with: withDefault[1]! };
}

const started = performance.now();
const data = loadToolRetrievalData(resolve(values.data));
console.log(
  `pre-filter benchmark — ${values.data} (${data.format}): ${data.tools.length} tools, ${data.queries.length} queries; Node ${process.version}`,
);
const atFive = printRecall(data);
printSent(data);
const p50 = printLatencyAndTokens(data.tools, data.queries).get(1000);

const boosts = [...new Set([0.25, 0.5, HISTORY_BOOST, 2])].sort((a, b) => a - b);
const history = existsSync(values.nestful) ? printHistory(resolve(values.nestful), boosts) : undefined;
if (!history) console.log(`\nhistory boost: no NESTFUL data at ${values.nestful} (pass --nestful <folder>)`);

console.log('\ntargets:');
const recallMet = atFive.ours > atFive.baseline ? 'met' : 'missed';
console.log(
  `  recall@5 above BM25 (${atFive.group}): ${percent(atFive.ours)} vs ${percent(atFive.baseline)} — ${recallMet}`,
);
if (p50 !== undefined) {
  const latencyMet = p50 <= P50_TARGET_MS ? 'met' : 'missed';
  console.log(`  p50 ≤ ${P50_TARGET_MS} ms at 1,000 tools (pre-filter): ${ms(p50)} ms — ${latencyMet}`);
}
if (history) {
  const historyMet = history.with > history.without ? 'met' : 'missed';
  console.log(
    `  history boost raises recall@3 on NESTFUL: ${percent(history.with)} vs ${percent(history.without)} — ${historyMet}`,
  );
}
console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
