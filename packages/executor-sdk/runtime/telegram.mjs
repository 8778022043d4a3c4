// The one Telegram Bot API client of Metnos: the server's Telegram channel
// imports it directly, and the seed `telegram_send` executor through the
// harness, which maps `@metnos/executor-sdk/telegram` to this file inside the
// sandbox. Zero dependencies beside Node built-ins, and no relative imports:
// the harness refuses anything else for the executor, and this file loads
// under the same rule.
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** Telegram's default API host. */
export const DEFAULT_TELEGRAM_BASE_URL = 'https://api.telegram.org';

/** The longest text one `sendMessage` carries. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** The longest `callback_data` of an inline button, in bytes. */
export const TELEGRAM_CALLBACK_DATA_LIMIT = 64;

/** The `user-agent` of every call this client makes. */
export const TELEGRAM_USER_AGENT = 'Metnos-telegram/1';

const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const PROXY_REFUSAL = 'metnos egress proxy:';
const REDACTED = '<token>';
const TOKEN_PATTERN = /^[^\s/?#%]{8,}$/;
const METNOS_ERROR = Symbol.for('metnos.error');
const TELEGRAM_ERROR = Symbol.for('metnos.error.TelegramApiError');

/**
 * A failed Bot API call. `kind` says why: `http` (a status other than 2xx,
 * with Telegram's `description` when it sent one), `api` (HTTP 200 with
 * `ok: false`), `malformed` (not the Bot API's JSON envelope), `network` (no
 * answer: refused, reset, unreachable), `timeout` (no answer in time; the call
 * may or may not have taken effect), `proxy` (the egress proxy refused the
 * host) or `aborted` (the caller's signal). Its message never holds the token.
 *
 * @example
 * try { await client.sendMessage({ chatId: 42, text: 'hi' }); }
 * catch (error) { if (TelegramApiError.isInstance(error) && error.status === 429) wait(error.retryAfter); }
 */
export class TelegramApiError extends Error {
  constructor(kind, method, message, details = {}) {
    super(message);
    this.name = 'TelegramApiError';
    this.code = `telegram_${kind}`;
    this.kind = kind;
    this.method = method;
    this.status = details.status;
    this.description = details.description;
    this.retryAfter = details.retryAfter;
    Object.defineProperty(this, METNOS_ERROR, { value: true });
    Object.defineProperty(this, TELEGRAM_ERROR, { value: true });
  }

  /** True for a TelegramApiError from any copy of this module. */
  static isInstance(error) {
    return typeof error === 'object' && error !== null && error[TELEGRAM_ERROR] === true;
  }
}

/**
 * `text` with every occurrence of the token replaced by `<token>`.
 *
 * @example
 * redactToken('GET /bot123:abc/getMe failed', '123:abc'); // 'GET /bot<token>/getMe failed'
 */
export function redactToken(text, token) {
  return token ? String(text).split(token).join(REDACTED) : String(text);
}

/**
 * The proxy the environment names for `url` (`HTTPS_PROXY` for https,
 * `HTTP_PROXY` for http, then `ALL_PROXY`, either case), or undefined. Inside
 * the sandbox these point at the egress proxy.
 *
 * @example
 * createTelegramClient({ token, proxy: proxyFromEnvironment(DEFAULT_TELEGRAM_BASE_URL) });
 */
export function proxyFromEnvironment(url, env = process.env) {
  const target = new URL(url);
  const value =
    target.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy ?? env.ALL_PROXY ?? env.all_proxy);
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).href;
  } catch {
    return undefined;
  }
}

/**
 * `text` cut into pieces of at most `limit` UTF-16 code units (Telegram's
 * count), each cut at the last line break, else the last space, inside the
 * limit, and never inside a surrogate pair. Empty text is one empty piece.
 *
 * @example
 * splitMessage('a'.repeat(5000)).map((piece) => piece.length); // [4096, 904]
 */
export function splitMessage(text, limit = TELEGRAM_MESSAGE_LIMIT) {
  if (limit < 2) throw new RangeError('the limit must be at least 2');
  const pieces = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf('\n', limit);
    if (cut < limit / 2) {
      const space = rest.lastIndexOf(' ', limit);
      cut = space >= limit / 2 ? space : limit;
    }
    if (cut === limit && isHighSurrogate(rest.charCodeAt(cut - 1))) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
    // The line break or space cut at starts the next piece; drop it there.
    if (rest.startsWith('\n') || rest.startsWith(' ')) rest = rest.slice(1);
  }
  pieces.push(rest);
  return pieces;
}

