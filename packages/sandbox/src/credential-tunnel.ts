import { createConnection, type Socket } from 'node:net';
import {
  CREDENTIAL_HANDLE,
  type CredentialEndpoint,
  credentialEndpoints,
  endpointAddress,
  type HostCredential,
  type HttpCredential,
} from '@metnos/executor-sdk';
import {
  authorizationOf,
  imapLogin,
  LoginFailure,
  type LoginResult,
  secureUpstream,
  smtpLogin,
} from './credential-login.ts';

/** The request header that asks the egress proxy to log in with a credential handle. */
export const CREDENTIAL_HEADER = 'Metnos-Credential';

/** One request the proxy read: what the credential path needs of it. */
export interface ProxiedRequest {
  method: string;
  target: string;
  version: string;
  headerLines: readonly string[];
  /** Bytes the client sent after the request head. */
  rest: Buffer;
}

/** What the proxy lends the credential path for one connection. */
export interface CredentialTunnelSettings {
  /** The handles this call is offered: declared by the manifest AND configured by the person. */
  offered: Readonly<Record<string, HostCredential>>;
  /** The proxy's own resolution (allow-list, host overrides, DNS, internal addresses): a target or why not. */
  destination(host: string, port: number): Promise<{ host: string; port: number } | string>;
  /** Registers an upstream socket so the proxy's close ends it. */
  track(socket: Socket): void;
  /** Refusals and failures, shown in the call's isolation notes (never a secret). */
  refusals: string[];
  /** Logins done, for the same notes (`credential "mail" logged in at imap.example.com:993`). */
  uses: string[];
  /** How long a login may take. Default 15 s. */
  loginTimeoutMs?: number;
}

const CREDENTIAL_LINE = /^metnos-credential\s*:\s*(.*)$/i;

/**
 * The handle a request head names in its `Metnos-Credential` header, or
 * undefined when it has none. A malformed value is returned as given, so the
 * proxy refuses it rather than treating the request as plain.
 *
 * @example
 * credentialHeader(['Host: imap.example.com:993', 'Metnos-Credential: mail']); // 'mail'
 */
export function credentialHeader(headerLines: readonly string[]): string | undefined {
  for (const line of headerLines) {
    const match = CREDENTIAL_LINE.exec(line);
    if (match) return match[1]!.trim();
  }
  return undefined;
}

function answer(client: Socket, status: 401 | 403 | 502, reason: string): void {
  const text = status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Bad Gateway';
  client.end(
    `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nmetnos egress proxy: ${reason}\n`,
  );
}

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(target);
  if (!match) return undefined;
  return { host: match[1]!.toLowerCase(), port: match[2] ? Number(match[2]) : defaultPort };
}

async function openUpstream(
  endpoint: CredentialEndpoint,
  settings: CredentialTunnelSettings,
): Promise<Socket | string> {
  const where = await settings.destination(endpoint.host, endpoint.port);
  if (typeof where === 'string') return where;
  const socket = createConnection({ host: where.host, port: where.port });
  settings.track(socket);
  return await new Promise<Socket | string>((resolve) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', (error) => resolve(`${endpointAddress(endpoint)}: ${error.message}`));
  });
}

