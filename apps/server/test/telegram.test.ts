import { afterEach, describe, expect, it } from 'vitest';
import {
  type ChannelReply,
  createTelegramChannel,
  createTelegramClient,
  NOTICES,
  splitMessage,
  TelegramApiError,
  type TelegramChannelOptions,
} from '../src/telegram/index.ts';
import { type FakeTelegram, startFakeTelegram } from './telegram-server.ts';

const TOKEN = '123456:AAE-s3cretTokenValue_xyz';
const ALLOWED = 42;
const OTHER_ALLOWED = 43;
const STRANGER = 7;
const HASH = 'ab'.repeat(32);

interface Harness {
  fake: FakeTelegram;
  logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  turns: Array<{ text: string; chatId: number; messageId: number }>;
  resolved: Array<{ approvalId: string; callHash: string; approved: boolean; chatId: number }>;
  channel: ReturnType<typeof createTelegramChannel>;
  stop: AbortController;
  running: Promise<void>;
}

const open: Harness[] = [];

afterEach(async () => {
  for (const harness of open.splice(0)) {
    harness.stop.abort();
    await harness.running;
    await harness.fake.close();
  }
});

async function start(
  answer: (text: string) => ChannelReply = (text) => ({ text: `you said: ${text}` }),
  resume: (approved: boolean) => ChannelReply | undefined = (approved) => ({
    text: approved ? 'sent' : 'not sent',
  }),
  extra: Partial<TelegramChannelOptions> = {},
): Promise<Harness> {
  const fake = await startFakeTelegram(TOKEN);
  const logs: Harness['logs'] = [];
  const turns: Harness['turns'] = [];
  const resolved: Harness['resolved'] = [];
  const channel = createTelegramChannel({
    client: createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl, requestTimeoutMs: 2000 }),
    allowedChatIds: [ALLOWED, OTHER_ALLOWED],
    handleTurn: async (input) => {
      turns.push(input);
      return answer(input.text);
    },
    resolveApproval: async (input) => {
      resolved.push(input);
      return resume(input.approved);
    },
    logger: {
      info: (message, fields) => logs.push({ level: 'info', message, fields }),
      warn: (message, fields) => logs.push({ level: 'warn', message, fields }),
    },
    pollTimeoutSeconds: 5,
    backoff: { initialMs: 10, maxMs: 40 },
    ...extra,
  });
  const stop = new AbortController();
  const running = channel.run(stop.signal);
  const harness = { fake, logs, turns, resolved, channel, stop, running };
  open.push(harness);
  return harness;
}

function keyboardOf(fake: FakeTelegram) {
  const withButtons = fake.sent.find((message) => message.reply_markup);
  const row = withButtons?.reply_markup?.inline_keyboard[0];
  if (!row) throw new Error('no buttons were sent');
  return { approve: row[0]!.callback_data, deny: row[1]!.callback_data };
}

