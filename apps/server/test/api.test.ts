import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createCatalog, createInvoker, createProcessRunner, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createGapLog } from '@metnos/planner';
import { createScriptedModel } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../src/serve.ts';

const TOKEN = 't'.repeat(43);
let root: string;
let server: Awaited<ReturnType<typeof startServer>>;
let closeStores: () => void;

const readPlan = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
  final_message: '${step1.content}',
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-server-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'diary.md'), 'dear diary\n');
  const key = await generateSigningKey();
  await writeSignedExecutor({
    root: join(root, 'executors'),
    name: 'fs_read',
    key,
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { return ok(readFileSync(join(ctx.workspace, args.path), 'utf8')); } });
`,
    schema: {
      definitions: {
        Input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        Output: { type: 'string' },
      },
    },
  });
  const catalog = createCatalog({ root: join(root, 'executors'), trustedKeys: [key] });
  await catalog.load();
  const fastpath = createFastpathStore({ path: join(root, 'fastpath.sqlite') });
  const autopath = createAutopathStore({ path: join(root, 'autopath.sqlite') });
  const gaps = createGapLog({ path: join(root, 'gaps.sqlite') });
  closeStores = () => {
    fastpath.close();
    autopath.close();
    gaps.close();
  };
  const { createDefaultEmbedder } = (await import('@metnos/autopath')) as unknown as {
    createDefaultEmbedder: () => { id: string; embed(texts: string[]): Promise<Float32Array[]> };
  };
  const engine = createEngine({
    catalog,
    invoker: createInvoker({ catalog, runner: createProcessRunner() }),
    reviewer: { evaluate: () => ({ approved: true, reason: 'ok', score: 1, blocked_by: null }) },
    models: {
      fast: createScriptedModel([]),
      wise: createScriptedModel([{ text: readPlan }, { text: readPlan }]),
    },
    embedder: createDefaultEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace,
  });
  server = await startServer({ token: TOKEN, engine, port: 0 });
});

afterAll(async () => {
  await server?.close();
  closeStores?.();
});

const call = (path: string, init: RequestInit = {}, token = TOKEN) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(init.headers ?? {}),
    },
  });

describe('the server API', () => {
  it('listens on loopback and refuses every route without the bearer token', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const path of ['/api/health', '/api/turns', '/nowhere']) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST' });
      expect(response.status).toBe(401);
    }
    expect((await call('/api/health', {}, 'x'.repeat(43))).status).toBe(401);
    expect(await (await call('/api/health')).json()).toMatchObject({ ok: true });
  });

  it('answers a turn as JSON, then from memory, and takes feedback through the engine', async () => {
    const first = await (
      await call('/api/turns', { method: 'POST', body: JSON.stringify({ request: 'read diary.md' }) })
    ).json();
    expect(first).toMatchObject({ layer: 'engine', finalKind: 'answer', finalMessage: 'dear diary\n' });
    const again = (await (
      await call('/api/turns', { method: 'POST', body: JSON.stringify({ request: 'read diary.md' }) })
    ).json()) as { turnId: string };
    expect(again).toMatchObject({ layer: 'fastpath', modelCalls: 0 });
    const down = await call(`/api/turns/${again.turnId}/feedback`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'down' }),
    });
    expect(down.status).toBe(200);
    expect(await down.json()).toMatchObject({ kind: 'down' });
    expect(
      (await call('/api/turns/none/feedback', { method: 'POST', body: JSON.stringify({ kind: 'up' }) }))
        .status,
    ).toBe(404);
  });

  it('streams a turn as server-sent events ending with the answer', async () => {
    const response = await call('/api/turns', {
      method: 'POST',
      headers: { accept: 'text/event-stream' },
      body: JSON.stringify({ request: 'read diary.md' }),
    });
    const text = await response.text();
    const names = [...text.matchAll(/^event: (\w+)/gm)].map((match) => match[1]);
    expect(names[0]).toBe('started');
    expect(names.at(-1)).toBe('answer');
    expect(names).toContain('layer');
    expect(names.indexOf('layer')).toBeLessThan(names.indexOf('answer'));
  });

  it('refuses bad bodies with a clear error and no stack trace', async () => {
    const cases = [
      'not json',
      '{}',
      JSON.stringify({ request: '' }),
      JSON.stringify({ request: 'x', __proto__: 1, extra: 1 }),
      JSON.stringify({ request: 'x'.repeat(70_000) }),
    ];
    for (const body of cases) {
      const response = await call('/api/turns', { method: 'POST', body });
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: string };
      expect(json.error).toBe('invalid');
      expect(JSON.stringify(json)).not.toMatch(/at .*\.ts:\d+/);
    }
    expect(
      (await call('/api/turns/..%2F..%2Fetc/feedback', { method: 'POST', body: '{"kind":"up"}' })).status,
    ).toBe(400);
  });
});
