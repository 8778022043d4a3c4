// End-to-end turn latency: the same request answered by the Proposer (L3, a
// scripted model with a fixed, stated delay standing in for a local model)
// and then from memory (L0 Fastpath), through the real sandbox and the seed
// executors, in one run; and the in-process overhead of a memory-served turn
// (everything but the executor process), measured on the same turns by timing
// runTurn around an invoker that wraps the real one and subtracting the time
// spent inside invoke. Then the memory-served turn again with the sandbox's
// warm pool (the step's process started ahead of it) and an invoker that also
// writes the audit line and the signed receipt, and what that turn spends
// outside the sandboxed process. Usage:
//   pnpm bench:turn [--runs 10] [--model-delay-ms 800] [--memory-turns 20]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  createReceiptChain,
  type ExecutorRunner,
  generateSigningKey,
  readPublicKey,
  receiptsDirOf,
} from '@metnos/executor-sdk';
import { createSandboxRunner, type SandboxRunner } from '@metnos/sandbox';
import { createVaglio } from '@metnos/vaglio';
import { createEngine, createGapLog } from '../src/index.ts';
import { createScriptedModel } from '../src/test/index.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    'model-delay-ms': { type: 'string', default: '800' },
    'memory-turns': { type: 'string', default: '20' },
  },
});
const runs = Number(values.runs);
const delayMs = Number(values['model-delay-ms']);
const memoryTurns = Number(values['memory-turns']);
const OVERHEAD_P50_TARGET_MS = 2;
const repo = join(import.meta.dirname, '..', '..', '..');

const autopathModule = (await import('@metnos/autopath')) as Record<string, unknown>;
const embedderFactory = (autopathModule.createDefaultEmbedder ??
  autopathModule.createHashingEmbedder) as () => {
  id: string;
  embed(texts: string[]): Promise<Float32Array[]>;
};
const embedder = embedderFactory();

const key = await readPublicKey(join(repo, 'keys', 'metnos-release.pub'));
const catalog = createCatalog({
  root: join(repo, 'executors'),
  trustedKeys: [key],
  stateDir: await mkdtemp(join(tmpdir(), 'metnos-bench-state-')),
});
await catalog.load();
const sandboxed = createInvoker({ catalog, runner: createSandboxRunner({ audit: false }) });
/** The real invoker, timed: what a turn spends inside invoke is the executor's, not the engine's. */
let insideInvoke = 0;
/** The last result the sandboxed executor gave, for the instant invoker of the cross-check. */
let lastResult: Awaited<ReturnType<typeof sandboxed.invoke>> | undefined;
const invoker: Pick<typeof sandboxed, 'invoke'> = {
  async invoke(...args) {
    const started = performance.now();
    try {
      lastResult = await sandboxed.invoke(...args);
      return lastResult;
    } finally {
      insideInvoke += performance.now() - started;
    }
  },
};
const reviewer = createVaglio({});
const workspace = await mkdtemp(join(tmpdir(), 'metnos-bench-ws-'));
await mkdir(join(workspace, 'notes'), { recursive: true });
await writeFile(
  join(workspace, 'notes', 'diary.md'),
  Array.from({ length: 200 }, (_, index) => `line ${index + 1}`).join('\n'),
);

const request = 'read notes/diary.md and tell me the last 3 lines';
const planText = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 3 } }],
  final_message: '${step1.content.content}',
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const proposer: number[] = [];
const memory: number[] = [];
/** Per memory-served turn: the wall time of runTurn minus the time inside invoke. */
const overhead: number[] = [];
async function memoryTurn(engine: ReturnType<typeof createEngine>) {
  insideInvoke = 0;
  const started = performance.now();
  const result = await engine.runTurn(request);
  const wall = performance.now() - started;
  if (result.layer !== 'fastpath' || result.modelCalls !== 0)
    throw new Error(`warm run answered by ${result.layer} with ${result.modelCalls} model calls`);
  overhead.push(wall - insideInvoke);
  return result;
}
for (let run = 0; run < runs; run++) {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-bench-turn-'));
  const scripted = createScriptedModel([{ text: planText }, { text: planText }]);
  const model = {
    id: `scripted-${delayMs}ms`,
    provider: 'scripted',
    async generate(request: Parameters<typeof scripted.generate>[0]) {
      await sleep(delayMs);
      return scripted.generate(request);
    },
  };
  const stores = {
    fastpath: createFastpathStore({ path: join(dir, 'fastpaths.sqlite') }),
    autopath: createAutopathStore({ path: join(dir, 'autopath.sqlite') }),
    gaps: createGapLog({ path: join(dir, 'gaps.sqlite') }),
  };
  const engine = createEngine({
    catalog,
    invoker,
    reviewer,
    models: { fast: createScriptedModel([]), wise: model },
    embedder,
    ...stores,
    workspace,
  });
  const cold = await engine.runTurn(request);
  if (cold.layer !== 'engine' || cold.finalKind !== 'answer')
    throw new Error(`cold run answered by ${cold.layer}: ${cold.finalMessage}`);
  proposer.push(cold.latencyMs);
  memory.push((await memoryTurn(engine)).latencyMs);
  for (let turn = 0; turn < memoryTurns; turn++) await memoryTurn(engine);
  stores.fastpath.close();
  stores.autopath.close();
  stores.gaps.close();
  await rm(dir, { recursive: true, force: true });
}

