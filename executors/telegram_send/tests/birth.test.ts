import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const TOKEN = '123456:TEST-token_abcdefghijklmnop';
const CHAT = '987654321';
const dir = join(import.meta.dirname, '..');

/** A loopback server that speaks the part of the Bot API telegram_send uses. */
let server: Server;
let received: Array<{ path: string; body: Record<string, unknown> }> = [];
let executor: ReturnType<typeof birth>;
let unreachable: ReturnType<typeof birth>;
let config: Record<string, unknown>;
let deadConfig: Record<string, unknown>;

beforeAll(async () => {
  server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => {
      raw += chunk.toString('utf8');
    });
    request.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      received.push({ path: request.url ?? '', body });
      const answer = (status: number, payload: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      if (request.method !== 'POST' || request.url !== `/bot${TOKEN}/sendMessage`) {
        answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      } else if (body.text === 'flood') {
        answer(429, {
          ok: false,
          error_code: 429,
          description: 'Too Many Requests: retry after 17',
          parameters: { retry_after: 17 },
        });
      } else if (body.chat_id !== CHAT) {
        answer(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
      } else {
        answer(200, {
          ok: true,
          result: { message_id: 4242, date: 1_780_000_000, chat: { id: Number(CHAT) }, text: body.text },
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port: deadPort } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));

  // api.telegram.org is the profile's only domain; the operator maps it to the loopback server.
  const hostOverrides = { 'api.telegram.org': `127.0.0.1:${port}` };
  const deadOverrides = { 'api.telegram.org': `127.0.0.1:${deadPort}` };
  executor = birth(dir, { hostOverrides });
  unreachable = birth(dir, { hostOverrides: deadOverrides });
  const base = { base_url: 'http://api.telegram.org', bot_token: TOKEN, chat_id: CHAT };
  config = { ...base, host_overrides: hostOverrides };
  deadConfig = { ...base, host_overrides: deadOverrides };
});

beforeEach(() => {
  received = [];
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('telegram_send birth', () => {
  it('sends the text to the configured chat and returns the message id', async () => {
    const result = await executor.invoke(
      { text: 'Ricordati il latte 🥛', parse_mode: 'HTML', silent: true },
      { config },
    );
    expect(result).toMatchObject({
      ok: true,
      content: { message_id: 4242, sent_at: '2026-05-28T20:26:40.000Z', characters: 20 },
    });
    expect(received).toEqual([
      {
        path: `/bot${TOKEN}/sendMessage`,
        body: {
          chat_id: CHAT,
          text: 'Ricordati il latte 🥛',
          parse_mode: 'HTML',
          disable_notification: true,
          link_preview_options: { is_disabled: false },
        },
      },
    ]);
  });

  it('never takes the recipient or the token from the arguments', async () => {
    const result = await executor.invoke({ text: 'hi', chat_id: '1', bot_token: 'x' }, { config });
    expect(result).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect(received).toEqual([]);
  });

  it('reports RateLimited with the retry delay, Unauthorized and Rejected', async () => {
    const limited = await executor.invoke({ text: 'flood' }, { config });
    expect(limited).toMatchObject({
      ok: false,
      error: { class: 'RateLimited' },
      metadata: { retry_after: 17 },
    });
    const unauthorized = await executor.invoke(
      { text: 'hi' },
      { config: { ...config, bot_token: '999:wrong-token-value' } },
    );
    expect(unauthorized).toMatchObject({ ok: false, error: { class: 'Unauthorized' } });
    expect(JSON.stringify(unauthorized)).not.toContain('wrong-token-value');
    const rejected = await executor.invoke({ text: 'hi' }, { config: { ...config, chat_id: '111' } });
    expect(rejected).toMatchObject({
      ok: false,
      error: { class: 'Rejected', message: expect.stringContaining('chat not found') },
    });
  });

  it('fails with NotConfigured without a token or chat, and with Network when the API is unreachable', async () => {
    expect(await executor.invoke({ text: 'hi' }, { config: { chat_id: CHAT } })).toMatchObject({
      ok: false,
      error: { class: 'NotConfigured' },
    });
    expect(await executor.invoke({ text: 'hi' }, { config: { bot_token: TOKEN } })).toMatchObject({
      ok: false,
      error: { class: 'NotConfigured' },
    });
    const down = await unreachable.invoke({ text: 'hi' }, { config: deadConfig });
    expect(down).toMatchObject({ ok: false, error: { class: 'Network' } });
    expect(JSON.stringify(down)).not.toContain(TOKEN);
  });
});
