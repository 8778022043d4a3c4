/**
 * A small client for the Telegram Bot API subset the channel speaks:
 * `getUpdates` (long polling), `sendMessage` (with an optional inline
 * keyboard) and `answerCallbackQuery`. The bot token is the caller's; it is
 * in the request path only, and redacted from every error this client makes.
 */

/** Telegram's default API host. */
export const DEFAULT_TELEGRAM_BASE_URL = 'https://api.telegram.org';

/** The longest text one `sendMessage` carries. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** The longest `callback_data` of an inline button, in bytes. */
export const TELEGRAM_CALLBACK_DATA_LIMIT = 64;

const MAX_RESPONSE_BYTES = 1024 * 1024;
const REDACTED = '<token>';

/**
 * Why a Bot API call failed: `http` (a status other than 2xx, with Telegram's
 * `description` when it sent one), `api` (HTTP 200 with `ok: false`),
 * `malformed` (an answer that is not the Bot API's JSON envelope), `network`
 * (no answer: refused, reset, timed out), or `aborted` (the caller's signal).
 */
export type TelegramErrorKind = 'http' | 'api' | 'malformed' | 'network' | 'aborted';

/** A failed Bot API call; its message never holds the bot token. */
export class TelegramApiError extends Error {
  readonly kind: TelegramErrorKind;
  readonly method: string;
  readonly status: number | undefined;
  readonly description: string | undefined;
  /** Seconds Telegram asks to wait before the next call (HTTP 429). */
  readonly retryAfter: number | undefined;

  constructor(
    kind: TelegramErrorKind,
    method: string,
    message: string,
    details: { status?: number; description?: string; retryAfter?: number } = {},
  ) {
    super(message);
    this.name = 'TelegramApiError';
    this.kind = kind;
    this.method = method;
    this.status = details.status;
    this.description = details.description;
    this.retryAfter = details.retryAfter;
  }
}

/** The parts of a Telegram chat the channel reads. */
export interface TelegramChat {
  id: number;
  type?: string;
}

/** The parts of a Telegram message the channel reads. */
export interface TelegramMessage {
  message_id: number;
  chat: TelegramChat;
  from?: { id: number };
  date?: number;
  text?: string;
}

/** The parts of a callback query (an inline button press) the channel reads. */
export interface TelegramCallbackQuery {
  id: string;
  from: { id: number };
  message?: TelegramMessage;
  data?: string;
}

/** One update from `getUpdates`. */
export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: TelegramCallbackQuery;
}

/** One inline keyboard button: a label and the data sent back when it is pressed. */
export interface InlineButton {
  text: string;
  callback_data: string;
}

/** The Bot API calls the channel uses. */
export interface TelegramClient {
  /** Long-polls for updates after `offset`, waiting up to `timeout` seconds. */
  getUpdates(options: {
    offset?: number;
    timeout?: number;
    allowedUpdates?: string[];
    signal?: AbortSignal;
  }): Promise<TelegramUpdate[]>;
  /** Sends `text` to a chat, with rows of inline buttons when given. */
  sendMessage(options: {
    chatId: number;
    text: string;
    keyboard?: InlineButton[][];
    signal?: AbortSignal;
  }): Promise<TelegramMessage>;
  /** Answers a button press, showing `text` as a short notice when given. */
  answerCallbackQuery(options: { id: string; text?: string; signal?: AbortSignal }): Promise<void>;
}

/** How to reach the Bot API. */
export interface TelegramClientOptions {
  /** The bot token (`123456:ABC…`); never logged. */
  token: string;
  /** The API base, `https://api.telegram.org` by default. */
  baseUrl?: string;
  /** How long a call other than a long poll may take, 15 s by default. */
  requestTimeoutMs?: number;
  /** The `fetch` to use, the global one by default. */
  fetch?: typeof fetch;
}

/**
 * A Bot API client for `token`. Every failure is a {@link TelegramApiError}
 * whose message names the method and the host, never the token.
 *
 * @example
 * const client = createTelegramClient({ token: process.env.TELEGRAM_BOT_TOKEN ?? '' });
 * const updates = await client.getUpdates({ offset: 0, timeout: 30 });
 */
