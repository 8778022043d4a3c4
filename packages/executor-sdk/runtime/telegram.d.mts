/** Telegram's default API host. */
export declare const DEFAULT_TELEGRAM_BASE_URL: string;

/** The longest text one `sendMessage` carries. */
export declare const TELEGRAM_MESSAGE_LIMIT: number;

/** The longest `callback_data` of an inline button, in bytes. */
export declare const TELEGRAM_CALLBACK_DATA_LIMIT: number;

/** The `user-agent` of every call this client makes. */
export declare const TELEGRAM_USER_AGENT: string;

/**
 * Why a Bot API call failed: `http` (a status other than 2xx, with Telegram's
 * `description` when it sent one), `api` (HTTP 200 with `ok: false`),
 * `malformed` (an answer that is not the Bot API's JSON envelope), `network`
 * (no answer: refused, reset, unreachable), `timeout` (no answer in time; the
 * call may or may not have taken effect), `proxy` (the egress proxy refused
 * the host) or `aborted` (the caller's signal).
 */
export type TelegramErrorKind = 'http' | 'api' | 'malformed' | 'network' | 'timeout' | 'proxy' | 'aborted';

/**
 * A failed Bot API call; its message never holds the bot token.
 *
 * @example
 * try { await client.sendMessage({ chatId: 42, text: 'hi' }); }
 * catch (error) { if (TelegramApiError.isInstance(error) && error.status === 429) console.log(error.retryAfter); }
 */
export declare class TelegramApiError extends Error {
  /** `telegram_<kind>`. */
  readonly code: string;
  readonly kind: TelegramErrorKind;
  /** The Bot API method that failed. */
  readonly method: string;
  readonly status: number | undefined;
  /** Telegram's `description`, token redacted, at most 300 characters. */
  readonly description: string | undefined;
  /** Seconds Telegram asks to wait before the next call (HTTP 429). */
  readonly retryAfter: number | undefined;
  constructor(
    kind: TelegramErrorKind,
    method: string,
    message: string,
    details?: { status?: number; description?: string; retryAfter?: number },
  );
  /** True for a TelegramApiError from any copy of this module. */
  static isInstance(error: unknown): error is TelegramApiError;
}

/** The parts of a Telegram chat Metnos reads. */
export interface TelegramChat {
  id: number;
  type?: string;
}

/** The parts of a Telegram message Metnos reads. */
export interface TelegramMessage {
  message_id: number;
  chat: TelegramChat;
  from?: { id: number };
  /** Unix seconds. */
  date?: number;
  text?: string;
}

/** The parts of a callback query (an inline button press) Metnos reads. */
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

/** The Bot API calls Metnos uses. */
export interface TelegramClient {
  /** Long-polls for updates after `offset`, waiting up to `timeout` seconds (30 by default). */
  getUpdates(options?: {
    offset?: number;
    timeout?: number;
    allowedUpdates?: string[];
    signal?: AbortSignal;
  }): Promise<TelegramUpdate[]>;
  /**
   * Sends `text` to a chat (an id, or `@channel`), with rows of inline
   * buttons when given. `silent` sets `disable_notification`; `linkPreview`
   * false turns the link preview off. Options left out are not sent.
   */
  sendMessage(options: {
    chatId: number | string;
    text: string;
    keyboard?: InlineButton[][];
    parseMode?: 'MarkdownV2' | 'HTML';
    silent?: boolean;
    linkPreview?: boolean;
    signal?: AbortSignal;
  }): Promise<TelegramMessage>;
  /** Answers a button press, showing `text` as a short notice when given. */
  answerCallbackQuery(options: { id: string; text?: string; signal?: AbortSignal }): Promise<void>;
}

/** How to reach the Bot API. */
export interface TelegramClientOptions {
  /** The bot token (`123456:ABC…`); never in an error message. */
  token: string;
  /** The API base, `https://api.telegram.org` by default. */
  baseUrl?: string;
  /** How long a call other than a long poll may take, 15 s by default (a long poll adds its own wait). */
  requestTimeoutMs?: number;
  /**
   * An http proxy: https is tunnelled with CONNECT, http forwarded. None by
   * default; {@link proxyFromEnvironment} reads the one the sandbox sets.
   */
  proxy?: string;
  /** Host name to `host:port`, used for direct connections only (no proxy). */
  hostOverrides?: Readonly<Record<string, string>>;
  /** The most of an answer read, 1 MiB by default; a longer answer is `malformed`. */
  maxResponseBytes?: number;
}

/**
 * A Bot API client for `token`: `getUpdates` (long polling), `sendMessage`
 * (with inline keyboards) and `answerCallbackQuery`, over its own sockets,
 * directly or through an http proxy (CONNECT for https). Every failure is a
 * {@link TelegramApiError}. Throws a `TypeError` for a malformed token, base
 * URL or proxy, before any call.
 *
 * @example
 * const client = createTelegramClient({ token: process.env.TELEGRAM_BOT_TOKEN ?? '' });
 * const updates = await client.getUpdates({ offset: 0, timeout: 30 });
 */
export declare function createTelegramClient(options: TelegramClientOptions): TelegramClient;

/**
 * The proxy the environment names for `url` (`HTTPS_PROXY` for https,
 * `HTTP_PROXY` for http, then `ALL_PROXY`, either case), or undefined.
 *
 * @example
 * createTelegramClient({ token, proxy: proxyFromEnvironment(DEFAULT_TELEGRAM_BASE_URL) });
 */
export declare function proxyFromEnvironment(
  url: string | URL,
  env?: Readonly<Record<string, string | undefined>>,
): string | undefined;

/**
 * `text` with every occurrence of the token replaced by `<token>`.
 *
 * @example
 * redactToken('POST /bot123:abc/getMe failed', '123:abc'); // 'POST /bot<token>/getMe failed'
 */
export declare function redactToken(text: string, token: string): string;

/**
 * `text` cut into pieces of at most `limit` (4096 by default) UTF-16 code
 * units, each cut at the last line break, else the last space, inside the
 * limit, and never inside a surrogate pair. Empty text is one empty piece.
 *
 * @example
 * splitMessage('a'.repeat(5000)).map((piece) => piece.length); // [4096, 904]
 */
export declare function splitMessage(text: string, limit?: number): string[];
