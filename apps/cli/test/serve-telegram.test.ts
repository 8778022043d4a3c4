// `metnos serve` with [channels.telegram] and the approvals flow, as a person runs it: the checkout's
// bin/metnos in a child process over a workspace `metnos init` made (the signed seed executors, run in
// the sandbox), a loopback model speaking the Ollama protocol, and a loopback Bot API.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTelegram, startFakeTelegram } from '../../server/test/telegram-server.ts';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');
const BOT_TOKEN = '123456:test-bot-token-for-the-loopback-api';
const TOKEN_ENV = 'METNOS_SERVE_TEST_BOT';
const CHAT = 4242;
const STRANGER = 777;

let work: string;
let workspaceDir: string;
let configDir: string;
let token: string;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
let bot: FakeTelegram;
const started: ChildProcess[] = [];

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
    env: options.env ?? env({ [TOKEN_ENV]: BOT_TOKEN }),
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

function api(url: string, path: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('authorization', `Bearer ${token}`);
  if (json !== undefined) headers.set('content-type', 'application/json');
  return fetch(`${url}${path}`, {
    ...rest,
    headers,
    ...(json !== undefined ? { method: rest.method ?? 'POST', body: JSON.stringify(json) } : {}),
  });
}

/** The model's answers for one write request: its intent, then a plan of one fs_write. */
function pushWritePlan(path: string, content: string, finalMessage: string) {
  model.push(
    { text: '{"verb":"write","object":"file","qualifiers":[]}' },
    {
      text: JSON.stringify({
        steps: [{ tool: 'fs_write', args: { path, content } }],
        final_message: finalMessage,
      }),
    },
  );
}

const sentTo = (chatId: number) => bot.sent.filter((message) => message.chat_id === chatId);
const inWorkspace = (path: string) => join(workspaceDir, 'workspace', path);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-serve-telegram-'));
  workspaceDir = join(work, 'ws');
  configDir = join(work, 'config');
  await mkdir(join(work, 'home'), { recursive: true });
  model = await startOllamaServer();
  bot = await startFakeTelegram(BOT_TOKEN);
  const init = start(['init', workspaceDir, '--no-key'], { cwd: work, env: env() });
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