describe('the Telegram channel', () => {
  it('answers a message from an allowed chat with the turn’s answer', async () => {
    const { fake, turns } = await start();
    fake.pushMessage(ALLOWED, 'hello there');
    await fake.waitFor(() => fake.sent.length === 1);
    expect(fake.sent[0]).toMatchObject({ chat_id: ALLOWED, text: 'you said: hello there' });
    expect(turns).toEqual([{ text: 'hello there', chatId: ALLOWED, messageId: expect.any(Number) }]);
  });

  it('gives a stranger nothing and logs the update once, by chat id, without its text', async () => {
    const { fake, turns, logs } = await start();
    fake.pushMessage(STRANGER, 'my secret words');
    fake.pushCallback(STRANGER, 'a.xxxxxxxxxxxx.yyyyyyyyyyyyyyyyyyyyyy');
    fake.pushMessage(ALLOWED, 'after');
    await fake.waitFor(() => fake.sent.length === 1);
    // Let another poll pass: the stranger's updates are confirmed, not seen again.
    await fake.waitFor(() => fake.waiting() === 1);
    expect(fake.sent.map((message) => message.chat_id)).toEqual([ALLOWED]);
    expect(fake.answered).toEqual([]);
    expect(turns.map((turn) => turn.chatId)).toEqual([ALLOWED]);
    const strangers = logs.filter((entry) => entry.fields?.chatId === STRANGER);
    expect(strangers).toHaveLength(2);
    expect(JSON.stringify(logs)).not.toContain('secret');
  });

  it('shows an approval as buttons; a valid press resolves it once, forged, foreign and replayed presses are refused', async () => {
    const { fake, resolved } = await start(() => ({
      text: 'I can send that.',
      approval: { approvalId: 'appr-1', callHash: HASH, tool: 'telegram_send', summary: 'send “hi” to you' },
    }));
    fake.pushMessage(ALLOWED, 'send hi');
    await fake.waitFor(() => fake.sent.length === 1);
    const { approve, deny } = keyboardOf(fake);
    expect(Buffer.byteLength(approve)).toBeLessThanOrEqual(64);
    expect(approve).not.toBe(deny);

    // Altered data: the deny button's MAC on an approve, and a MAC with one character changed.
    const [, key, mac] = approve.split('.') as [string, string, string];
    const denyMac = deny.split('.')[2]!;
    fake.pushCallback(ALLOWED, `a.${key}.${denyMac}`);
    fake.pushCallback(ALLOWED, `a.${key}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`);
    // A chat that is allowed but is not the one the approval was asked in.
    fake.pushCallback(OTHER_ALLOWED, approve);
    await fake.waitFor(() => fake.answered.length === 3);
    // Chats are answered side by side: the other chat's notice may come first.
    expect(fake.answered.map((answer) => answer.text).sort()).toEqual(
      [NOTICES.forged, NOTICES.forged, NOTICES.otherChat].sort(),
    );
    expect(resolved).toEqual([]);

    fake.pushCallback(ALLOWED, approve);
    await fake.waitFor(() => fake.sent.length === 2);
    expect(resolved).toEqual([{ approvalId: 'appr-1', callHash: HASH, approved: true, chatId: ALLOWED }]);
    expect(fake.answered[3]?.text).toBe('Approved.');
    expect(fake.sent[1]).toMatchObject({ chat_id: ALLOWED, text: 'sent' });

    fake.pushCallback(ALLOWED, approve);
    fake.pushCallback(ALLOWED, deny);
    await fake.waitFor(() => fake.answered.length === 6);
    expect(fake.answered.slice(4).map((answer) => answer.text)).toEqual([NOTICES.used, NOTICES.used]);
    expect(resolved).toHaveLength(1);
  });

  it('passes a deny press on as approved: false', async () => {
    const { fake, resolved } = await start(() => ({
      text: '',
      approval: { approvalId: 'appr-2', callHash: HASH, tool: 'fs_delete', summary: 'delete notes.txt' },
    }));
    fake.pushMessage(ALLOWED, 'delete my notes');
    await fake.waitFor(() => fake.sent.length === 1);
    fake.pushCallback(ALLOWED, keyboardOf(fake).deny);
    await fake.waitFor(() => fake.sent.length === 2);
    expect(resolved).toEqual([{ approvalId: 'appr-2', callHash: HASH, approved: false, chatId: ALLOWED }]);
    expect(fake.sent[1]?.text).toBe('not sent');
  });

  it('splits a long answer at Telegram’s limit, buttons on the last piece only', async () => {
    const long = `${'word '.repeat(1000)}\n${'x'.repeat(4100)}`;
    const { fake } = await start(() => ({
      text: long,
      approval: { approvalId: 'appr-3', callHash: HASH, tool: 'telegram_send', summary: 'send it' },
    }));
    fake.pushMessage(ALLOWED, 'say a lot');
    await fake.waitFor(() => fake.sent.length === 3, 3000);
    expect(fake.sent.every((message) => message.text.length <= 4096)).toBe(true);
    expect(fake.sent.map((message) => Boolean(message.reply_markup))).toEqual([false, false, true]);
    expect(fake.sent.map((message) => message.text).join('')).toContain('x'.repeat(4096));
  });

  it('delivers a schedule’s result to an allowed chat, split, and refuses any other chat', async () => {
    const { fake, channel } = await start();
    await channel.deliver(ALLOWED, 'y'.repeat(9000));
    expect(fake.sent.map((message) => message.text.length)).toEqual([4096, 4096, 808]);
    await expect(channel.deliver(STRANGER, 'hi')).rejects.toThrow(/not allowed/);
    expect(fake.sent).toHaveLength(3);
  });

  it('keeps polling through HTTP 500, garbage, a closed socket and an echoed URL, and never logs the token', async () => {
    const { fake, logs } = await start();
    fake.fail('http500', 1, 'getUpdates');
    fake.fail('garbage', 1, 'getUpdates');
    fake.fail('close', 1, 'getUpdates');
    fake.fail('echo404', 1, 'getUpdates');
    fake.pushMessage(ALLOWED, 'still there?');
    await fake.waitFor(() => fake.sent.length === 1);
    const warnings = logs.filter((entry) => entry.message.includes('polling failed'));
    expect(warnings).toHaveLength(4);
    expect(JSON.stringify(logs)).toContain('HTTP 500');
    expect(JSON.stringify(logs)).toContain('Not Found: /bot<token>/getUpdates');
    expect(JSON.stringify(logs)).not.toContain(TOKEN);

    // A send that fails loses that answer, not the loop.
    fake.fail('close', 1, 'sendMessage');
    fake.pushMessage(ALLOWED, 'one');
    fake.pushMessage(ALLOWED, 'two');
    await fake.waitFor(() => fake.sent.length === 2);
    expect(fake.sent[1]?.text).toBe('you said: two');
    expect(JSON.stringify(logs)).not.toContain(TOKEN);
  });

  it('stops polling promptly when its signal aborts', async () => {
    const { fake, stop, running } = await start(undefined, undefined, { pollTimeoutSeconds: 30 });
    await fake.waitFor(() => fake.waiting() === 1);
    const began = Date.now();
    stop.abort();
    await running;
    expect(Date.now() - began).toBeLessThan(5000); // well under the 30 s poll or 60 s backoff it cuts short
    const polls = fake.polls;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.polls).toBe(polls);
  });

  it('stops promptly while waiting out a backoff', async () => {
    const { fake, stop, running } = await start(undefined, undefined, {
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    fake.fail('http500', 1, 'getUpdates');
    await fake.waitFor(() => fake.polls >= 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const began = Date.now();
    stop.abort();
    await running;
    expect(Date.now() - began).toBeLessThan(5000); // well under the 30 s poll or 60 s backoff it cuts short
  });
});

describe('the Bot API client', () => {
  it('types each failure and keeps the token out of every message', async () => {
    const fake = await startFakeTelegram(TOKEN);
    try {
      const client = createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl, requestTimeoutMs: 2000 });
      const failure = async (fault: Parameters<FakeTelegram['fail']>[0]) => {
        fake.fail(fault);
        const error = await client.sendMessage({ chatId: ALLOWED, text: 'hi' }).catch((caught) => caught);
        expect(error).toBeInstanceOf(TelegramApiError);
        expect(`${error.message} ${error.stack} ${error.description ?? ''}`).not.toContain(TOKEN);
        return error as TelegramApiError;
      };
      expect(await failure('http500')).toMatchObject({ kind: 'http', status: 500 });
      expect(await failure('garbage')).toMatchObject({ kind: 'malformed' });
      expect(await failure('close')).toMatchObject({ kind: 'network' });
      const echoed = await failure('echo404');
      expect(echoed).toMatchObject({ kind: 'http', status: 404 });
      expect(echoed.message).toContain('/bot<token>/sendMessage');

      const wrong = createTelegramClient({ token: '999:wrong-token', baseUrl: fake.baseUrl });
      await expect(wrong.getUpdates({ timeout: 0 })).rejects.toMatchObject({ kind: 'http', status: 401 });

      const closed = createTelegramClient({
        token: TOKEN,
        baseUrl: 'http://127.0.0.1:1',
        requestTimeoutMs: 2000,
      });
      const refused = await closed.getUpdates({ timeout: 0 }).catch((caught) => caught);
      expect(refused).toMatchObject({ kind: 'network' });
      expect(refused.message).toContain('/bot<token>/getUpdates');
      expect(refused.message).not.toContain(TOKEN);
    } finally {
      await fake.close();
    }
  });

  it('long-polls: waits for an update, then confirms it with the offset', async () => {
    const fake = await startFakeTelegram(TOKEN);
    try {
      const client = createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl });
      const polled = client.getUpdates({ timeout: 5 });
      await fake.waitFor(() => fake.waiting() === 1);
      const id = fake.pushMessage(ALLOWED, 'ping');
      expect((await polled).map((update) => update.update_id)).toEqual([id]);
      expect(await client.getUpdates({ offset: id + 1, timeout: 0 })).toEqual([]);
      expect(await client.getUpdates({ timeout: 0 })).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('refuses a malformed token or base URL before any call', () => {
    expect(() => createTelegramClient({ token: 'a/b' })).toThrow(/token/);
    expect(() => createTelegramClient({ token: TOKEN, baseUrl: 'ftp://x' })).toThrow(/http/);
  });
});

describe('splitMessage', () => {
  it('keeps short text whole and cuts long text at a line break, a space, or the limit', () => {
    expect(splitMessage('hi')).toEqual(['hi']);
    expect(splitMessage('aaaa\nbbbb cc', 8)).toEqual(['aaaa', 'bbbb cc']);
    expect(splitMessage('aaaaa bbbbbbbb', 8)).toEqual(['aaaaa', 'bbbbbbbb']);
    expect(splitMessage('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('never cuts a surrogate pair', () => {
    const pieces = splitMessage(`abc${'😀'.repeat(3)}`, 4);
    expect(pieces.join('')).toBe(`abc${'😀'.repeat(3)}`);
    expect(pieces.every((piece) => !/[\uD800-\uDBFF]$/.test(piece))).toBe(true);
    expect(pieces.every((piece) => piece.length <= 4)).toBe(true);
  });
});