function isHighSurrogate(code) {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A Bot API client for `token`: `getUpdates` (long polling), `sendMessage`
 * (with inline keyboards) and `answerCallbackQuery`. It speaks HTTP/1.1 over
 * its own sockets: directly (optionally to an operator's `hostOverrides`
 * target), or through `proxy`, tunnelling https with CONNECT and forwarding
 * http, as the sandbox's egress proxy expects. Every failure is a
 * {@link TelegramApiError}; the bot token is in the request path only.
 *
 * @example
 * const client = createTelegramClient({ token: process.env.TELEGRAM_BOT_TOKEN ?? '' });
 * const updates = await client.getUpdates({ offset: 0, timeout: 30 });
 */
export function createTelegramClient(options) {
  const { token } = options;
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token))
    throw new TypeError('the Telegram bot token is missing or malformed');
  const base = parseUrl(options.baseUrl ?? DEFAULT_TELEGRAM_BASE_URL, 'the Telegram base URL');
  const proxy = options.proxy === undefined ? undefined : parseUrl(options.proxy, 'the proxy URL');
  if (proxy && proxy.protocol !== 'http:') throw new TypeError('the proxy URL must be http');
  const route = {
    proxy,
    hostOverrides: options.hostOverrides ?? {},
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
  const root = base.href.replace(/\/+$/, '');
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const redact = (text) => redactToken(text, token);
  const where = (method) => `${root}/bot${REDACTED}/${method}`;

  async function call(method, payload, timeoutMs, signal) {
    let answer;
    try {
      answer = await exchange(new URL(`${root}/bot${token}/${method}`), payload, route, timeoutMs, signal);
    } catch (error) {
      const kind = error instanceof TransportFailure ? error.kind : 'network';
      const reason = error instanceof TransportFailure ? error.reason : describeCause(error);
      const message =
        kind === 'aborted'
          ? `${method} to ${where(method)} was stopped`
          : `${method} to ${where(method)} failed: ${reason}`;
      throw new TelegramApiError(kind, method, redact(message));
    }
    const envelope = readEnvelope(parseJson(answer.text));
    const description = envelope?.description === undefined ? undefined : redact(envelope.description);
    const said = description ? `: ${description}` : '';
    if (answer.status === 403 && proxy && answer.text.startsWith(PROXY_REFUSAL))
      throw new TelegramApiError('proxy', method, redact(answer.text.slice(0, 300)), { status: 403 });
    if (answer.status < 200 || answer.status > 299)
      throw new TelegramApiError(
        'http',
        method,
        redact(`${method} to ${where(method)} answered HTTP ${answer.status}${said}`),
        { status: answer.status, description, retryAfter: envelope?.retryAfter },
      );
    if (!envelope)
      throw new TelegramApiError(
        'malformed',
        method,
        `${method} to ${where(method)} answered something that is not the Bot API's JSON`,
        { status: answer.status },
      );
    if (!envelope.ok)
      throw new TelegramApiError('api', method, redact(`${method} was refused${said}`), {
        status: answer.status,
        description,
        retryAfter: envelope.retryAfter,
      });
    return envelope.result;
  }

  return {
    async getUpdates({ offset, timeout = 30, allowedUpdates, signal } = {}) {
      const payload = { timeout };
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
        (update) => update !== null && typeof update === 'object' && Number.isSafeInteger(update.update_id),
      );
    },

    async sendMessage({ chatId, text, keyboard, parseMode, silent, linkPreview, signal }) {
      const payload = { chat_id: chatId, text };
      if (parseMode !== undefined) payload.parse_mode = parseMode;
      if (silent !== undefined) payload.disable_notification = silent;
      if (linkPreview !== undefined) payload.link_preview_options = { is_disabled: !linkPreview };
      if (keyboard) payload.reply_markup = { inline_keyboard: keyboard };
      const result = await call('sendMessage', payload, requestTimeoutMs, signal);
      if (result === null || typeof result !== 'object' || typeof result.message_id !== 'number')
        throw new TelegramApiError('malformed', 'sendMessage', 'sendMessage answered without a message');
      return result;
    },

    async answerCallbackQuery({ id, text, signal }) {
      const payload = { callback_query_id: id };
      if (text !== undefined) payload.text = text;
      await call('answerCallbackQuery', payload, requestTimeoutMs, signal);
    },
  };
}

function parseUrl(value, what) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${what} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError(`${what} must be http or https`);
  return url;
}

/** Why the transport got no HTTP answer; `reason` never holds the request path. */
class TransportFailure extends Error {
  constructor(kind, reason) {
    super(reason);
    this.kind = kind;
    this.reason = reason;
  }
}

/**
 * POSTs `payload` as JSON to `url` on a fresh connection and reads the status
 * and at most `maxResponseBytes` of the body. Every socket it opened is
 * destroyed when it returns, fails, times out or is aborted.
 */
