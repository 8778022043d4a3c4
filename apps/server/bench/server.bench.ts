// Load on the HTTP API: `startServer` with the learning engine over real SQLite stores, the seed
// executors under the real sandbox and both model tiers spoken to over the Ollama protocol on
// loopback (scripted servers with a stated per-call delay, not models), driven by N concurrent
// clients for a bounded time with a mix of memory-served turns (requests learned during warm-up)
// and Proposer turns (requests never seen before, planned by the scripted model), all through
// `POST /api/turns` with the bearer token. The server runs in a process of its own
// (server-process.ts), so the RSS reported is the server's. Usage:
//   pnpm bench:server [--clients 64] [--seconds 30] [--warmup-seconds 5] [--proposer-share 0.2]
//                     [--model-delay-ms 800] [--intent-delay-ms 100] [--max-concurrent-turns N]
//                     [--sandbox-pool on|off]   (the sandbox's warm pool, on by default as in metnos serve)
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startOllamaServer, type WireServer } from '@metnos/planner/test';
import type { ServerProcessConfig, ServerProcessMessage } from './server-process.ts';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '30' },
    'warmup-seconds': { type: 'string', default: '5' },
    'proposer-share': { type: 'string', default: '0.2' },
    'model-delay-ms': { type: 'string', default: '800' },
    'intent-delay-ms': { type: 'string', default: '100' },
    'max-concurrent-turns': { type: 'string' },
    'sandbox-pool': { type: 'string', default: 'on' },
  },
});
const clients = Number(values.clients);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values['warmup-seconds']);
const proposerShare = Number(values['proposer-share']);
const planDelayMs = Number(values['model-delay-ms']);
const intentDelayMs = Number(values['intent-delay-ms']);
const maxConcurrentTurns =
  values['max-concurrent-turns'] === undefined ? undefined : Number(values['max-concurrent-turns']);
const RSS_FLAT_LIMIT = 0.1;
const REQUEST_TIMEOUT_MS = 120_000;

// ── the world: a workspace, the scripted model tiers, the server process ─────────────────────
const root = await mkdtemp(join(tmpdir(), 'metnos-bench-server-'));
const workspace = join(root, 'workspace');
await mkdir(join(workspace, 'notes', 'old'), { recursive: true });
await mkdir(join(root, 'state'), { recursive: true });
await writeFile(
  join(workspace, 'notes', 'diary.md'),
  Array.from({ length: 200 }, (_, index) => `line ${index + 1}`).join('\n'),
);
await writeFile(
  join(workspace, 'notes', 'todo.md'),
  Array.from({ length: 40 }, (_, index) => `- [ ] task ${index + 1}`).join('\n'),
);
await writeFile(join(workspace, 'notes', 'ideas.md'), 'a server bench\n');

const plan = (steps: unknown[], final: string) => JSON.stringify({ steps, final_message: final });
const intent = (verb: string, object: string) => JSON.stringify({ verb, object, qualifiers: [] });
/** The requests memory learns during warm-up, each with its own intent and plan, asked one at a time. */
const LEARNED = [
  {
    request: 'read notes/diary.md and tell me the last 3 lines',
    intent: intent('read', 'file'),
    plan: plan(
      [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 3 } }],
      '${step1.content.content}',
    ),
  },
  {
    request: 'show me the first 5 lines of notes/todo.md',
    intent: intent('read', 'file'),
    plan: plan(
      [{ tool: 'fs_read', args: { path: 'notes/todo.md', mode: 'head', lines: 5 } }],
      '${step1.content.content}',
    ),
  },
  {
    request: 'what time is it in Tokyo',
    intent: intent('tell', 'time'),
    plan: plan(
      [{ tool: 'time_now', args: { timezone: 'Asia/Tokyo' } }],
      'In Tokyo it is ${step1.content.time}, ${step1.content.weekday}.',
    ),
  },
  {
    request: 'how many entries are in the notes folder',
    intent: intent('count', 'folder'),
    plan: plan(
      [{ tool: 'fs_list', args: { path: 'notes' } }],
      'The notes folder holds ${step1.content.count} entries.',
    ),
  },
];
/**
 * New requests are made-up words, a different triple every time, so nothing remembered is like
 * them. The scripted servers answer in arrival order and cannot tell concurrent turns apart, so
 * every new request gets the same answers: the intent tier does not recognise the words, and the
 * planner proposes one time_now step.
 */
