// `metnos serve` as a person starts it: the checkout's bin/metnos in a child process, against a
// workspace `metnos init` made and a loopback model speaking the Ollama protocol.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');

let work: string;
let workspaceDir: string;
let configDir: string;
let token: string;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
const started: ChildProcess[] = [];

/** The environment of a person's shell: a home of its own, Node 24 first on PATH. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|METNOS_|XDG_)/.test(name)),
  );
  return {
    ...base,
    HOME: join(work, 'home'),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    METNOS_CONFIG_DIR: configDir,
    ...extra,
  };
}

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Running {
  const child = spawn(METNOS, args, {
    cwd: options.cwd ?? workspaceDir,
    env: options.env ?? env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

async function run(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const running = start(args, options);
  const { code } = await running.exited;
  return { code, out: running.out(), err: running.err() };
}

/** Starts `metnos serve --port 0` and waits for the line that names its URL. */
async function serve(extra: string[] = []): Promise<Running & { url: string }> {
  const running = start(['serve', '--port', '0', ...extra]);
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

function api(url: string, path: string, init: RequestInit & { auth?: string | null } = {}) {
  const { auth, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (auth !== null) headers.set('authorization', `Bearer ${auth ?? token}`);
  if (rest.body) headers.set('content-type', 'application/json');
  return fetch(`${url}${path}`, { ...rest, headers });
}

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-serve-'));
  workspaceDir = join(work, 'ws');
  configDir = join(work, 'config');
  await mkdir(join(work, 'home'), { recursive: true });
  model = await startOllamaServer();
  const init = await run(['init', workspaceDir, '--no-key'], { cwd: work });
  expect(init.err).toBe('');
  expect(init.code).toBe(0);
  const tokenPath = join(configDir, 'server.token');
  expect(init.out).toContain(`the server token: ${tokenPath} (mode 0600`);
  expect((await stat(tokenPath)).mode & 0o777).toBe(0o600);
  token = (await readFile(tokenPath, 'utf8')).trim();
  expect(init.out).not.toContain(token);
  await appendFile(
    join(workspaceDir, 'metnos.toml'),
    `
[runtime]
data_dir = "data"

[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
base_url = "${model.url}"
think = false
`,
  );
  await mkdir(join(workspaceDir, 'workspace', 'notes'), { recursive: true });
  await writeFile(join(workspaceDir, 'workspace', 'notes', 'diary.md'), 'monday\ntuesday\nwednesday\n');
}, 120_000);

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await model.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos serve', () => {
  it('asks every request for the token, answers a turn, and never prints the token', async () => {
    const server = await serve();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.out().trim().split('\n')).toHaveLength(1);

    const health = await api(server.url, '/api/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    expect((await api(server.url, '/api/health', { auth: null })).status).toBe(401);
    expect((await api(server.url, '/api/health', { auth: 'x'.repeat(43) })).status).toBe(401);

    // the scheduler runs in the server's process, with memory aging as a built-in
    const schedules = await api(server.url, '/api/schedules');
    expect(schedules.status).toBe(200);
    expect(JSON.stringify(await schedules.json())).toContain('memory_aging');
    // and the admin routes over this workspace's own stores, catalog, approvals, audit and checks
    const executors = await api(server.url, '/api/executors');
    expect(executors.status).toBe(200);
    expect(JSON.stringify(await executors.json())).toContain('fs_read');
    for (const path of ['/api/memory/fastpaths', '/api/approvals', '/api/doctor'])
      expect((await api(server.url, path)).status, path).toBe(200);
    expect((await api(server.url, '/api/audit?day=2026-02-30')).status).toBe(400);

    const turn = await api(server.url, '/api/turns', {
      method: 'POST',
      body: JSON.stringify({ request: 'what time is it?' }),
    });
    expect(turn.status).toBe(200);
    const body = (await turn.json()) as { finalKind: string; finalMessage: string; turnId: string };
    expect(body.finalKind).toBe('answer');
    expect(body.finalMessage).toMatch(/It is \d{2}:\d{2}/);

    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.err()).not.toMatch(/warning/);
    expect(`${server.out()}${server.err()}`).not.toContain(token);
  });

  it('on SIGTERM lets a turn under way finish, answers its client, then exits 0', async () => {
    const plan = JSON.stringify({
      steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
      final_message: 'The last lines are:\n${step1.content.content}',
    });
    model.push(
      { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' },
      { text: plan, delayMs: 1500 },
    );
    const server = await serve();
    const before = model.requests.length;
    const answer = api(server.url, '/api/turns', {
      method: 'POST',
      body: JSON.stringify({ request: 'read notes/diary.md and tell me the last 2 lines' }),
    });
    // the plan's model call is under way (and slow) when the signal comes
    await until(() => model.requests.length >= before + 2, 'the plan request to reach the model');
    server.child.kill('SIGTERM');
    const response = await answer;
    expect(response.status).toBe(200);
    const body = (await response.json()) as { finalKind: string; finalMessage: string };
    expect(body.finalKind).toBe('answer');
    expect(body.finalMessage).toContain('The last lines are:\ntuesday\nwednesday');
    const answered = Date.now();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // it stops once the answer is out, not when the client's kept-alive connection times out
    expect(Date.now() - answered).toBeLessThan(3500); // a kept-alive connection would hold it 5 s
    expect(server.err()).toContain('SIGTERM, stopping: waiting for 1 turn under way');
    // no new connection is taken once it stops
    await expect(fetch(`${server.url}/api/health`)).rejects.toThrow();
  });

  it('without a token file stops at once with exit 2 and says to run metnos init', async () => {
    const result = await run(['serve', '--port', '0'], {
      env: env({ METNOS_CONFIG_DIR: join(work, 'empty') }),
    });
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toContain(`no server token at ${join(work, 'empty', 'server.token')}`);
    expect(result.err).toContain('run `metnos init`');
  });

  it('listens beyond loopback only when --host says so, and warns', async () => {
    const server = await serve(['--host', '0.0.0.0']);
    expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const port = new URL(server.url).port;
    expect((await api(`http://127.0.0.1:${port}`, '/api/health')).status).toBe(200);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(server.err()).toMatch(/^warning: listening on 0\.0\.0\.0, not only this machine/m);
  });
});
