import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { defineExecutor, type ExecutorContext, ExecutorFailure, fail, ok } from '@metnos/executor-sdk/define';

interface Args {
  text: string;
  parse_mode?: 'none' | 'MarkdownV2' | 'HTML';
  silent?: boolean;
  link_preview?: boolean;
}

interface Output {
  message_id: number;
  sent_at: string;
  characters: number;
}

interface Settings {
  token: string;
  chatId: string | number;
  baseUrl: URL;
  /** Operator mapping of host names to `host:port`, used only for direct connections (no proxy). */
  overrides: Record<string, string>;
}

const DEFAULT_BASE_URL = 'https://api.telegram.org';
const DEADLINE_MARGIN_MS = 500;
const MAX_RESPONSE_BYTES = 256 * 1024;
const PROXY_REFUSAL = 'metnos egress proxy:';

/**
 * Reads the bot token, the trusted chat and the API base from the host
 * configuration. None of them can come from the arguments.
 */
function readSettings(ctx: ExecutorContext): Settings {
  const token = ctx.config.bot_token;
  const chatId = ctx.config.chat_id;
  if (typeof token !== 'string' || !/^[^\s/]{8,}$/.test(token)) {
    throw new ExecutorFailure(
      'NotConfigured',
      'no Telegram bot token is configured for this instance (config bot_token)',
    );
  }
  if (
    !(
      (typeof chatId === 'string' && /^(-?\d+|@\w{4,})$/.test(chatId)) ||
      (typeof chatId === 'number' && Number.isInteger(chatId))
    )
  ) {
    throw new ExecutorFailure(
      'NotConfigured',
      'no trusted Telegram chat is configured for this instance (config chat_id)',
    );
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(typeof ctx.config.base_url === 'string' ? ctx.config.base_url : DEFAULT_BASE_URL);
  } catch {
    throw new ExecutorFailure('NotConfigured', 'config base_url is not a URL');
  }
  if (baseUrl.protocol !== 'https:' && baseUrl.protocol !== 'http:') {
    throw new ExecutorFailure('NotConfigured', 'config base_url must be http or https');
  }
  const host = baseUrl.hostname.toLowerCase();
  const allowed =
    ctx.profile.network.mode === 'allowlist' && ctx.profile.network.domains.some((domain) => domain === host);
  if (!allowed) {
    throw new ExecutorFailure('Forbidden', `${host} is not on this executor's network allow-list`);
  }
  const overrides =
    ctx.config.host_overrides !== null && typeof ctx.config.host_overrides === 'object'
      ? (ctx.config.host_overrides as Record<string, string>)
      : {};
  return { token, chatId, baseUrl, overrides };
}

function proxyFor(url: URL): URL | undefined {
  const env = process.env;
  const value =
    url.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy ?? env.ALL_PROXY ?? env.all_proxy);
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return undefined;
  }
}

function networkFailure(error: unknown, host: string): ExecutorFailure {
  if (error instanceof ExecutorFailure) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new ExecutorFailure(
    'Network',
    `could not reach ${host}: ${(error as Error).message}${code ? ` (${code})` : ''}`,
  );
}