export function createTelegramClient(options: TelegramClientOptions): TelegramClient {
  const { token } = options;
  if (typeof token !== 'string' || !/^[^\s/?#%]{8,}$/.test(token))
    throw new TypeError('the Telegram bot token is missing or malformed');
  let base: URL;
  try {
    base = new URL(options.baseUrl ?? DEFAULT_TELEGRAM_BASE_URL);
  } catch {
    throw new TypeError('the Telegram base URL is not a URL');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:')
    throw new TypeError('the Telegram base URL must be http or https');
  const root = base.href.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
  const redact = (text: string) => redactToken(text, token);
  const where = (method: string) => `${root}/bot${REDACTED}/${method}`;

  async function call(
    method: string,
    payload: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(`${root}/bot${token}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Metnos-server/0.1' },
        body: JSON.stringify(payload),
        signal: combined,
      });
      text = await readCapped(response);
    } catch (error) {
      if (signal?.aborted)
        throw new TelegramApiError('aborted', method, `${method} to ${where(method)} was stopped`);
      const reason = timeout.aborted ? `no answer in ${timeoutMs} ms` : describeCause(error);
      throw new TelegramApiError(
        'network',
        method,
        redact(`${method} to ${where(method)} failed: ${reason}`),
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const envelope = readEnvelope(parsed);
    const description = envelope?.description === undefined ? undefined : redact(envelope.description);
    const said = description ? `: ${description}` : '';
    if (response.status < 200 || response.status > 299)
      throw new TelegramApiError(
        'http',
        method,
        redact(`${method} to ${where(method)} answered HTTP ${response.status}${said}`),
        { status: response.status, description, retryAfter: envelope?.retryAfter },
      );
    if (!envelope)
      throw new TelegramApiError(
        'malformed',
        method,
        `${method} to ${where(method)} answered something that is not the Bot API's JSON`,
        { status: response.status },
      );
    if (!envelope.ok)
      throw new TelegramApiError('api', method, redact(`${method} was refused${said}`), {
        status: response.status,
        description,
        retryAfter: envelope.retryAfter,
      });
    return envelope.result;
  }

  return {
    async getUpdates({ offset, timeout = 30, allowedUpdates, signal }) {
      const payload: Record<string, unknown> = { timeout };
      if (offset !== undefined) payload.offset = offset;
      if (allowedUpdates) payload.allowed_updates = allowedUpdates;
      const result = await call('getUpdates', payload, timeout * 1000 + requestTimeoutMs, signal);
      if (!Array.isArray(result))
        throw new TelegramApiError(
          'malformed',
          'getUpdates',
          'getUpdates answered without a list of updates',
        );
      return result.filter(
        (update): update is TelegramUpdate =>
          update !== null && typeof update === 'object' && Number.isSafeInteger(update.update_id),
      );
    },

    async sendMessage({ chatId, text, keyboard, signal }) {
      const payload: Record<string, unknown> = { chat_id: chatId, text };
      if (keyboard) payload.reply_markup = { inline_keyboard: keyboard };
      const result = await call('sendMessage', payload, requestTimeoutMs, signal);
      if (
        result === null ||
        typeof result !== 'object' ||
        typeof (result as TelegramMessage).message_id !== 'number'
      )
        throw new TelegramApiError('malformed', 'sendMessage', 'sendMessage answered without a message');
      return result as TelegramMessage;
    },

    async answerCallbackQuery({ id, text, signal }) {
      const payload: Record<string, unknown> = { callback_query_id: id };
      if (text !== undefined) payload.text = text;
      await call('answerCallbackQuery', payload, requestTimeoutMs, signal);
    },
  };
}

/** `text` with every occurrence of the token replaced by `<token>`. */
export function redactToken(text: string, token: string): string {
  return token ? text.split(token).join(REDACTED) : text;
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 3; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    parts.push(code ? `${current.message} (${code})` : current.message);
    current = current.cause;
  }
  return parts.join(': ') || String(error);
}

function readEnvelope(
  parsed: unknown,
): { ok: boolean; result: unknown; description?: string; retryAfter?: number } | undefined {
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const record = parsed as Record<string, unknown>;
  if (typeof record.ok !== 'boolean') return undefined;
  const parameters = (record.parameters ?? {}) as Record<string, unknown>;
  return {
    ok: record.ok,
    result: record.result,
    description: typeof record.description === 'string' ? record.description.slice(0, 300) : undefined,
    retryAfter: typeof parameters.retry_after === 'number' ? parameters.retry_after : undefined,
  };
}
