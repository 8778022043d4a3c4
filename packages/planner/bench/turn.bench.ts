// End-to-end turn latency: the same request answered by the Proposer (L3, a
// scripted model with a fixed, stated delay standing in for a local model)
// and then from memory (L0 Fastpath), through the real sandbox and the seed
// executors, in one run. Usage:
//   pnpm bench:turn [--runs 10] [--model-delay-ms 800]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createCatalog, createInvoker, readPublicKey } from '@metnos/executor-sdk';
import { createSandboxRunner } from '@metnos/sandbox';
import { createVaglio } from '@metnos/vaglio';
import { createEngine, createGapLog } from '../src/index.ts';
import { createScriptedModel } from '../src/test/index.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, 'model-delay-ms': { type: 'string', default: '800' } },
});
const runs = Number(values.runs);
const delayMs = Number(values['model-delay-ms']);
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
const invoker = createInvoker({ catalog, runner: createSandboxRunner({ audit: false }) });
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
  const warm = await engine.runTurn(request);
  if (warm.layer !== 'fastpath' || warm.modelCalls !== 0)
    throw new Error(`warm run answered by ${warm.layer} with ${warm.modelCalls} model calls`);
  memory.push(warm.latencyMs);
  stores.fastpath.close();
  stores.autopath.close();
  stores.gaps.close();
  await rm(dir, { recursive: true, force: true });
}

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
console.log(`\nL0 is ${(quantile(proposer, 0.5) / quantile(memory, 0.5)).toFixed(1)}× faster at the median`);
console.log(
  `without the model's delay the Proposer path would take about ${(quantile(proposer, 0.5) - delayMs).toFixed(1)} ms`,
);
await rm(workspace, { recursive: true, force: true });