/** Waits until the pool has a process waiting and none starting. */
async function poolReady(runner: SandboxRunner): Promise<void> {
  for (let tries = 0; tries < 2000; tries++) {
    const stats = runner.poolStats()!;
    if (stats.waiting >= 1 && stats.starting === 0) return;
    await sleep(5);
  }
  throw new Error(`the pool never got ready: ${JSON.stringify(runner.poolStats())}`);
}

/**
 * The memory-served turn with the warm pool: a runner whose process for the
 * step was started ahead of it (the bench waits for it between turns, as a
 * server's pool has it ready between requests), an invoker that writes the
 * audit line and appends a signed receipt as `metnos ask` and `serve` do.
 * Returns the turns' wall times and, per turn, the time outside the runner
 * (engine and invoker: reverification, validation, audit, receipt).
 */
async function pooledTurns(count: number): Promise<{ wall: number[]; outside: number[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-bench-pool-'));
  const pooled = createSandboxRunner({ audit: false, pool: { size: 1 } });
  let insideRun = 0;
  const timed: ExecutorRunner = {
    tier: pooled.tier,
    async run(request) {
      const started = performance.now();
      try {
        return await pooled.run(request);
      } finally {
        insideRun += performance.now() - started;
      }
    },
  };
  const receipts = createReceiptChain({ dir: receiptsDirOf(workspace), key: await generateSigningKey() });
  const stores = {
    fastpath: createFastpathStore({ path: join(dir, 'fastpaths.sqlite') }),
    autopath: createAutopathStore({ path: join(dir, 'autopath.sqlite') }),
    gaps: createGapLog({ path: join(dir, 'gaps.sqlite') }),
  };
  const engine = createEngine({
    catalog,
    invoker: createInvoker({ catalog, runner: timed, audit: createAuditLog({ workspace }), receipts }),
    reviewer,
    models: { fast: createScriptedModel([]), wise: createScriptedModel([{ text: planText }]) },
    embedder,
    ...stores,
    workspace,
  });
  const learned = await engine.runTurn(request);
  if (learned.finalKind !== 'answer') throw new Error(`pooled run: ${learned.finalMessage}`);
  const wall: number[] = [];
  const outside: number[] = [];
  for (let turn = 0; turn < count + 3; turn++) {
    await poolReady(pooled);
    insideRun = 0;
    const started = performance.now();
    const result = await engine.runTurn(request);
    const elapsed = performance.now() - started;
    if (result.layer !== 'fastpath' || result.finalKind !== 'answer')
      throw new Error(`pooled run answered by ${result.layer}: ${result.finalMessage}`);
    // the first turns warm the code paths, as the warm-up of the other rows does
    if (turn < 3) continue;
    wall.push(elapsed);
    outside.push(elapsed - insideRun);
  }
  pooled.close();
  stores.fastpath.close();
  stores.autopath.close();
  stores.gaps.close();
  await rm(dir, { recursive: true, force: true });
  return { wall, outside };
}

/**
 * Cross-check: the same L0 turn through a second engine whose invoker answers at once, in process,
 * with the result the sandboxed fs_read gave: the engine alone, with no executor process around it.
 */
async function instantTurns(count: number): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-bench-instant-'));
  const recorded = lastResult!;
  const stores = {
    fastpath: createFastpathStore({ path: join(dir, 'fastpaths.sqlite') }),
    autopath: createAutopathStore({ path: join(dir, 'autopath.sqlite') }),
    gaps: createGapLog({ path: join(dir, 'gaps.sqlite') }),
  };
  const engine = createEngine({
    catalog,
    invoker: { invoke: async () => structuredClone(recorded) },
    reviewer,
    models: { fast: createScriptedModel([]), wise: createScriptedModel([{ text: planText }]) },
    embedder,
    ...stores,
    workspace,
  });
  await engine.runTurn(request);
  const samples: number[] = [];
  for (let turn = 0; turn < count; turn++) {
    const started = performance.now();
    const result = await engine.runTurn(request);
    samples.push(performance.now() - started);
    if (result.layer !== 'fastpath') throw new Error(`instant run answered by ${result.layer}`);
  }
  stores.fastpath.close();
  stores.autopath.close();
  stores.gaps.close();
  await rm(dir, { recursive: true, force: true });
  return samples;
}
const instant = await instantTurns(overhead.length);
const pooled = await pooledTurns(Math.max(20, memoryTurns));
const MEMORY_TURN_P50_TARGET_MS = 20;

