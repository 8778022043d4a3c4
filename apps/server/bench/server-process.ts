// The server side of `pnpm bench:server`, in a process of its own so that its RSS is the
// server's alone (not the load clients' nor the scripted model's): the seed executors under the
// real sandbox, the vaglio, real SQLite stores in a temp dir, the learning engine with both tiers
// over the Ollama protocol on loopback, and `startServer` on 127.0.0.1. Driven over IPC by
// server.bench.ts: `rss` → its memory, `stop` → close the server, then the stores, then exit.
import { join } from 'node:path';
import { createDefaultEmbedder } from '@metnos/autopath';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createCatalog, createInvoker, readPublicKey } from '@metnos/executor-sdk';
import { createEngine, createGapLog, createOllamaModel } from '@metnos/planner';
import { createSandboxRunner } from '@metnos/sandbox';
import { createVaglio } from '@metnos/vaglio';
import { startServer } from '../src/serve.ts';

/** What the bench hands its server process. */
export interface ServerProcessConfig {
  token: string;
  /** Temp folder: `workspace/`, `state/` and the stores. */
  root: string;
  fastUrl: string;
  wiseUrl: string;
  maxConcurrentTurns?: number;
  /** The sandbox's warm pool, as `metnos serve` has it by default. */
  pool: boolean;
}

export type ServerProcessMessage =
  | { type: 'ready'; url: string }
  | { type: 'rss'; rss: number; heapUsed: number }
  | { type: 'stopped' };

// the scripted servers ignore sampling settings; the AI SDK would warn about `seed` on every call
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
// the bench is gone: so is its server
process.once('disconnect', () => process.exit(0));
const config = JSON.parse(process.env.METNOS_BENCH_SERVER ?? '{}') as ServerProcessConfig;
const send = (message: ServerProcessMessage) => process.send?.(message);
const repo = join(import.meta.dirname, '..', '..', '..');

const key = await readPublicKey(join(repo, 'keys', 'metnos-release.pub'));
const catalog = createCatalog({
  root: join(repo, 'executors'),
  trustedKeys: [key],
  stateDir: join(config.root, 'state'),
});
await catalog.load();
const stores = {
  fastpath: createFastpathStore({ path: join(config.root, 'fastpaths.sqlite') }),
  autopath: createAutopathStore({ path: join(config.root, 'autopath.sqlite') }),
  gaps: createGapLog({ path: join(config.root, 'gaps.sqlite') }),
};
const engine = createEngine({
  catalog,
  invoker: createInvoker({ catalog, runner: createSandboxRunner({ audit: false, pool: config.pool }) }),
  reviewer: createVaglio({}),
  models: {
    fast: createOllamaModel({ model: 'scripted-intent', baseUrl: config.fastUrl, think: false }),
    wise: createOllamaModel({ model: 'scripted-planner', baseUrl: config.wiseUrl, think: false }),
  },
  embedder: createDefaultEmbedder(),
  ...stores,
  workspace: join(config.root, 'workspace'),
});
const server = await startServer({
  token: config.token,
  engine,
  port: 0,
  ...(config.maxConcurrentTurns === undefined ? {} : { maxConcurrentTurns: config.maxConcurrentTurns }),
});

process.on('message', async (message: { type: string }) => {
  if (message.type === 'rss') {
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    send({ type: 'rss', rss: usage.rss, heapUsed: usage.heapUsed });
  } else if (message.type === 'stop') {
    await server.close();
    stores.fastpath.close();
    stores.autopath.close();
    stores.gaps.close();
    send({ type: 'stopped' });
    process.disconnect();
  }
});
send({ type: 'ready', url: server.url });
