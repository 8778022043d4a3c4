import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fault the next Bot API calls meet instead of an answer. */
export type Fault = 'http500' | 'garbage' | 'close' | 'echo404';

/** A call the bot made, as the server read it. */
export interface Recorded {
  method: string;
  body: Record<string, unknown>;
  /** The `user-agent` header the call came with. */
  userAgent: string | undefined;
}

/**
 * A loopback stand-in for the Telegram Bot API subset the channel speaks
 * (`getUpdates` with offset and timeout, `sendMessage`, `answerCallbackQuery`)
 * on 127.0.0.1 with a random port. Tests push updates in and read what the bot
 * sent; `fail` makes the next calls meet a fault.
 */
export interface FakeTelegram {
  baseUrl: string;
  /** Every call with the right token, in order. */
  calls: Recorded[];
  /** Every `sendMessage` body, in order. */
  sent: Array<{
    chat_id: number;
    text: string;
    reply_markup?: { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> };
  }>;
  /** Every `answerCallbackQuery` body, in order. */
  answered: Array<{ callback_query_id: string; text?: string }>;
  /** How many `getUpdates` calls arrived, faults included. */
  polls: number;
  /** Queues a text message from `chatId`; returns its update id. */
  pushMessage(chatId: number, text: string): number;
  /** Queues a button press on a message the bot sent to `chatId`; returns the callback query id. */
  pushCallback(chatId: number, data: string, messageId?: number): string;
  /** The next `count` calls (of `method`, or any) meet `fault`. */
  fail(fault: Fault, count?: number, method?: string): void;
  /** Resolves once `predicate` holds, checked after each call; rejects after `ms`. */
  waitFor(predicate: () => boolean, ms?: number): Promise<void>;
  /** How many long polls are waiting right now. */
  waiting(): number;
  close(): Promise<void>;
}

interface Update {
  update_id: number;
  message?: unknown;
  callback_query?: unknown;
}

/** Starts a fake Bot API that accepts `token`. */
export async function startFakeTelegram(token: string): Promise<FakeTelegram> {
  const updates: Update[] = [];
  const pollers = new Set<() => void>();
  const watchers = new Set<() => void>();
  const faults: Array<{ fault: Fault; method?: string }> = [];
  let nextUpdate = 1000;
  let nextMessage = 1;
  let nextCallback = 1;
  let waitingPolls = 0;

  const notify = () => {
    for (const watcher of [...watchers]) watcher();
  };
  const wake = () => {
    for (const poller of [...pollers]) poller();
  };

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const bad = (response: ServerResponse, description: string) =>
    json(response, 400, { ok: false, error_code: 400, description: `Bad Request: ${description}` });

  async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text) return {};
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  }

  async function getUpdates(
    request: IncomingMessage,
    response: ServerResponse,
    body: Record<string, unknown>,
  ) {
    const offset = typeof body.offset === 'number' ? body.offset : undefined;
    const timeout = typeof body.timeout === 'number' ? body.timeout : 0;
    const limit = typeof body.limit === 'number' ? body.limit : 100;
    // Telegram forgets every update before the offset: they are confirmed.
    if (offset !== undefined) {
      while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
    }
    const ready = () => updates.filter((update) => offset === undefined || update.update_id >= offset);
    if (ready().length === 0 && timeout > 0) {
      waitingPolls += 1;
      notify();
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          pollers.delete(done);
          request.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, timeout * 1000);
        pollers.add(done);
        request.once('close', done);
      });
      waitingPolls -= 1;
    }
    if (response.destroyed) return;
    json(response, 200, { ok: true, result: ready().slice(0, limit) });
  }

  const fake: FakeTelegram = {
    baseUrl: '',
    calls: [],
    sent: [],
    answered: [],
    polls: 0,
    pushMessage(chatId, text) {
      const update_id = nextUpdate++;
      updates.push({
        update_id,
        message: {
          message_id: nextMessage++,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: 'private' },
          from: { id: chatId },
          text,
        },
      });
      wake();
      return update_id;
    },
    pushCallback(chatId, data, messageId = 1) {
      const id = `cb${nextCallback++}`;
      updates.push({
        update_id: nextUpdate++,
        callback_query: {
          id,
          from: { id: chatId },
          data,
          message: { message_id: messageId, chat: { id: chatId, type: 'private' } },
        },
      });
      wake();
      return id;
    },
    fail(fault, count = 1, method) {
      for (let index = 0; index < count; index += 1) faults.push({ fault, method });
    },
    waitFor(predicate, ms = 10_000) {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate()) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error('the fake Telegram did not see what the test waited for'));
        }, ms);
        watchers.add(check);
      });
    },
    waiting: () => waitingPolls,
    close: () =>
      new Promise((resolve) => {
        wake();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer((request, response) => {
    void (async () => {
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? '');
      const method = match?.[2] ?? '';
      if (method === 'getUpdates') fake.polls += 1;
      const index = faults.findIndex((entry) => entry.method === undefined || entry.method === method);
      if (index >= 0) {
        const [{ fault }] = faults.splice(index, 1) as [{ fault: Fault }];
        for await (const _ of request) {
          // drain the body before answering
        }
        if (fault === 'http500')
          json(response, 500, { ok: false, error_code: 500, description: 'Internal Server Error' });
        else if (fault === 'garbage') {
          response.writeHead(200, { 'content-type': 'text/html' });
          response.end('<html>bad gateway</html>');
        } else if (fault === 'echo404')
          json(response, 404, { ok: false, error_code: 404, description: `Not Found: ${request.url}` });
        else request.socket.destroy();
        notify();
        return;
      }
      if (!match || match[1] !== token) {
        json(response, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
        notify();
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = await readBody(request);
      } catch {
        bad(response, "can't parse JSON");
        return;
      }
      fake.calls.push({ method, body, userAgent: request.headers['user-agent'] });
      if (method === 'getUpdates') await getUpdates(request, response, body);
      else if (method === 'sendMessage') {
        const text = body.text;
        const markup = body.reply_markup as FakeTelegram['sent'][number]['reply_markup'];
        if (typeof body.chat_id !== 'number') bad(response, 'chat not found');
        else if (typeof text !== 'string' || text.length === 0) bad(response, 'message text is empty');
        else if (text.length > 4096) bad(response, 'message is too long');
        else if (
          markup?.inline_keyboard.some((row) =>
            row.some((button) => Buffer.byteLength(button.callback_data) > 64),
          )
        )
          bad(response, 'BUTTON_DATA_INVALID');
        else {
          fake.sent.push(body as FakeTelegram['sent'][number]);
          json(response, 200, {
            ok: true,
            result: {
              message_id: nextMessage++,
              date: Math.floor(Date.now() / 1000),
              chat: { id: body.chat_id },
              text,
            },
          });
        }
      } else if (method === 'answerCallbackQuery') {
        if (typeof body.callback_query_id !== 'string') bad(response, 'query id is invalid');
        else {
          fake.answered.push(body as FakeTelegram['answered'][number]);
          json(response, 200, { ok: true, result: true });
        }
      } else json(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
      notify();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