/** A connected socket to the API host, tunnelled through the egress proxy for https when there is one. */
async function openSocket(settings: Settings, url: URL, proxy: URL | undefined): Promise<Socket> {
  const host = url.hostname;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const connected = (socket: Socket, event: 'connect' | 'secureConnect') =>
    new Promise<Socket>((resolve, reject) => {
      socket.once(event, () => resolve(socket));
      socket.once('error', (error) => reject(networkFailure(error, host)));
    });
  if (!proxy) {
    const override = settings.overrides[host.toLowerCase()];
    const targetHost = override ? override.replace(/:\d+$/, '') : host;
    const targetPort = override ? Number(override.split(':').at(-1)) : port;
    return url.protocol === 'https:'
      ? connected(tlsConnect({ host: targetHost, port: targetPort, servername: host }), 'secureConnect')
      : connected(netConnect({ host: targetHost, port: targetPort }), 'connect');
  }
  if (url.protocol === 'http:') {
    return connected(netConnect({ host: proxy.hostname, port: Number(proxy.port || 80) }), 'connect');
  }
  const tunnel = await new Promise<Socket>((resolve, reject) => {
    const connectRequest = httpRequest({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: 'CONNECT',
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}` },
      agent: false,
    });
    connectRequest.once('connect', (response, socket, head) => {
      if (response.statusCode === 200) return resolve(socket);
      const chunks: Buffer[] = [head];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.once('close', () => {
        const reason = Buffer.concat(chunks).toString('utf8').replace(PROXY_REFUSAL, '').trim();
        reject(
          new ExecutorFailure(
            'Network',
            `the egress proxy refused ${host}: ${reason || response.statusCode}`,
          ),
        );
      });
    });
    connectRequest.once('error', (error) => reject(networkFailure(error, host)));
    connectRequest.end();
  });
  return connected(tlsConnect({ socket: tunnel, servername: host }), 'secureConnect');
}

/** POSTs JSON to the Bot API and returns the status and the parsed body (undefined when not JSON). */
async function postJson(settings: Settings, method: string, payload: unknown, deadline: number) {
  const base = settings.baseUrl.href.replace(/\/+$/, '');
  const url = new URL(`${base}/bot${settings.token}/${method}`);
  const proxy = proxyFor(url);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const sockets: Socket[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        for (const socket of sockets) socket.destroy();
        reject(
          new ExecutorFailure(
            'Network',
            `Telegram did not answer in time; the message may or may not have been delivered`,
          ),
        );
      },
      Math.max(0, deadline - Date.now()),
    );
  });
  const exchange = (async () => {
    const socket = await openSocket(settings, url, proxy);
    sockets.push(socket);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest({
        method: 'POST',
        path: proxy && url.protocol === 'http:' ? url.href : `${url.pathname}${url.search}`,
        headers: {
          host: url.host,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': 'Metnos-telegram_send/1.0',
          connection: 'close',
        },
        createConnection: () => socket,
      });
      outgoing.once('response', resolve);
      outgoing.once('error', (error) => reject(networkFailure(error, url.hostname)));
      outgoing.end(body);
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) break;
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.statusCode ?? 0, text, parsed };
  })();
  try {
    return await Promise.race([exchange, timeout]);
  } finally {
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    exchange.catch(() => undefined);
  }
}

interface ApiAnswer {
  ok: boolean;
  description?: string;
  retryAfter?: number;
  messageId?: number;
  date?: number;
}

/** Reads the Bot API envelope defensively: only the fields used, each checked for its type. */
function readAnswer(parsed: unknown): ApiAnswer | undefined {
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const record = parsed as Record<string, unknown>;
  if (typeof record.ok !== 'boolean') return undefined;
  const result = (record.result ?? {}) as Record<string, unknown>;
  const parameters = (record.parameters ?? {}) as Record<string, unknown>;
  return {
    ok: record.ok,
    description: typeof record.description === 'string' ? record.description.slice(0, 300) : undefined,
    retryAfter: typeof parameters.retry_after === 'number' ? parameters.retry_after : undefined,
    messageId: typeof result.message_id === 'number' ? result.message_id : undefined,
    date: typeof result.date === 'number' ? result.date : undefined,
  };
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const settings = readSettings(ctx);
    const redact = (message: string) => message.split(settings.token).join('<token>');
    const payload: Record<string, unknown> = {
      chat_id: settings.chatId,
      text: args.text,
      disable_notification: args.silent ?? false,
      link_preview_options: { is_disabled: args.link_preview === false },
    };
    if (args.parse_mode && args.parse_mode !== 'none') payload.parse_mode = args.parse_mode;

    const deadline = ctx.deadline - DEADLINE_MARGIN_MS;
    let answer: Awaited<ReturnType<typeof postJson>>;
    try {
      answer = await postJson(settings, 'sendMessage', payload, deadline);
    } catch (error) {
      const failure = networkFailure(error, settings.baseUrl.hostname);
      throw new ExecutorFailure(failure.errorClass, redact(failure.message));
    }
    const api = readAnswer(answer.parsed);
    const said = api?.description ? `: ${redact(api.description)}` : '';
    if (answer.status === 429) {
      const retryAfter = api?.retryAfter;
      const wait = retryAfter === undefined ? '' : ` ${retryAfter} s`;
      return fail('RateLimited', `Telegram asks to wait${wait} before sending again${said}`, {
        ...(retryAfter === undefined ? {} : { retry_after: retryAfter }),
      });
    }
    if (answer.status === 401 || answer.status === 404) {
      throw new ExecutorFailure('Unauthorized', `Telegram refused the bot token${said}`);
    }
    if (answer.status >= 500 || answer.status === 0) {
      throw new ExecutorFailure('Network', `Telegram answered HTTP ${answer.status}${said}`);
    }
    if (answer.status === 403 && answer.text.startsWith(PROXY_REFUSAL)) {
      throw new ExecutorFailure('Network', redact(answer.text.slice(0, 300)));
    }
    if (answer.status !== 200 || !api?.ok) {
      throw new ExecutorFailure(
        'Rejected',
        `Telegram did not accept the message (HTTP ${answer.status})${said}`,
      );
    }
    if (api.messageId === undefined) {
      throw new ExecutorFailure('Rejected', 'Telegram answered without a message id');
    }
    return ok({
      message_id: api.messageId,
      sent_at: new Date((api.date ?? Math.floor(Date.now() / 1000)) * 1000).toISOString(),
      characters: [...args.text].length,
    });
  },
});
