import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool call a scripted server returns. `args` as an object, or raw text to simulate a model's malformed JSON. */
export interface WireToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown> | string;
}

/** A successful answer: text, tool calls, or both. */
export interface WireReply {
  text?: string;
  toolCalls?: WireToolCall[];
  /** Reasoning text (Ollama `thinking`, Anthropic `thinking` block). */
  thinking?: string;
  usage?: { inputTokens: number; outputTokens: number };
  /** The vendor's own finish reason, when the default (stop / tool calls) is not wanted. */
  finishReason?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** An HTTP error in the vendor's error format (or `body` as given). */
export interface WireError {
  status: number;
  message?: string;
  /** Sent as is instead of the vendor's error object (a string is sent verbatim). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as the `Retry-After` header. */
  retryAfter?: string | number;
  delayMs?: number;
}

/** Never answer: the client's timeout or abort ends the request. */
export interface WireHang {
  hang: true;
}

/** Destroy the connection without answering (a reset). */
export interface WireDrop {
  drop: true;
}

/** One scripted server response, consumed in order, one per model request. */
export type WireStep = WireReply | WireError | WireHang | WireDrop;

/** A request a server received, as sent. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

/** A running scripted server on 127.0.0.1. */
export interface WireServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** What to configure as the provider's base URL (`url` + the vendor's path prefix). */
  baseUrl: string;
  /** Every request received, in order, including rejected ones. */
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: WireStep[]): void;
  /** Steps not consumed yet. */
  remaining(): number;
  /** Stops listening and tears down open (hanging) connections. */
  close(): Promise<void>;
}

/** Options shared by the wire servers. */
export interface WireServerOptions {
  /** When set, requests without this key get the vendor's 401 (without consuming a step). */
  apiKey?: string;
  /** The port to listen on (default 0: any free port), e.g. 11434 to stand in for a local Ollama. */
  port?: number;
}

/** The body of a request a dialect answers, for the bits it echoes back. */
export type WireRequestBody = Record<string, unknown> & { model?: string; stream?: boolean };

/** What differs between vendors. */
export interface WireDialect {
  /** Path prefix of the base URL, e.g. `/v1`. */
  basePath: string;
  /** The one endpoint served, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** A rejection for a request that lacks what the vendor requires (headers, key), or undefined. */
  admit(request: RecordedRequest, options: WireServerOptions): WireError | undefined;
  /** The vendor's error body for a status. */
  errorBody(status: number, message: string): unknown;
  /** Writes a successful answer, streamed when the request asked for it. */
  reply(step: WireReply, body: WireRequestBody, response: ServerResponse): void;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Writes one JSON response. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}

/** Starts a streamed response of server-sent events; returns a writer for `data:` frames. */
export function startEventStream(response: ServerResponse): (data: unknown, event?: string) => void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  return (data, event) => {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    response.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`);
  };
}

/** Default token counts when a step gives none. */
export function usageOf(step: WireReply): { inputTokens: number; outputTokens: number } {
  return step.usage ?? { inputTokens: 10, outputTokens: 5 };
}

/** A tool call's arguments as JSON text (raw text passes through). */
export function argsText(call: WireToolCall): string {
  return typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
}

/** Splits text into a few pieces, to exercise a client's delta handling. */
export function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * Runs a scripted vendor server on 127.0.0.1 (port 0 unless `options.port`). Each request to the
 * dialect's endpoint consumes one step; an exhausted script answers 500.
 * Every request is recorded before anything else happens.
 */
export async function startWireServer(
  dialect: WireDialect,
  script: WireStep[],
  options: WireServerOptions = {},
): Promise<WireServer> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const sendError = (response: ServerResponse, step: WireError) => {
    const headers: Record<string, string> = { ...step.headers };
    if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
    const body = step.body ?? dialect.errorBody(step.status, step.message ?? `scripted HTTP ${step.status}`);
    sendJson(response, step.status, body, headers);
  };

  const server = createServer(async (request, response) => {
    const text = await readBody(request);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers,
      body: parseBody(text),
    };
    requests.push(recorded);
    if (recorded.method !== 'POST' || recorded.path.split('?')[0] !== dialect.endpoint) {
      return sendError(response, {
        status: 404,
        message: `no route for ${recorded.method} ${recorded.path}`,
      });
    }
    const rejection = dialect.admit(recorded, options);
    if (rejection) return sendError(response, rejection);
    const step = steps.shift();
    if (step === undefined)
      return sendError(response, { status: 500, message: 'the wire script is exhausted' });
    if ('hang' in step) return;
    if ('drop' in step) {
      request.socket.destroy();
      return;
    }
    if (step.delayMs !== undefined) await wait(step.delayMs);
    if (response.destroyed) return;
    if ('status' in step) return sendError(response, step);
    const body = (
      typeof recorded.body === 'object' && recorded.body !== null ? recorded.body : {}
    ) as WireRequestBody;
    dialect.reply(step, body, response);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}${dialect.basePath}`,
    requests,
    push: (...more) => {
      steps.push(...more);
    },
    remaining: () => steps.length,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