function exchange(url, payload, route, timeoutMs, signal) {
  const sockets = [];
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const socket of sockets) socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const onAbort = () => finish(new TransportFailure('aborted', 'stopped'));
    const timer = setTimeout(
      () => finish(new TransportFailure('timeout', `no answer in ${timeoutMs} ms`)),
      Math.max(0, timeoutMs),
    );
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    post(url, payload, route, (socket) => {
      sockets.push(socket);
      if (settled) socket.destroy();
    }).then(
      (value) => finish(undefined, value),
      (error) => finish(error),
    );
  });
}

async function post(url, payload, { proxy, hostOverrides, maxResponseBytes }, track) {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const socket = await openSocket(url, proxy, hostOverrides, track);
  const forwarded = proxy !== undefined && url.protocol === 'http:';
  const response = await new Promise((resolve, reject) => {
    const outgoing = httpRequest({
      method: 'POST',
      // a forward proxy reads the absolute URL; a tunnel or a direct connection the path
      path: forwarded ? url.href : `${url.pathname}${url.search}`,
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': TELEGRAM_USER_AGENT,
        connection: 'close',
      },
      createConnection: () => socket,
    });
    outgoing.once('response', resolve);
    outgoing.once('error', (error) => reject(new TransportFailure('network', describeCause(error))));
    outgoing.end(body);
  });
  const chunks = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      size += chunk.length;
      if (size > maxResponseBytes) break;
      chunks.push(chunk);
    }
  } catch (error) {
    throw new TransportFailure('network', describeCause(error));
  }
  return { status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') };
}

/** A connected socket to the API host: direct, through a forward proxy for http, or tunnelled for https. */
async function openSocket(url, proxy, hostOverrides, track) {
  const host = url.hostname;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!proxy) {
    const key = host.toLowerCase();
    const override = Object.hasOwn(hostOverrides, key) ? String(hostOverrides[key]) : undefined;
    const targetHost = override ? override.replace(/:\d+$/, '') : host;
    const targetPort = override ? Number(override.split(':').at(-1)) : port;
    return url.protocol === 'https:'
      ? connected(
          tlsConnect({ host: targetHost, port: targetPort, servername: host }),
          'secureConnect',
          track,
        )
      : connected(netConnect({ host: targetHost, port: targetPort }), 'connect', track);
  }
  const proxyPort = Number(proxy.port || 80);
  if (url.protocol === 'http:')
    return connected(netConnect({ host: proxy.hostname, port: proxyPort }), 'connect', track);
  const tunnel = await new Promise((resolve, reject) => {
    const connectRequest = httpRequest({
      host: proxy.hostname,
      port: proxyPort,
      method: 'CONNECT',
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}` },
      agent: false,
    });
    connectRequest.once('socket', track);
    connectRequest.once('connect', (response, socket, head) => {
      if (response.statusCode === 200) return resolve(socket);
      const chunks = [head];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.once('close', () => {
        const said = Buffer.concat(chunks).toString('utf8').replace(PROXY_REFUSAL, '').trim();
        reject(
          new TransportFailure('proxy', `the egress proxy refused ${host}: ${said || response.statusCode}`),
        );
      });
    });
    connectRequest.once('error', (error) => reject(new TransportFailure('network', describeCause(error))));
    connectRequest.end();
  });
  return connected(tlsConnect({ socket: tunnel, servername: host }), 'secureConnect', track);
}

function connected(socket, event, track) {
  track(socket);
  return new Promise((resolve, reject) => {
    socket.once(event, () => resolve(socket));
    socket.once('error', (error) => reject(new TransportFailure('network', describeCause(error))));
  });
}

function describeCause(error) {
  const parts = [];
  let current = error;
  for (let depth = 0; current instanceof Error && depth < 3; depth += 1) {
    const code = current.code;
    parts.push(typeof code === 'string' ? `${current.message} (${code})` : current.message);
    current = current.cause;
  }
  return parts.join(': ') || String(error);
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads the Bot API envelope defensively: only the fields used, each checked for its type. */
function readEnvelope(parsed) {
  if (parsed === null || typeof parsed !== 'object') return undefined;
  if (typeof parsed.ok !== 'boolean') return undefined;
  const parameters =
    parsed.parameters !== null && typeof parsed.parameters === 'object' ? parsed.parameters : {};
  return {
    ok: parsed.ok,
    result: parsed.result,
    description: typeof parsed.description === 'string' ? parsed.description.slice(0, 300) : undefined,
    retryAfter: typeof parameters.retry_after === 'number' ? parameters.retry_after : undefined,
  };
}