[channels.telegram]
bot_token_env = "${TOKEN_ENV}"
allowed_chat_ids = [${CHAT}]
base_url = "${bot.baseUrl}"
`,
  );
  await mkdir(inWorkspace('notes'), { recursive: true });
}, 120_000);

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(async () => {
  await model?.close();
  await bot?.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos serve with [channels.telegram]', () => {
  it('stops at once, in one line and exit 2, when the variable named by bot_token_env is not set', async () => {
    const running = start(['serve', '--port', '0'], { env: env() });
    expect((await running.exited).code).toBe(2);
    expect(running.out()).toBe('');
    expect(running.err().trim().split('\n')).toHaveLength(1);
    expect(running.err()).toContain(`the environment variable ${TOKEN_ENV} (bot_token_env) is not set`);
  });

  it('answers an allowed chat, ignores others, asks approval with buttons, refuses a forged press, runs the approved call', async () => {
    const server = await serve();
    await bot.waitFor(() => bot.waiting() > 0, 20_000);

    // an allowed chat asks and gets the answer; another chat gets nothing
    bot.pushMessage(STRANGER, 'what time is it?');
    bot.pushMessage(CHAT, 'what time is it?');
    await bot.waitFor(() => sentTo(CHAT).length === 1, 30_000);
    expect(sentTo(CHAT)[0]!.text).toMatch(/It is \d{2}:\d{2}/);
    expect(sentTo(STRANGER)).toHaveLength(0);

    // a request whose plan writes a file: the call needs approval, shown as two buttons
    pushWritePlan('notes/from-chat.md', 'written from the chat\n', 'Saved notes/from-chat.md.');
    bot.pushMessage(CHAT, 'save "written from the chat" to notes/from-chat.md');
    await bot.waitFor(() => sentTo(CHAT).length === 2, 30_000);
    const asking = sentTo(CHAT)[1]!;
    expect(asking.text).toContain('Approve fs_write?');
    const [approve, deny] = asking.reply_markup!.inline_keyboard[0]!;
    expect(approve!.text).toBe('Approve');
    expect(deny!.text).toBe('Deny');
    await expect(stat(inWorkspace('notes/from-chat.md'))).rejects.toMatchObject({ code: 'ENOENT' });

    // the same call is listed over HTTP, bound to its hash
    const listed = (await (await api(server.url, '/api/approvals')).json()) as {
      approvals: Array<{ id: string; tool: string; args: unknown; callHash: string }>;
    };
    expect(listed.approvals).toHaveLength(1);
    expect(listed.approvals[0]).toMatchObject({
      tool: 'fs_write',
      args: { path: 'notes/from-chat.md', content: 'written from the chat\n' },
    });

    // a forged press (its MAC altered) is refused and runs nothing
    const data = approve!.callback_data;
    const forged = `${data.slice(0, -1)}${data.endsWith('A') ? 'B' : 'A'}`;
    bot.pushCallback(CHAT, forged);
    await bot.waitFor(() => bot.answered.length === 1);
    expect(bot.answered[0]!.text).toBe('This button does not match its approval.');
    await expect(stat(inWorkspace('notes/from-chat.md'))).rejects.toMatchObject({ code: 'ENOENT' });

    // the real press approves it: the turn runs again, the file is written, the answer arrives
    pushWritePlan('notes/from-chat.md', 'written from the chat\n', 'Saved notes/from-chat.md.');
    bot.pushCallback(CHAT, data);
    await bot.waitFor(() => sentTo(CHAT).length === 3, 30_000);
    expect(bot.answered[1]!.text).toBe('Approved.');
    expect(sentTo(CHAT)[2]!.text).toBe('Saved notes/from-chat.md.');
    expect(sentTo(CHAT)[2]!.reply_markup).toBeUndefined();
    expect(await readFile(inWorkspace('notes/from-chat.md'), 'utf8')).toBe('written from the chat\n');
    // decided: no longer listed, and a second press is refused
    expect(((await (await api(server.url, '/api/approvals')).json()) as { approvals: [] }).approvals).toEqual(
      [],
    );
    bot.pushCallback(CHAT, data);
    await bot.waitFor(() => bot.answered.length === 3);
    expect(bot.answered[2]!.text).toBe('This approval was already answered.');

    // a schedule whose channel is telegram delivers its result to the chat
    const created = await api(server.url, '/api/schedules', {
      json: {
        target: { kind: 'request', text: 'what time is it?' },
        cadence: 'manual',
        channel: 'telegram',
        confirm: true,
      },
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { schedule: { id: string } }).schedule;
    expect((await api(server.url, `/api/schedules/${id}/run-now`, { method: 'POST' })).status).toBe(200);
    await bot.waitFor(() => sentTo(CHAT).length === 4, 30_000);
    expect(sentTo(CHAT)[3]!.text).toMatch(/It is \d{2}:\d{2}/);

    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(`${server.out()}${server.err()}`).not.toContain(BOT_TOKEN);
    expect(server.err()).not.toContain('written from the chat');
  });

  it('over HTTP: lists the pending call, refuses the wrong hash with 409, runs it with the right one', async () => {
    const server = await serve();
    pushWritePlan('notes/from-http.md', 'written over http\n', 'Saved notes/from-http.md.');
    const turn = await api(server.url, '/api/turns', {
      json: { request: 'save "written over http" to notes/from-http.md' },
    });
    const body = (await turn.json()) as { finalKind: string; pending?: { approvalId: string } };
    expect(body.finalKind).toBe('pending_approval');
    const listed = (await (await api(server.url, '/api/approvals')).json()) as {
      approvals: Array<{ id: string; tool: string; callHash: string; turnId: string }>;
    };
    const waiting = listed.approvals.find((entry) => entry.id === body.pending!.approvalId)!;
    expect(waiting).toMatchObject({ tool: 'fs_write' });
    expect(waiting.callHash).toMatch(/^[0-9a-f]{64}$/);

    const wrong = await api(server.url, `/api/approvals/${waiting.id}`, {
      json: { decision: 'approve', callHash: '0'.repeat(64) },
    });
    expect(wrong.status).toBe(409);
    expect(await wrong.json()).toMatchObject({ error: 'hash_mismatch' });
    await expect(stat(inWorkspace('notes/from-http.md'))).rejects.toMatchObject({ code: 'ENOENT' });

    pushWritePlan('notes/from-http.md', 'written over http\n', 'Saved notes/from-http.md.');
    const right = await api(server.url, `/api/approvals/${waiting.id}`, {
      json: { decision: 'approve', callHash: waiting.callHash },
    });
    expect(right.status).toBe(200);
    const decided = (await right.json()) as {
      decision: string;
      resumed: { finalKind: string; finalMessage: string; steps: Array<{ tool: string; ok: boolean }> };
    };
    expect(decided.decision).toBe('approve');
    expect(decided.resumed).toMatchObject({
      finalKind: 'answer',
      finalMessage: 'Saved notes/from-http.md.',
      steps: [{ tool: 'fs_write', ok: true }],
    });
    expect(await readFile(inWorkspace('notes/from-http.md'), 'utf8')).toBe('written over http\n');
    // an approval works once
    const again = await api(server.url, `/api/approvals/${waiting.id}`, {
      json: { decision: 'approve', callHash: waiting.callHash },
    });
    expect(again.status).toBe(404);

    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