console.log(`Metnos turn benchmark — ${runs} runs, node ${process.version}, embedder ${embedder.id}`);
console.log(`request: "${request}" (fs_read through the full-tier sandbox)`);
console.log(
  `the Proposer is a scripted model that waits ${delayMs} ms per call (a stand-in for a local model's latency, not a model)\n`,
);
console.log('layer                     median ms     p99 ms');
console.log(
  `L3 engine (Proposer)   ${quantile(proposer, 0.5).toFixed(1).padStart(11)} ${quantile(proposer, 0.99).toFixed(1).padStart(10)}`,
);
console.log(
  `L0 fastpath (memory)   ${quantile(memory, 0.5).toFixed(1).padStart(11)} ${quantile(memory, 0.99).toFixed(1).padStart(10)}`,
);
console.log(
  `L0, warm pool          ${quantile(pooled.wall, 0.5).toFixed(1).padStart(11)} ${quantile(pooled.wall, 0.99).toFixed(1).padStart(10)}   (${pooled.wall.length} turns; audit line and receipt written)`,
);
console.log(`\nL0 is ${(quantile(proposer, 0.5) / quantile(memory, 0.5)).toFixed(1)}× faster at the median`);
const pooledP50 = quantile(pooled.wall, 0.5);
console.log(
  `memory-served turn with the warm pool: p50 ${pooledP50.toFixed(1)} ms — target p50 ≤ ${MEMORY_TURN_P50_TARGET_MS} ms: ${pooledP50 <= MEMORY_TURN_P50_TARGET_MS ? 'MET' : 'MISSED'}`,
);
console.log(
  `without the model's delay the Proposer path would take about ${(quantile(proposer, 0.5) - delayMs).toFixed(1)} ms`,
);
const overheadP50 = quantile(overhead, 0.5);
console.log(
  `\nin-process overhead of a memory-served turn (${overhead.length} L0 turns: the first warm turn of each run and ${memoryTurns} more):`,
);
console.log(
  '  runTurn timed around an invoker that wraps the real sandboxed one; the time spent inside invoke (the',
);
console.log(
  '  executor process, its sandbox and the invoker) is subtracted, so what is left is the engine: request key,',
);
console.log('  memory lookup, replay, vaglio review, observation and learning');
console.log(
  `  p50 ${overheadP50.toFixed(2)} ms, p99 ${quantile(overhead, 0.99).toFixed(2)} ms — target p50 ≤ ${OVERHEAD_P50_TARGET_MS} ms: ${overheadP50 <= OVERHEAD_P50_TARGET_MS ? 'MET' : 'MISSED'}`,
);
console.log(
  `  cross-check, the same L0 turn through a second engine whose invoker answers at once in process with the\n  recorded fs_read result (${instant.length} turns, no executor process at all): p50 ${quantile(instant, 0.5).toFixed(2)} ms, p99 ${quantile(instant, 0.99).toFixed(2)} ms`,
);
const outsideP50 = quantile(pooled.outside, 0.5);
console.log(
  `\nin-process path of the warm-pool memory turn (everything but the runner: engine, and the invoker's\n  reverification, validation, audit line and receipt): p50 ${outsideP50.toFixed(2)} ms, p99 ${quantile(pooled.outside, 0.99).toFixed(2)} ms`,
);
await rm(workspace, { recursive: true, force: true });
