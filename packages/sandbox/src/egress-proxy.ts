import { lookup as dnsLookup } from 'node:dns/promises';
import { createConnection, createServer, isIP, type Socket } from 'node:net';
import type { HostCredential } from '@metnos/executor-sdk';
import { credentialHeader, serveCredential } from './credential-tunnel.ts';
import { type DomainRule, domainAllowed, isInternalAddress } from './domains.ts';
import { createHostServiceDispatch, type HostServiceDispatch, isHostServicesName } from './host-services.ts';

/** Resolves a host name to addresses; injectable for tests. */
export type Lookup = (host: string) => Promise<string[]>;

/** Settings of {@link startEgressProxy}. */
export interface EgressProxySettings {
  /** The unix socket path the proxy listens on (bound into the sandbox). */
  socketPath: string;
  /** The call's network allow-list. */
  rules: readonly DomainRule[];
  /**
   * Operator-configured targets that replace DNS for a domain, e.g.
   * `{ 'api.telegram.org': '127.0.0.1:8081' }`. The domain must still be on
   * the profile's allow-list; internal addresses are accepted only here.
   */
  hostOverrides?: Readonly<Record<string, string>>;
  lookup?: Lookup;
  /**
   * The credentials offered to this call, by handle (declared by the manifest
   * AND configured): a request with `Metnos-Credential: <handle>` is served by
   * `credential-tunnel.ts`, which logs in for the executor.
   */
  credentials?: Readonly<Record<string, HostCredential>>;
  /**
   * The call's host services, answered at `http://metnos.host/<service>`
   * (see `host-services.ts`). Without it every such request is refused; the
   * reserved name is never resolved or forwarded either way.
   */
  hostServices?: HostServiceDispatch;
  /**
   * For a warm process of the pool: the proxy listens from the start (its
   * socket is bound into the sandbox) but refuses every connection until
   * {@link EgressProxy.attach} gives it the call's credentials and host
   * services, when the process is handed its call.
   */
  waitForCall?: boolean;
}

/** The per-call parts of a proxy started for a warm process. */
export interface EgressCallParts {
  credentials?: Readonly<Record<string, HostCredential>>;
  hostServices?: HostServiceDispatch;
}

/** A running proxy and what it refused. */
export interface EgressProxy {
  socketPath: string;
  /** Human-readable refusals (`refused evil.example:443: not on the allow-list`). */
  refusals: string[];
  /** Credential logins done for the call (`credential "mail" logged in at imap.example.com:993 (IMAP)`). */
  credentialUses: string[];
  /** Gives a proxy started with `waitForCall` its call's parts; from now on it serves. */
  attach(parts: EgressCallParts): void;
  close(): Promise<void>;
}

const MAX_HEAD = 16 * 1024;

const defaultLookup: Lookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

function splitTarget(target: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(target);
  if (!match) return undefined;
  return { host: match[1]!.toLowerCase(), port: match[2] ? Number(match[2]) : defaultPort };
}

/**
 * Starts the host side of the egress path: an HTTP proxy on a unix socket
 * that accepts `CONNECT host:port` (HTTPS) and absolute-form plain HTTP
 * requests, only for allow-listed domains and ports. It resolves each name
 * once and connects to that address, refusing loopback, private, link-local
 * and metadata addresses unless the operator mapped the name in
 * `hostOverrides`.
 *
 * @example
 * const proxy = await startEgressProxy({ socketPath, rules: [parseDomainRule('api.example.com')] });
 */
export async function startEgressProxy(settings: EgressProxySettings): Promise<EgressProxy> {
  const refusals: string[] = [];
  const lookup = settings.lookup ?? defaultLookup;
  const sockets = new Set<Socket>();
  const credentialUses: string[] = [];
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const noServices = createHostServiceDispatch({ declared: [], offered: {} });
  let call: Required<EgressCallParts> | undefined = settings.waitForCall
    ? undefined
    : { credentials: settings.credentials ?? {}, hostServices: settings.hostServices ?? noServices };

  async function destination(host: string, port: number): Promise<{ host: string; port: number } | string> {
    if (isIP(host) !== 0) return `${host}: IP literals are not reachable`;
    if (!domainAllowed(host, port, settings.rules)) return `${host}:${port}: not on the allow-list`;
    const override = settings.hostOverrides?.[host];
    if (override) {
      const target = splitTarget(override, port);
      return target ?? `${host}: bad host override "${override}"`;
    }
    let addresses: string[];
    try {
      addresses = await lookup(host);
    } catch (error) {
      return `${host}: does not resolve (${(error as Error).message})`;
    }
    const address = addresses[0];
    if (!address) return `${host}: does not resolve`;
    if (addresses.some(isInternalAddress))
      return `${host}: resolves to an internal address (${addresses.join(', ')})`;
    return { host: address, port };
  }

  function refuse(client: Socket, reason: string): void {
    refusals.push(`refused ${reason}`);
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nmetnos egress proxy: ${reason}\n`,
    );
  }

  async function handle(client: Socket, head: Buffer, rest: Buffer): Promise<void> {
    const text = head.toString('latin1');
    const [requestLine = '', ...headerLines] = text.split('\r\n');
    const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
    // a warm process's proxy before its call: nothing of any call is here to serve
    if (!call) return refuse(client, 'no call has been handed to this process yet');
    const { credentials: offered, hostServices } = call;
    const handle = credentialHeader(headerLines);
    if (handle !== undefined) {
      const request = { method, target, version, headerLines, rest };
      return serveCredential(client, request, handle, {
        offered,
        destination,
        track,
        refusals,
        uses: credentialUses,
      });
    }
    let host: string;
    let port: number;
    let firstBytes: Buffer;
    if (method.toUpperCase() === 'CONNECT') {
      const parsed = splitTarget(target, 443);
      if (!parsed) return refuse(client, `bad CONNECT target "${target}"`);
      ({ host, port } = parsed);
      firstBytes = rest;
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return refuse(client, `only absolute-form requests and CONNECT are accepted`);
      }
      if (url.protocol !== 'http:') return refuse(client, `scheme ${url.protocol} is not proxied`);
      host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
      port = url.port ? Number(url.port) : 80;
      const headers = headerLines.filter(
        (line) => line !== '' && !/^(proxy-[a-z-]*|connection|keep-alive)\s*:/i.test(line),
      );
      firstBytes = Buffer.concat([
        Buffer.from(
          `${method} ${url.pathname}${url.search} ${version}\r\n${headers.join('\r\n')}\r\nconnection: close\r\n\r\n`,
          'latin1',
        ),
        rest,
      ]);
    }
    if (isHostServicesName(host)) return hostServices.serve(client, { method, target, headerLines, rest });
    const where = await destination(host, port);
    if (typeof where === 'string') return refuse(client, where);
    const upstream = createConnection({ host: where.host, port: where.port });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.once('connect', () => {
      if (method.toUpperCase() === 'CONNECT') client.write(`${version} 200 Connection Established\r\n\r\n`);
      if (firstBytes.length > 0) upstream.write(firstBytes);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buffered.length > MAX_HEAD) {
          client.off('data', onData);
          refuse(client, 'request head too large');
        }
        return;
      }
      client.off('data', onData);
      client.pause();
      void handle(client, buffered.subarray(0, end), buffered.subarray(end + 4)).catch(() =>
        client.destroy(),
      );
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.socketPath, () => resolve());
  });
  return {
    socketPath: settings.socketPath,
    refusals,
    credentialUses,
    attach(parts) {
      call = { credentials: parts.credentials ?? {}, hostServices: parts.hostServices ?? noServices };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
