// `metnos serve` killed with -9 under load, several times over, then every store checked: the
// real server in a child process over a workspace `metnos init` made, two loopback model tiers
// speaking the Ollama protocol, 16 clients sending remembered and new requests and feedback.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readStoreFile } from '@metnos/autopath/test';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');
const CLIENTS = 16;
const ROUNDS = 3;

let work: string;
let workspaceDir: string;
let dataDir: string;
let configDir: string;
let token: string;
let fast: Awaited<ReturnType<typeof startOllamaServer>>;
let wise: Awaited<ReturnType<typeof startOllamaServer>>;
const started: ChildProcess[] = [];

function env(): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|METNOS_|XDG_)/.test(name)),
  );
  return {
    ...base,
    HOME: join(work, 'home'),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    METNOS_CONFIG_DIR: configDir,
  };
}

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], cwd = workspaceDir): Running {
  const child = spawn(METNOS, args, { cwd, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, out: () => out, err: () => err, exited };
}

async function run(args: string[], cwd?: string) {
  const running = start(args, cwd);
  const { code } = await running.exited;
  return { code, out: running.out(), err: running.err() };
}

async function serve(): Promise<Running & { url: string }> {
  const running = start(['serve', '--port', '0']);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const found = /listening on (http:\/\/\S+)/.exec(running.out())?.[1];
      if (found) {
        clearInterval(timer);
        resolve(found);
      }
    }, 25);
    running.exited.then(({ code }) => {
      clearInterval(timer);
      reject(new Error(`metnos serve exited ${code}:\n${running.out()}\n${running.err()}`));
    });
  });
  return { ...running, url };
}

interface Turn {
  turnId: string;
  layer: string;
  finalKind: string;
  finalMessage: string;
}

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function ask(url: string, request: string): Promise<Turn> {
  const response = await post(url, '/api/turns', { request });
  expect(response.status).toBe(200);
  return (await response.json()) as Turn;
}

const intent = (verb: string, object: string, qualifiers: string[] = []) =>
  JSON.stringify({ verb, object, qualifiers });