const NEW_INTENT = intent('unknown', 'unknown');
const NEW_PLAN = plan([{ tool: 'time_now', args: {} }], 'It is ${step1.content.time}.');
const SYLLABLES = [
  'ba',
  'ke',
  'lo',
  'mu',
  'ni',
  'pa',
  're',
  'si',
  'to',
  'vu',
  'za',
  'qi',
  'fo',
  'gu',
  'hy',
  'jo',
];
let newCount = 0;
/** Four syllables from 16 bits; the first word is a bijection of the count, so no request repeats. */
const word = (bits: number) =>
  Array.from({ length: 4 }, (_, digit) => SYLLABLES[(bits >>> (4 * digit)) & 15]).join('');
function newRequest(): string {
  const n = newCount++;
  const mix = (value: number, odd: number) => (Math.imul(value, odd) + (odd >>> 16)) & 0xffff;
  return `${word(mix(n, 40503))} ${word(mix(n + 7919, 52429))} ${word(mix(n + 104729, 34821))}`;
}

const fast = await startOllamaServer();
const wise = await startOllamaServer();
const intentStep = (text: string) => ({ text, delayMs: intentDelayMs });
const planStep = (text: string) => ({ text, delayMs: planDelayMs });
/** What the scripted servers were asked: counted, then dropped, so the log does not grow. */
const modelRequests = { fast: 0, wise: 0 };
function countModelRequests(server: WireServer, tier: 'fast' | 'wise') {
  modelRequests[tier] += server.requests.length;
  server.requests.length = 0;
}

