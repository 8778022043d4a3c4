import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ServerEngine } from '../src/app.ts';
import type { ApiRouteDeps } from '../src/routes/api.ts';
import { startServer } from '../src/serve.ts';

export const TOKEN = 'r'.repeat(43);

/** These tests run no turn: an engine that says so if asked. */
const noEngine: ServerEngine = {
  runTurn: () => Promise.reject(new Error('no turns in route tests')),
  feedback: () => Promise.reject(new Error('no turns in route tests')),
};

export const scratch = (prefix: string) => mkdtemp(join(tmpdir(), `metnos-${prefix}-`));

/** A server on a loopback port with `api` mounted, and a `call` that sends the token. */
export async function serveApi(api: ApiRouteDeps) {
  const server = await startServer({ token: TOKEN, engine: noEngine, port: 0, api });
  const call = (path: string, init: RequestInit & { json?: unknown } = {}, token = TOKEN) =>
    fetch(`${server.url}${path}`, {
      ...init,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(init.headers ?? {}),
      },
    });
  return { server, call };
}

/** A refusal: the status, `{ error, message }`, and no stack trace. */
export async function expectRefusal(response: Response, status: number, error?: string) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const body = JSON.parse(text) as { error: string; message: string };
  expect(typeof body.message).toBe('string');
  if (error) expect(body.error).toBe(error);
  expect(text).not.toMatch(/at .*\.[tj]s:\d+|node_modules/);
  return body;
}