const plan = (steps: unknown[], final: string) => JSON.stringify({ steps, final_message: final });
/** Requests memory learns first; under load they come back and are answered from memory. */
const REMEMBERED = [
  {
    request: 'read notes/diary.md and tell me the last 2 lines',
    intent: intent('read', 'file', ['diary']),
    plan: plan(
      [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
      'The last lines are:\n${step1.content.content}',
    ),
  },
  {
    request: 'what time is it in Tokyo',
    intent: intent('tell', 'time'),
    plan: plan(
      [{ tool: 'time_now', args: { timezone: 'Asia/Tokyo' } }],
      'In Tokyo it is ${step1.content.time}.',
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
 * New requests: made-up words, never the same twice. The scripted tiers answer in arrival
 * order and cannot tell concurrent turns apart, so every new request gets the same intent
 * and the same one-step plan.
 */
const NEW_INTENT = { text: intent('unknown', 'unknown'), delayMs: 10 };
const NEW_PLAN = {
  text: plan([{ tool: 'time_now', args: {} }], 'It is ${step1.content.time}.'),
  delayMs: 30,
};
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
/** Three made-up words; the last spells the count, so no request repeats. */
function newRequest(): string {
  const n = newCount++;
  const word = (bits: number) =>
    Array.from({ length: 4 }, (_, digit) => SYLLABLES[(bits >>> (4 * digit)) & 15]).join('');
  return `${word(Math.imul(n, 40503) & 0xffff)} ${word(Math.imul(n + 7919, 52429) & 0xffff)} ${word(n)}`;
}

/**
 * 16 clients until `stop`: half the picks a remembered request (then an up vote now and
 * then), half a new one (then a down vote now and then). Errors once the server is gone are
 * what a kill -9 does to its clients and are not counted.
 */
function load(url: string, stop: AbortSignal) {
  const counts = { turns: 0, feedback: 0, failed: 0 };
  const client = async () => {
    while (!stop.aborted) {
      try {
        const remembered = Math.random() < 0.5;
        const request = remembered
          ? REMEMBERED[Math.floor(Math.random() * REMEMBERED.length)]!.request
          : newRequest();
        const response = await post(url, '/api/turns', { request });
        if (response.status !== 200) {
          counts.failed++;
          continue;
        }
        const turn = (await response.json()) as Turn;
        counts.turns++;
        if (Math.random() < 0.3) {
          await post(url, `/api/turns/${turn.turnId}/feedback`, { kind: remembered ? 'up' : 'down' });
          counts.feedback++;
        }
      } catch {
        if (!stop.aborted) counts.failed++;
      }
    }
  };
  const clients = Promise.all(Array.from({ length: CLIENTS }, client));
  return { counts, clients };
}

/**
 * What is wrong with the data folder, as a list: every SQLite file must pass
 * `PRAGMA integrity_check`, every replay bundle and the approval store must parse,
 * every audit line must be a whole JSON line. Empty when all is well.
 */
function problemsIn(data: string, workspace: string): string[] {
  const problems: string[] = [];
  const sqlite = readdirSync(data).filter((name) => /\.(sqlite|db|lock)$/.test(name));
  for (const name of sqlite) {
    try {
      const check = readStoreFile(join(data, name), (db) => db.pragma('integrity_check', { simple: true }));
      if (check !== 'ok') problems.push(`${name}: integrity_check says ${String(check).slice(0, 200)}`);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  const replay = join(data, 'replay');
  for (const name of existsSync(replay) ? readdirSync(replay) : []) {
    // a bundle being written when the kill came is a temp file, never read, never a bundle
    if (/\.json\.\d+\.tmp$/.test(name)) continue;
    try {
      const bundle = JSON.parse(readFileSync(join(replay, name), 'utf8')) as { turnId?: unknown };
      if (`${bundle.turnId}.json` !== name) problems.push(`replay/${name}: not the bundle of its turn`);
    } catch (error) {
      problems.push(`replay/${name}: ${(error as Error).message}`);
    }
  }
  for (const name of readdirSync(data).filter((file) => file.endsWith('.json'))) {
    try {
      JSON.parse(readFileSync(join(data, name), 'utf8'));
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  const audit = join(workspace, '.audit', 'executors');
  for (const name of existsSync(audit) ? readdirSync(audit).filter((file) => file.endsWith('.jsonl')) : []) {
    const lines = readFileSync(join(audit, name), 'utf8').split('\n').filter(Boolean);
    lines.forEach((line, index) => {
      try {
        JSON.parse(line);
      } catch {
        problems.push(`.audit/executors/${name}:${index + 1}: not a whole JSON line`);
      }
    });
  }
  return problems;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-serve-crash-'));
  workspaceDir = join(work, 'ws');
  dataDir = join(workspaceDir, 'data');
  configDir = join(work, 'config');
  await mkdir(join(work, 'home'), { recursive: true });
  fast = await startOllamaServer();
  wise = await startOllamaServer();
  const init = await run(['init', workspaceDir, '--no-key'], work);
  expect(init.code, init.err).toBe(0);
  token = (await readFile(join(configDir, 'server.token'), 'utf8')).trim();
  const tier = (url: string) =>
    `provider = "ollama"\nmodel = "qwen3:8b"\nbase_url = "${url}"\nthink = false\n`;
  await appendFile(
    join(workspaceDir, 'metnos.toml'),
    `\n[runtime]\ndata_dir = "data"\n\n[runtime.llm.fast]\n${tier(fast.url)}\n[runtime.llm.wise]\n${tier(wise.url)}`,
  );
  await mkdir(join(workspaceDir, 'workspace', 'notes'), { recursive: true });
  await writeFile(join(workspaceDir, 'workspace', 'notes', 'diary.md'), 'monday\ntuesday\nwednesday\n');
}, 120_000);

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await Promise.all([fast.close(), wise.close()]);
  await rm(work, { recursive: true, force: true });
});

describe('metnos serve killed with -9 under load', () => {
  it('leaves every store consistent, and the next server answers from memory', async () => {
    // memory learns the remembered requests, one at a time
    const teacher = await serve();
    for (const remembered of REMEMBERED) {
      fast.push({ text: remembered.intent });
      wise.push({ text: remembered.plan });
      const first = await ask(teacher.url, remembered.request);
      expect(first.finalKind, first.finalMessage).toBe('answer');
      expect((await ask(teacher.url, remembered.request)).layer).toBe('fastpath');
    }
    teacher.child.kill('SIGTERM');
    expect((await teacher.exited).code).toBe(0);

    // enough answers for every new request of every round; left-over ones are never used
    for (let i = 0; i < 3000; i++) {
      fast.push(NEW_INTENT);
      wise.push(NEW_PLAN);
    }
    const rounds: Array<{ turns: number; feedback: number; failed: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const server = await serve();
      const stop = new AbortController();
      const { counts, clients } = load(server.url, stop.signal);
      // killed at a different moment each round, always with turns and feedback under way
      const deadline = Date.now() + 10_000;
      while (counts.turns < 40 + round * 20 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
      // no store was set aside: every one opened from the file the last kill left
      expect(server.err()).not.toMatch(/^warning: /m);
      server.child.kill('SIGKILL');
      stop.abort();
      expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await clients;
      rounds.push({ ...counts });
    }
    for (const counts of rounds) {
      expect(counts.turns).toBeGreaterThanOrEqual(40);
      expect(counts.feedback).toBeGreaterThan(0);
      expect(counts.failed).toBe(0);
    }

    // every file as the last kill left it
    expect(problemsIn(dataDir, join(workspaceDir, 'workspace'))).toEqual([]);
    expect(
      readdirSync(join(dataDir, 'replay')).filter((name) => name.endsWith('.json')).length,
    ).toBeGreaterThan(100);

    // doctor: the stores open and check out
    const doctor = await run(['doctor', '--json']);
    expect(doctor.code, doctor.err).toBe(0);
    const stores = (JSON.parse(doctor.out) as { stores: Array<{ store: string; state: string }> }).stores;
    for (const store of ['fastpath', 'autopath', 'gaps'])
      expect(stores.find((finding) => finding.store === store)?.state, store).toBe('ok');
    expect(stores.filter((finding) => finding.state !== 'ok' && finding.state !== 'absent')).toEqual([]);

    // a fresh server starts at once (no stale claim) and answers the remembered requests from memory
    const fresh = await serve();
    const asked = fast.requests.length + wise.requests.length;
    for (const remembered of REMEMBERED) {
      const turn = await ask(fresh.url, remembered.request);
      expect(turn.finalKind, turn.finalMessage).toBe('answer');
      expect(turn.layer, remembered.request).toBe('fastpath');
    }
    expect(fast.requests.length + wise.requests.length).toBe(asked);

    // and a second server on the same data folder is refused while it runs, in one line
    const second = await run(['serve', '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.out).toBe('');
    expect(second.err.trim().split('\n')).toHaveLength(1);
    expect(second.err).toContain(
      `another metnos serve (pid ${fresh.child.pid}) owns the stores in ${dataDir}`,
    );
    fresh.child.kill('SIGTERM');
    expect((await fresh.exited).code).toBe(0);
  }, 60_000);

  it('the check above finds a damaged store and a half-written bundle', async () => {
    const scratch = join(work, 'scratch');
    cpSync(dataDir, scratch, { recursive: true });
    expect(problemsIn(scratch, join(workspaceDir, 'workspace'))).toEqual([]);
    const store = join(scratch, 'autopath.sqlite');
    truncateSync(store, Math.floor(readFileSync(store).length / 2));
    const bundle = readdirSync(join(scratch, 'replay')).find((name) => name.endsWith('.json'))!;
    const whole = readFileSync(join(scratch, 'replay', bundle), 'utf8');
    writeFileSync(join(scratch, 'replay', bundle), whole.slice(0, whole.length / 2));
    const problems = problemsIn(scratch, join(workspaceDir, 'workspace'));
    expect(problems.some((problem) => problem.startsWith('autopath.sqlite: '))).toBe(true);
    expect(problems.some((problem) => problem.startsWith(`replay/${bundle}: `))).toBe(true);
  });
});