const token = randomBytes(32).toString('base64url');
const serverConfig: ServerProcessConfig = {
  token,
  root,
  fastUrl: fast.url,
  wiseUrl: wise.url,
  ...(maxConcurrentTurns === undefined ? {} : { maxConcurrentTurns }),
  pool: values['sandbox-pool'] !== 'off',
};
const child: ChildProcess = fork(join(import.meta.dirname, 'server-process.ts'), {
  execArgv: [...process.execArgv, '--expose-gc'],
  env: { ...process.env, METNOS_BENCH_SERVER: JSON.stringify(serverConfig) },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
function nextMessage<T extends ServerProcessMessage['type']>(
  type: T,
): Promise<Extract<ServerProcessMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ServerProcessMessage) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as Extract<ServerProcessMessage, { type: T }>);
    };
    const onExit = (code: number | null) => reject(new Error(`the server process exited (${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
// the server process never outlives the bench, however it ends
process.once('exit', () => child.kill());
const { url } = await nextMessage('ready');
async function serverMemory() {
  const reply = nextMessage('rss');
  child.send({ type: 'rss' });
  return reply;
}

// ── one turn through the API ──────────────────────────────────────────────────────────────────
type Kind = 'memory' | 'proposer';
interface Outcome {
  kind: Kind;
  ms: number;
  error?: 'status' | 'network' | 'non-answer';
  detail?: string;
  layer?: string;
  /** For a memory turn answered elsewhere: why the layers above passed it on. */
  passed?: string;
}
async function turn(kind: Kind, request: string): Promise<Outcome> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}/api/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (!response.ok)
      return { kind, ms, error: 'status', detail: `HTTP ${response.status} ${text.slice(0, 160)}` };
    const body = JSON.parse(text) as {
      layer: string;
      finalKind: string;
      finalMessage: string;
      passes: Array<{ layer: string; reason: string }>;
    };
    const passed =
      kind === 'memory' && body.layer !== 'fastpath'
        ? body.passes.map((pass) => `${pass.layer}: ${pass.reason}`).join(' | ')
        : undefined;
    if (body.finalKind !== 'answer')
      return {
        kind,
        ms,
        layer: body.layer,
        ...(passed ? { passed } : {}),
        error: 'non-answer',
        detail: `${body.finalKind} at ${body.layer}: ${body.finalMessage.slice(0, 160)}`,
      };
    return { kind, ms, layer: body.layer, ...(passed ? { passed } : {}) };
  } catch (error) {
    return {
      kind,
      ms: performance.now() - started,
      error: 'network',
      detail: String((error as Error).message),
    };
  }
}

/** A small seeded generator, so every run sends the same sequence of kinds. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** N clients, each sending one turn after another until `ms` have passed; turns under way finish. */
async function load(ms: number, seed: number): Promise<{ outcomes: Outcome[]; elapsedMs: number }> {
  const outcomes: Outcome[] = [];
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      const next = random(seed * 1000 + client);
      while (performance.now() < end) {
        if (next() < proposerShare) {
          fast.push(intentStep(NEW_INTENT));
          wise.push(planStep(NEW_PLAN));
          outcomes.push(await turn('proposer', newRequest()));
        } else {
          const learned = LEARNED[Math.floor(next() * LEARNED.length)]!;
          outcomes.push(await turn('memory', learned.request));
        }
        countModelRequests(fast, 'fast');
        countModelRequests(wise, 'wise');
      }
    }),
  );
  return { outcomes, elapsedMs: performance.now() - started };
}

// ── warm-up: learn, then load briefly ─────────────────────────────────────────────────────────
const atStart = await serverMemory();
for (const learned of LEARNED) {
  fast.push(intentStep(learned.intent));
  wise.push(planStep(learned.plan));
  const first = await turn('proposer', learned.request);
  const again = await turn('memory', learned.request);
  if (first.error || first.layer !== 'engine' || again.error || again.layer !== 'fastpath')
    throw new Error(
      `warm-up: "${learned.request}" was not learned (${first.layer ?? first.error} ${first.detail ?? ''}, then ${again.layer ?? again.error} ${again.detail ?? ''})`,
    );
}
const warmup = warmupSeconds > 0 ? await load(warmupSeconds * 1000, 1) : { outcomes: [], elapsedMs: 0 };
const afterWarmup = await serverMemory();

// ── the measured run ──────────────────────────────────────────────────────────────────────────
const run = await load(seconds * 1000, 2);
const atEnd = await serverMemory();
countModelRequests(fast, 'fast');
countModelRequests(wise, 'wise');
const leftover = { fast: fast.remaining(), wise: wise.remaining() };

const stopped = nextMessage('stopped');
child.send({ type: 'stop' });
await stopped;
await Promise.all([fast.close(), wise.close()]);
await rm(root, { recursive: true, force: true });

// ── the report ────────────────────────────────────────────────────────────────────────────────
function quantile(samples: number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const pct = (part: number, whole: number) => (whole === 0 ? '0.0' : ((100 * part) / whole).toFixed(1));
const layers = (outcomes: Outcome[]) => {
  const counts = new Map<string, number>();
  for (const outcome of outcomes)
    if (outcome.layer) counts.set(outcome.layer, (counts.get(outcome.layer) ?? 0) + 1);
  return [...counts].map(([layer, count]) => `${layer} ${count}`).join(', ') || 'none';
};

const outcomes = run.outcomes;
const errors = outcomes.filter((outcome) => outcome.error);
const byKind = (kind: Kind) => outcomes.filter((outcome) => outcome.kind === kind);
const cpu = cpus()[0]?.model.trim() ?? 'unknown cpu';
console.log(
  `Metnos server load benchmark — ${clients} clients for ${seconds} s (after ${warmupSeconds} s of warm-up), node ${process.version}, ${availableParallelism()} cores (${cpu})`,
);
console.log(
  `server: startServer on ${url} (its own process), maxConcurrentTurns ${maxConcurrentTurns ?? '4 (the default)'}, learning engine over SQLite stores in a temp dir,`,
);
console.log(
  `        the seed executors under the full-tier sandbox (one sandboxed process per step), warm pool ${serverConfig.pool ? 'on' : 'off'}`,
);
console.log(
  `models: scripted Ollama servers on loopback, not models — the planner (wise tier) waits ${planDelayMs} ms per call, the intent`,
);
console.log(
  `        tier (fast) ${intentDelayMs} ms; both answer every call at once after their delay (a real local model would queue them)`,
);
console.log(
  `mix: memory-served turns are the ${LEARNED.length} requests learned during warm-up; Proposer turns are new made-up requests (${Math.round(proposerShare * 100)}% of picks),`,
);
console.log('     each answered by the scripted planner with one time_now step');
console.log(
  `warm-up: ${LEARNED.length} requests learned one at a time, then ${warmup.outcomes.length} turns under load (${warmup.outcomes.filter((o) => o.error).length} errors)\n`,
);

const memoryTurns = byKind('memory');
const proposerTurns = byKind('proposer');
console.log(
  `turns: ${outcomes.length} in ${(run.elapsedMs / 1000).toFixed(1)} s (${seconds} s of sending, then the turns under way) — memory ${memoryTurns.length} (${pct(memoryTurns.length, outcomes.length)}%), Proposer ${proposerTurns.length} (${pct(proposerTurns.length, outcomes.length)}%)`,
);
console.log(
  `  answered by layer: memory turns → ${layers(memoryTurns)}; Proposer turns → ${layers(proposerTurns)}`,
);
console.log(
  `  model calls over HTTP: planner ${modelRequests.wise}, intent ${modelRequests.fast} (script steps left unused: ${leftover.wise} planner, ${leftover.fast} intent)`,
);
console.log(`throughput: ${(outcomes.length / (run.elapsedMs / 1000)).toFixed(1)} turns/s\n`);
console.log('latency (client side, queueing included)    p50 ms     p99 ms');
for (const [name, samples] of [
  ['memory-served', memoryTurns],
  ['Proposer', proposerTurns],
  ['overall', outcomes],
] as const)
  console.log(
    `  ${name.padEnd(40)} ${quantile(
      samples.map((o) => o.ms),
      0.5,
    )
      .toFixed(0)
      .padStart(7)} ${quantile(
      samples.map((o) => o.ms),
      0.99,
    )
      .toFixed(0)
      .padStart(10)}`,
  );

const count = (kind: Outcome['error']) => errors.filter((outcome) => outcome.error === kind).length;
console.log(
  `\nerrors: ${errors.length} — non-2xx ${count('status')}, network ${count('network')}, non-answer ${count('non-answer')}`,
);
const details = new Map<string, number>();
for (const error of errors)
  details.set(`${error.kind}: ${error.detail}`, (details.get(`${error.kind}: ${error.detail}`) ?? 0) + 1);
for (const [detail, times] of [...details].slice(0, 8)) console.log(`  ${times}× ${detail}`);

const missed = new Map<string, number>();
for (const outcome of memoryTurns)
  if (outcome.passed) missed.set(outcome.passed, (missed.get(outcome.passed) ?? 0) + 1);
if (missed.size > 0) console.log('\nmemory turns not served by the fastpath, and why it passed them on:');
for (const [reason, times] of [...missed].slice(0, 6)) console.log(`  ${times}× ${reason.slice(0, 400)}`);

const growth = (atEnd.rss - afterWarmup.rss) / afterWarmup.rss;
const flat = growth <= RSS_FLAT_LIMIT;
console.log(
  `\nserver RSS (after a full GC): start ${mb(atStart.rss)}, after warm-up ${mb(afterWarmup.rss)}, end ${mb(atEnd.rss)} — ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}% after warm-up: ${flat ? 'flat' : 'growing'}`,
);
console.log(
  `server heap used: start ${mb(atStart.heapUsed)}, after warm-up ${mb(afterWarmup.heapUsed)}, end ${mb(atEnd.heapUsed)}`,
);
console.log('\ntargets');
console.log(
  `  0 errors                                   ${errors.length === 0 ? 'MET' : `MISSED (${errors.length})`}`,
);
console.log(`  RSS flat after warm-up (growth ≤ ${RSS_FLAT_LIMIT * 100}%)     ${flat ? 'MET' : 'MISSED'}`);
