import type { Socket } from 'node:net';
import {
  type Caller,
  exceedsJsonDepth,
  HOST_SERVICE_NAME,
  HOST_SERVICES_NAME,
  type HostServiceAnswer,
  type HostServices,
} from '@metnos/executor-sdk';

/** The deepest nesting a host service request may have (far below the executor input's). */
export const HOST_SERVICE_MAX_DEPTH = 16;

/** Settings of {@link createHostServiceDispatch}. */
export interface HostServiceDispatchSettings {
  /** The services the executor's manifest declares (`host:<service>`). */
  declared: readonly string[];
  /** What the call is offered: declared AND provided by the host for this call. */
  offered: HostServices;
  /** Who is calling, passed to every handler. */
  call?: {
    executor: { name: string; version: string };
    traceId: string;
    turnId?: string;
    caller: Caller;
  };
  /** Aborted when the call ends; handlers receive it. */
  signal?: AbortSignal;
  /** Largest request body in bytes (default 64 KiB). */
  maxBodyBytes?: number;
  /** Requests one call may make, every service together (default 16). */
  maxRequests?: number;
}

/** One request the egress proxy read for {@link HOST_SERVICES_NAME}. */
export interface HostServiceRequest {
  method: string;
  /** The request target as sent: `http://metnos.host/model`, or `metnos.host:443` for CONNECT. */
  target: string;
  headerLines: readonly string[];
  /** Bytes after the head the proxy already read. */
  rest: Buffer;
}