/** Hands an authenticated mail session to the client: synthetic greeting, first EHLO answered, then a pipe. */
function handOver(client: Socket, login: LoginResult, version: string, rest: Buffer): void {
  const upstream = login.socket;
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  client.write(`${version} 200 Connection Established\r\n\r\n`);
  client.write(login.greeting);
  const pipeBoth = (first: Buffer) => {
    if (first.length > 0) upstream.write(first);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  };
  if (!login.ehloReply) {
    pipeBoth(rest);
    return;
  }
  // SMTP: the upstream already had EHLO and AUTH; the client's own first EHLO is answered here
  let pending = rest;
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    firstLine();
  };
  const firstLine = () => {
    const end = pending.indexOf('\r\n');
    if (end === -1) {
      if (pending.length > 1024) {
        client.off('data', onData);
        pipeBoth(pending);
      }
      return;
    }
    client.off('data', onData);
    const line = pending.subarray(0, end).toString('latin1');
    const after = pending.subarray(end + 2);
    const greeting = /^(EHLO|HELO)\s+(\S{1,255})\s*$/i.exec(line);
    if (!greeting) return pipeBoth(pending);
    client.write(
      greeting[1]!.toUpperCase() === 'EHLO'
        ? login.ehloReply!(greeting[2]!)
        : `250 ${login.ehloReply!(greeting[2]!).split('\r\n')[0]!.slice(4)}\r\n`,
    );
    pipeBoth(after);
  };
  client.on('data', onData);
  client.resume();
  firstLine();
}

/** `CONNECT host:port` with a mail credential: log in upstream, then lend the session. */
async function mailSession(
  client: Socket,
  request: ProxiedRequest,
  credential: HostCredential,
  settings: CredentialTunnelSettings,
): Promise<void> {
  const handle = credential.handle;
  if (credential.kind !== 'mail') {
    settings.refusals.push(
      `refused credential "${handle}": an http credential is used with absolute-form requests`,
    );
    return answer(
      client,
      403,
      `credential "${handle}" is for http://… requests through the proxy, not CONNECT`,
    );
  }
  const target = splitHostPort(request.target, 443);
  const endpoint =
    target &&
    [credential.imap, credential.smtp].find(
      (candidate) => candidate && candidate.host === target.host && candidate.port === target.port,
    );
  if (!endpoint) {
    const own = credentialEndpoints(credential).map(endpointAddress).join(', ');
    settings.refusals.push(
      `refused credential "${handle}" for ${request.target.slice(0, 100)}: not its server`,
    );
    return answer(
      client,
      403,
      `credential "${handle}" logs in only at its own servers (${own}), not at ${request.target.slice(0, 100)}`,
    );
  }
  const upstream = await openUpstream(endpoint, settings);
  if (typeof upstream === 'string') {
    settings.refusals.push(`refused credential "${handle}": ${upstream}`);
    return answer(client, 502, `credential "${handle}": ${upstream}`);
  }
  const deadline = Date.now() + (settings.loginTimeoutMs ?? 15_000);
  const protocol = endpoint === credential.imap ? 'IMAP' : 'SMTP';
  let login: LoginResult;
  try {
    login =
      protocol === 'IMAP'
        ? await imapLogin(upstream, endpoint, credential, deadline)
        : await smtpLogin(upstream, endpoint, credential, deadline);
  } catch (error) {
    upstream.destroy();
    const failure =
      error instanceof LoginFailure ? error : new LoginFailure('network', 'the login broke off unexpectedly');
    const reason = `credential "${handle}" at ${endpointAddress(endpoint)}: ${failure.message}`;
    settings.refusals.push(`login failed: ${reason}`);
    return answer(client, failure.kind === 'auth' ? 401 : 502, reason);
  }
  settings.track(login.socket);
  settings.uses.push(`credential "${handle}" logged in at ${endpointAddress(endpoint)} (${protocol})`);
  handOver(client, login, request.version, request.rest);
}

const DROPPED_HEADERS = /^(proxy-[a-z-]*|connection|keep-alive|authorization|host|metnos-credential)\s*:/i;

