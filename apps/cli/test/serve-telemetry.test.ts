// `metnos serve` with and without [telemetry]: the checkout's bin/metnos in a child process, over a
// workspace `metnos init` made, a loopback model speaking the Ollama protocol and a loopback OTLP
// collector that records what it is sent.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');
const REQUEST = 'read notes/diary.md and tell me the last 2 lines';

let work: string;
let workspaceDir: string;
let configDir: string;
let token: string;
let baseToml: string;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
let collector: Server;
let collectorUrl: string;
const posts: Array<{ path: string; body: string }> = [];
const started: ChildProcess[] = [];

function env(): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|METNOS_|XDG_|OTEL_)/.test(name)),
  );
  return {
    ...base,
    HOME: join(work, 'home'),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    METNOS_CONFIG_DIR: configDir,
  };
}

function start(args: string[], cwd = workspaceDir) {
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

async function serve() {
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

/** The model's two answers for {@link REQUEST}: its intent, then a one-step plan reading the file. */
function script() {
  model.push(
    { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' },
    {
      text: JSON.stringify({
        steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
        final_message: 'The last lines are:\n${step1.content.content}',
      }),
    },
  );
}

async function turn(url: string) {
  const response = await fetch(`${url}/api/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ request: REQUEST }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { finalKind: string };
}

function spanNames(): string[] {
  return posts.flatMap((post) =>
    (
      JSON.parse(post.body) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
      }
    ).resourceSpans.flatMap((resource) =>
      resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)),
    ),
  );
}

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts.push({ path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  work = await mkdtemp(join(tmpdir(), 'metnos-serve-otel-'));
  workspaceDir = join(work, 'ws');
  configDir = join(work, 'config');
  await mkdir(join(work, 'home'), { recursive: true });
  model = await startOllamaServer();
  const init = start(['init', workspaceDir, '--no-key'], work);
  expect((await init.exited).code).toBe(0);
  token = (await readFile(join(configDir, 'server.token'), 'utf8')).trim();
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
  baseToml = await readFile(join(workspaceDir, 'metnos.toml'), 'utf8');
  await mkdir(join(workspaceDir, 'workspace', 'notes'), { recursive: true });
  await writeFile(join(workspaceDir, 'workspace', 'notes', 'diary.md'), 'monday\ntuesday\nwednesday\n');
}, 120_000);

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await model?.close();
  await new Promise((resolve) => collector?.close(resolve));
  await rm(work, { recursive: true, force: true });
});

describe('metnos serve and [telemetry]', () => {
  it('without [telemetry] sets nothing up and sends nothing', async () => {
    await writeFile(join(workspaceDir, 'metnos.toml'), baseToml);
    script();
    const server = await serve();
    expect((await turn(server.url)).finalKind).toBe('answer');
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.err()).not.toContain('telemetry');
    expect(posts).toEqual([]);
  });

  it("with [telemetry] sends the turn's spans to the collector, flushed on exit, without the request", async () => {
    await writeFile(
      join(workspaceDir, 'metnos.toml'),
      `${baseToml}\n[telemetry]\notlp_endpoint = "${collectorUrl}/v1/traces"\nservice_name = "metnos-serve-test"\n`,
    );
    // memory starts empty again, so the Proposer plans and the plan runs a step
    await rm(join(workspaceDir, 'data'), { recursive: true, force: true });
    script();
    const server = await serve();
    expect(server.err()).toContain(`telemetry: sending traces to ${collectorUrl}/v1/traces`);
    expect((await turn(server.url)).finalKind).toBe('answer');
    // the batch is sent every 5 s at most; SIGTERM must not lose it
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((post) => post.path === '/v1/traces')).toBe(true);
    const names = spanNames();
    expect(names).toContain('metnos.turn');
    expect(names).toContain('metnos.step 1');
    const payload = posts.map((post) => post.body).join('\n');
    expect(payload).toContain('metnos-serve-test');
    for (const secret of ['diary', 'last 2 lines', 'tuesday', 'wednesday'])
      expect(payload).not.toContain(secret);
  });

  it('refuses an endpoint that is not http(s) before starting', async () => {
    await writeFile(
      join(workspaceDir, 'metnos.toml'),
      `${baseToml}\n[telemetry]\notlp_endpoint = "ftp://127.0.0.1/v1/traces"\n`,
    );
    const server = start(['serve', '--port', '0']);
    const { code } = await server.exited;
    expect(code).not.toBe(0);
    expect(server.err()).toContain('telemetry.otlp_endpoint');
  });
});