/** The host side of `http://metnos.host/<service>` for one call. */
export interface HostServiceDispatch {
  /** Answers one request on the client socket, then closes it. Never throws. */
  serve(client: Socket, request: HostServiceRequest): Promise<void>;
  /** One line per request: service, status, and why when refused. */
  readonly log: string[];
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  411: 'Length Required',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

/** The HTTP status of a service's typed refusal. */
function statusOf(errorClass: string): number {
  if (errorClass === 'BudgetExhausted' || errorClass === 'RateLimited') return 429;
  if (errorClass === 'InvalidInput') return 400;
  return 422;
}

/**
 * Whether `host` is the reserved name or a name under it: the proxy answers
 * these itself and never resolves them, whatever a profile's allow-list says.
 *
 * @example
 * isHostServicesName('metnos.host'); // true
 * isHostServicesName('api.metnos.host'); // true
 */
export function isHostServicesName(host: string): boolean {
  const bare = host.toLowerCase().replace(/\.$/, '');
  return bare === HOST_SERVICES_NAME || bare.endsWith(`.${HOST_SERVICES_NAME}`);
}

function write(client: Socket, status: number, body: unknown): void {
  const text = Buffer.from(JSON.stringify(body), 'utf8');
  client.end(
    Buffer.concat([
      Buffer.from(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n`,
        'latin1',
      ),
      text,
    ]),
  );
}

function header(lines: readonly string[], name: string): string | undefined {
  const prefix = `${name}:`;
  const line = lines.find((candidate) => candidate.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

/** Reads exactly `length` bytes of body: what the proxy already has, then the paused socket. */
function readBody(client: Socket, rest: Buffer, length: number): Promise<Buffer | undefined> {
  if (rest.length >= length) return Promise.resolve(rest.subarray(0, length));
  return new Promise((resolve) => {
    const chunks = [rest];
    let size = rest.length;
    const done = (value: Buffer | undefined) => {
      client.off('data', onData);
      client.off('end', onEnd);
      client.off('close', onEnd);
      client.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= length) done(Buffer.concat(chunks).subarray(0, length));
    };
    const onEnd = () => done(undefined);
    client.on('data', onData);
    client.once('end', onEnd);
    client.once('close', onEnd);
    client.resume();
  });
}

/** Reads a request head (up to 16 KiB) from what is buffered and then the socket. */
function readHead(client: Socket, buffered: Buffer): Promise<{ head: string; rest: Buffer } | undefined> {
  return new Promise((resolve) => {
    let data = buffered;
    const check = (): boolean => {
      const end = data.indexOf('\r\n\r\n');
      if (end === -1 && data.length <= 16 * 1024) return false;
      cleanup();
      resolve(
        end === -1
          ? undefined
          : { head: data.subarray(0, end).toString('latin1'), rest: data.subarray(end + 4) },
      );
      return true;
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      check();
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const cleanup = () => {
      client.off('data', onData);
      client.off('end', onEnd);
      client.off('close', onEnd);
      client.pause();
    };
    if (check()) return;
    client.on('data', onData);
    client.once('end', onEnd);
    client.once('close', onEnd);
    client.resume();
  });
}

/**
 * Creates the dispatch of one call's host services. A request is answered
 * only when it is `POST http://metnos.host/<service>` (port 80, no query),
 * the manifest declares `host:<service>` and the host offers the service for
 * this call, its body is JSON with a `content-length` within the cap and
 * nests no deeper than {@link HOST_SERVICE_MAX_DEPTH}. Everything else gets
 * a 4xx JSON body `{ error: { class, message } }` naming the service; the
 * handler's own refusals come back the same way (429 for a spent budget).
 *
 * @example
 * const services = createHostServiceDispatch({ declared: ['model'], offered: { model } });
 * const proxy = await startEgressProxy({ socketPath, rules: [], hostServices: services });
 */
export function createHostServiceDispatch(settings: HostServiceDispatchSettings): HostServiceDispatch {
  const maxBody = settings.maxBodyBytes ?? 64 * 1024;
  const maxRequests = settings.maxRequests ?? 16;
  const signal = settings.signal ?? new AbortController().signal;
  const log: string[] = [];
  let requests = 0;

  const refuse = (client: Socket, status: number, service: string, errorClass: string, message: string) => {
    log.push(`host service ${service}: ${status} ${message}`);
    write(client, status, { error: { class: errorClass, message } });
  };

  async function answer(client: Socket, service: string, request: HostServiceRequest): Promise<void> {
    if (request.method.toUpperCase() !== 'POST')
      return refuse(client, 405, service, 'InvalidRequest', `host service ${service} takes POST only`);
    if (!settings.declared.includes(service))
      return refuse(
        client,
        403,
        service,
        'NotOffered',
        `host service ${service} is not declared by this executor (capability host:${service})`,
      );
    const handler = Object.hasOwn(settings.offered, service) ? settings.offered[service] : undefined;
    if (typeof handler !== 'function')
      return refuse(
        client,
        403,
        service,
        'NotOffered',
        `host service ${service} is not offered to this call`,
      );
    if (++requests > maxRequests)
      return refuse(
        client,
        429,
        service,
        'RateLimited',
        `this call has made its ${maxRequests} host service requests`,
      );
    if (header(request.headerLines, 'transfer-encoding') !== undefined)
      return refuse(
        client,
        411,
        service,
        'InvalidRequest',
        'send the body with a content-length, not chunked',
      );
    const declaredLength = header(request.headerLines, 'content-length');
    if (declaredLength === undefined || !/^\d{1,9}$/.test(declaredLength))
      return refuse(client, 411, service, 'InvalidRequest', 'a content-length is required');
    const length = Number(declaredLength);
    if (length > maxBody)
      return refuse(client, 413, service, 'TooLarge', `the request body is over ${maxBody} bytes`);
    const bytes = await readBody(client, request.rest, length);
    if (!bytes) return;
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return refuse(client, 400, service, 'InvalidInput', 'the request body is not JSON');
    }
    if (exceedsJsonDepth(body, HOST_SERVICE_MAX_DEPTH))
      return refuse(
        client,
        400,
        service,
        'InvalidInput',
        `the request body nests deeper than ${HOST_SERVICE_MAX_DEPTH} levels`,
      );
    let result: HostServiceAnswer;
    try {
      result = await handler({
        service,
        body,
        executor: settings.call?.executor ?? { name: 'unknown', version: '0.0.0' },
        traceId: settings.call?.traceId ?? '',
        ...(settings.call?.turnId ? { turnId: settings.call.turnId } : {}),
        caller: settings.call?.caller ?? { kind: 'test' },
        signal,
      });
    } catch {
      return refuse(client, 500, service, 'ServiceFailed', `host service ${service} failed`);
    }
    if (result?.ok === true) {
      log.push(`host service ${service}: 200`);
      return write(client, 200, result.value ?? null);
    }
    const errorClass = typeof result?.error?.class === 'string' ? result.error.class : 'ServiceFailed';
    const message =
      typeof result?.error?.message === 'string' ? result.error.message : `host service ${service} failed`;
    return refuse(client, statusOf(errorClass), service, errorClass, message);
  }

  async function route(client: Socket, request: HostServiceRequest): Promise<void> {
    let url: URL;
    try {
      url = new URL(request.target);
    } catch {
      return refuse(client, 400, '?', 'InvalidRequest', 'not an absolute http:// URL');
    }
    const service = /^\/([^/]*)$/.exec(url.pathname)?.[1] ?? '';
    if (
      url.protocol !== 'http:' ||
      url.hostname.toLowerCase() !== HOST_SERVICES_NAME ||
      (url.port !== '' && url.port !== '80')
    )
      return refuse(
        client,
        404,
        service.slice(0, 40) || '?',
        'NotFound',
        `host services are at http://${HOST_SERVICES_NAME}/<service>`,
      );
    if (!HOST_SERVICE_NAME.test(service) || url.search !== '')
      return refuse(
        client,
        404,
        service.slice(0, 40) || '?',
        'NotFound',
        `no host service at ${url.pathname.slice(0, 80)}`,
      );
    await answer(client, service, request);
  }

  return {
    log,
    async serve(client, request) {
      try {
        if (request.method.toUpperCase() !== 'CONNECT') return await route(client, request);
        // HTTP clients that tunnel plain http too (Node's fetch behind HTTP_PROXY) send CONNECT
        // metnos.host:80 and then an origin-form request inside the tunnel
        if (!/^metnos\.host:80$/i.test(request.target)) {
          log.push(`host service: refused CONNECT ${request.target.slice(0, 80)}`);
          return write(client, 403, {
            error: {
              class: 'InvalidRequest',
              message: `${HOST_SERVICES_NAME} is reached with plain http:// on port 80`,
            },
          });
        }
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const inner = await readHead(client, request.rest);
        if (!inner) return void client.destroy();
        const [requestLine = '', ...headerLines] = inner.head.split('\r\n');
        const [method = '', path = ''] = requestLine.split(' ');
        if (!path.startsWith('/'))
          return refuse(client, 400, '?', 'InvalidRequest', 'send an origin-form request inside the tunnel');
        await route(client, {
          method,
          target: `http://${HOST_SERVICES_NAME}${path}`,
          headerLines,
          rest: inner.rest,
        });
      } catch {
        client.destroy();
      }
    },
  };
}