/** An absolute-form request with an http credential: same origin only, Authorization added here. */
async function httpRequest(
  client: Socket,
  request: ProxiedRequest,
  credential: HttpCredential,
  settings: CredentialTunnelSettings,
): Promise<void> {
  const handle = credential.handle;
  let url: URL;
  try {
    url = new URL(request.target);
  } catch {
    return answer(
      client,
      403,
      `credential "${handle}": only absolute-form requests (http://host/path) are accepted`,
    );
  }
  const endpoint = credential.endpoint;
  const host = url.hostname.toLowerCase();
  const portMatches = url.port === '' || Number(url.port) === endpoint.port;
  if (
    !/^https?:$/.test(url.protocol) ||
    host !== endpoint.host ||
    !portMatches ||
    url.username ||
    url.password
  ) {
    settings.refusals.push(`refused credential "${handle}" for ${url.host.slice(0, 100)}: not its server`);
    return answer(
      client,
      403,
      `credential "${handle}" is sent only to ${new URL(credential.url).origin}, not to ${url.host.slice(0, 100)}`,
    );
  }
  const socket = await openUpstream(endpoint, settings);
  if (typeof socket === 'string') {
    settings.refusals.push(`refused credential "${handle}": ${socket}`);
    return answer(client, 502, `credential "${handle}": ${socket}`);
  }
  let upstream: Socket;
  try {
    upstream = await secureUpstream(socket, endpoint, Date.now() + (settings.loginTimeoutMs ?? 15_000));
  } catch (error) {
    socket.destroy();
    const reason = `credential "${handle}" at ${endpointAddress(endpoint)}: ${(error as Error).message}`;
    settings.refusals.push(`failed: ${reason}`);
    return answer(client, 502, reason);
  }
  settings.track(upstream);
  settings.uses.push(`credential "${handle}" sent to ${endpointAddress(endpoint)} (HTTP)`);
  const defaultPort = endpoint.tls === 'tls' ? 443 : 80;
  const hostHeader = endpoint.port === defaultPort ? endpoint.host : endpointAddress(endpoint);
  const headers = request.headerLines.filter((line) => line !== '' && !DROPPED_HEADERS.test(line));
  const head =
    `${request.method} ${url.pathname}${url.search} ${request.version}\r\n` +
    [
      `host: ${hostHeader}`,
      ...headers,
      `authorization: ${authorizationOf(credential)}`,
      'connection: close',
    ].join('\r\n') +
    '\r\n\r\n';
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  upstream.write(Buffer.concat([Buffer.from(head, 'latin1'), request.rest]));
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
}

/**
 * The egress proxy's credential path: a request whose head carries
 * `Metnos-Credential: <handle>`. The handle must be offered to this call;
 * `CONNECT` targets must be one of a mail credential's own servers, and
 * absolute-form requests the origin of an http credential. The proxy then
 * logs in itself (IMAP, SMTP) or adds `Authorization` (HTTP), so the secret
 * never enters the sandbox. Refusals are `403`, a login the server refuses
 * `401`, an unreachable or broken server `502`; each names the handle only.
 *
 * @example
 * const handle = credentialHeader(headerLines);
 * if (handle !== undefined) return serveCredential(client, request, handle, settings);
 */
export async function serveCredential(
  client: Socket,
  request: ProxiedRequest,
  handle: string,
  settings: CredentialTunnelSettings,
): Promise<void> {
  const shown = CREDENTIAL_HANDLE.test(handle) ? handle : JSON.stringify(handle.slice(0, 40));
  const credential =
    CREDENTIAL_HANDLE.test(handle) && Object.hasOwn(settings.offered, handle)
      ? settings.offered[handle]!
      : undefined;
  if (!credential) {
    settings.refusals.push(`refused credential ${shown}: not offered to this call`);
    return answer(
      client,
      403,
      `credential ${shown} is not offered to this call (its manifest must declare secret:${CREDENTIAL_HANDLE.test(handle) ? handle : '<handle>'} and the person must have configured it)`,
    );
  }
  if (request.method.toUpperCase() === 'CONNECT') return mailSession(client, request, credential, settings);
  if (credential.kind !== 'http') {
    settings.refusals.push(`refused credential "${handle}": a mail credential is used with CONNECT`);
    return answer(client, 403, `credential "${handle}" is for CONNECT to its IMAP or SMTP server`);
  }
  return httpRequest(client, request, credential, settings);
}
