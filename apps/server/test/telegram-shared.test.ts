// The server's Telegram channel and the seed telegram_send executor speak to the Bot API through one
// client, @metnos/executor-sdk/telegram: the channel imports it directly, the executor through the
// harness inside the real sandbox. Both paths meet the same loopback Bot API here.
import { readFile, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { RUNTIME_DIR } from '@metnos/executor-sdk';
import * as shared from '@metnos/executor-sdk/telegram';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as server from '../src/index.ts';
import { type FakeTelegram, startFakeTelegram } from './telegram-server.ts';

const TOKEN = '123456:AAE-sharedClientToken_xyz';
const CHAT = 42;
const EXECUTOR = join(import.meta.dirname, '..', '..', '..', 'executors', 'telegram_send');

let fake: FakeTelegram;
let executor: ReturnType<typeof birth>;
let config: Record<string, unknown>;

beforeAll(async () => {
  fake = await startFakeTelegram(TOKEN);
  // api.telegram.org is telegram_send's only allowed domain; the egress proxy maps it to the fake
  const hostOverrides = { 'api.telegram.org': new URL(fake.baseUrl).host };
  executor = birth(EXECUTOR, { hostOverrides });
  config = {
    base_url: 'http://api.telegram.org',
    bot_token: TOKEN,
    chat_id: CHAT,
    host_overrides: hostOverrides,
  };
});

afterAll(() => fake.close());

function channel() {
  return server.createTelegramChannel({
    client: server.createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl, requestTimeoutMs: 2000 }),
    allowedChatIds: [CHAT],
    handleTurn: async ({ text }) => ({ text }),
    resolveApproval: async () => undefined,
    logger: { info: () => {}, warn: () => {} },
  });
}

describe('one Bot API client for the channel and telegram_send', () => {
  it('is the SDK runtime file the harness maps @metnos/executor-sdk/telegram to', async () => {
    const resolved = createRequire(import.meta.url).resolve('@metnos/executor-sdk/telegram');
    expect(await realpath(resolved)).toBe(await realpath(join(RUNTIME_DIR, 'telegram.mjs')));
    expect(server.createTelegramClient).toBe(shared.createTelegramClient);
    expect(server.TelegramApiError).toBe(shared.TelegramApiError);
    expect(server.splitMessage).toBe(shared.splitMessage);

    // telegram_send keeps no HTTP code of its own: its only imports are the two SDK runtime modules
    const code = await readFile(join(EXECUTOR, 'main.ts'), 'utf8');
    const imports = [...code.matchAll(/^import\s[^;]*?from\s+'([^']+)';/gms)].map((match) => match[1]);
    expect(imports.sort()).toEqual(['@metnos/executor-sdk/define', '@metnos/executor-sdk/telegram']);
  });

  it('sends from the sandboxed executor and from the channel as the same client', async () => {
    const sent = await executor.invoke({ text: 'from telegram_send' }, { config });
    expect(sent).toMatchObject({ ok: true, content: { message_id: expect.any(Number) } });
    await channel().deliver(CHAT, 'from the channel');

    const sends = fake.calls.filter((call) => call.method === 'sendMessage');
    expect(sends.map((call) => call.body.text)).toEqual(['from telegram_send', 'from the channel']);
    expect(sends.map((call) => call.userAgent)).toEqual([
      shared.TELEGRAM_USER_AGENT,
      shared.TELEGRAM_USER_AGENT,
    ]);
    expect(fake.sent.map((message) => message.chat_id)).toEqual([CHAT, CHAT]);
  });

  it('meets the same failure the same way: a 404 echoing the URL is typed, the token redacted on both paths', async () => {
    fake.fail('echo404', 1, 'sendMessage');
    const refused = await executor.invoke({ text: 'hi' }, { config });
    expect(refused).toMatchObject({ ok: false, error: { class: 'Unauthorized' } });
    expect(JSON.stringify(refused)).toContain('/bot<token>/sendMessage');
    expect(JSON.stringify(refused)).not.toContain(TOKEN);

    fake.fail('echo404', 1, 'sendMessage');
    const client = server.createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl });
    const error = await client.sendMessage({ chatId: CHAT, text: 'hi' }).catch((caught: unknown) => caught);
    expect(shared.TelegramApiError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      kind: 'http',
      status: 404,
      description: 'Not Found: /bot<token>/sendMessage',
    });
    expect(JSON.stringify(error) + String(error)).not.toContain(TOKEN);
  });
});
