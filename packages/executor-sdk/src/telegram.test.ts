// The shared Bot API client (runtime/telegram.mjs) on the paths only an executor takes: through an
// egress-style proxy (CONNECT then TLS for https, an absolute-form request for http), to an
// operator's host override, and failing on a proxy refusal, a timeout, an abort or an oversized
// answer. The channel's paths (long polling, keyboards, faults) are tested in apps/server.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelegramClient, proxyFromEnvironment, TelegramApiError } from '../runtime/telegram.mjs';
import { useTempDirs } from './__fixtures__/index.ts';
import { MetnosError } from './errors.ts';

const TOKEN = '123456:AAE-runtimeClientToken_xyz';
const HOST = 'api.telegram.org';
const temp = useTempDirs('metnos-telegram-client-');

const OPENSSL = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** What the loopback Bot API saw: path, host header, body. */
interface Seen {
  path: string;
  host: string | undefined;
  body: Record<string, unknown>;
}

function botApi(seen: Seen[], answer?: (response: ServerResponse) => void) {
  return async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    seen.push({
      path: request.url ?? '',
      host: request.headers.host,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
    });
    if (answer) return answer(response);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ ok: true, result: { message_id: seen.length, chat: { id: 42 }, date: 1 } }),
    );
  };
}

const sockets = new Set<Socket>();

async function listen(server: Server): Promise<number> {
  // CONNECT tunnels leave the server's connection tracking: keep every socket to end them all
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const servers: Server[] = [];
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/**
 * A loopback stand-in for the sandbox's egress proxy: CONNECT to `HOST:443` is tunnelled to
 * `tlsPort`, an absolute-form request for `http://HOST/…` is answered by `plain`; anything else
 * is refused the way the egress proxy refuses, with a 403 naming it.
 */
async function startProxy(tlsPort: number, plain: ReturnType<typeof botApi>) {
  const connects: string[] = [];
  const forwarded: string[] = [];
  const server = createServer((request, response) => {
    forwarded.push(request.url ?? '');
    if (request.url?.startsWith(`http://${HOST}/`)) return void plain(request, response);
    response.writeHead(403, { 'content-type': 'text/plain' });
    response.end(`metnos egress proxy: ${new URL(request.url ?? '', 'http://x').hostname} is not allowed`);
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    connects.push(request.url ?? '');
    if (request.url !== `${HOST}:443`) {
      client.end(`HTTP/1.1 403 Forbidden\r\n\r\nmetnos egress proxy: ${request.url} is not allowed`);
      return;
    }
    const upstream = connect(tlsPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${await listen(server)}`, connects, forwarded };
}

describe.skipIf(!OPENSSL)(
  'the shared Telegram client through an egress proxy (skipped: openssl is not installed)',
  () => {
    const tlsSeen: Seen[] = [];
    const plainSeen: Seen[] = [];
    let proxy: Awaited<ReturnType<typeof startProxy>>;

    beforeAll(async () => {
      const dir = await temp.make('tls-');
      // a certificate for api.telegram.org that this test process, and only it, trusts
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          `/CN=${HOST}`,
          '-addext',
          `subjectAltName=DNS:${HOST}`,
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      setDefaultCACertificates([...getCACertificates('default'), cert]);
      const tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, botApi(tlsSeen));
      servers.push(tls);
      proxy = await startProxy(await listen(tls), botApi(plainSeen));
    });

    it('tunnels https with CONNECT and speaks TLS to the API host through the tunnel', async () => {
      const client = createTelegramClient({ token: TOKEN, proxy: proxy.url, requestTimeoutMs: 5000 });
      const sent = await client.sendMessage({ chatId: 42, text: 'through the tunnel', silent: true });
      expect(sent.message_id).toBe(1);
      expect(proxy.connects).toEqual([`${HOST}:443`]);
      expect(tlsSeen).toEqual([
        {
          path: `/bot${TOKEN}/sendMessage`,
          host: HOST,
          body: { chat_id: 42, text: 'through the tunnel', disable_notification: true },
        },
      ]);
    });

    it('forwards http as an absolute-form request', async () => {
      const client = createTelegramClient({ token: TOKEN, baseUrl: `http://${HOST}`, proxy: proxy.url });
      await client.answerCallbackQuery({ id: 'cb1', text: 'Approved.' });
      expect(proxy.forwarded.at(-1)).toBe(`http://${HOST}/bot${TOKEN}/answerCallbackQuery`);
      expect(plainSeen.at(-1)?.body).toEqual({ callback_query_id: 'cb1', text: 'Approved.' });
    });

    it('fails with kind proxy, never naming the token, when the egress proxy refuses the host', async () => {
      for (const baseUrl of ['https://elsewhere.example', 'http://elsewhere.example']) {
        const client = createTelegramClient({
          token: TOKEN,
          baseUrl,
          proxy: proxy.url,
          requestTimeoutMs: 5000,
        });
        const error = await client.sendMessage({ chatId: 42, text: 'hi' }).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ kind: 'proxy', code: 'telegram_proxy', method: 'sendMessage' });
        expect((error as Error).message).toContain('elsewhere.example');
        expect((error as Error).message).not.toContain(TOKEN);
      }
    });
  },
);

describe('the shared Telegram client without a proxy', () => {
  it('connects to an operator host override for the API host', async () => {
    const seen: Seen[] = [];
    const server = createServer(botApi(seen));
    servers.push(server);
    const port = await listen(server);
    const client = createTelegramClient({
      token: TOKEN,
      baseUrl: `http://${HOST}`,
      hostOverrides: { [HOST]: `127.0.0.1:${port}` },
    });
    await client.sendMessage({ chatId: '@metnos_test', text: 'hi', parseMode: 'HTML', linkPreview: false });
    expect(seen).toEqual([
      {
        path: `/bot${TOKEN}/sendMessage`,
        host: HOST,
        body: {
          chat_id: '@metnos_test',
          text: 'hi',
          parse_mode: 'HTML',
          link_preview_options: { is_disabled: true },
        },
      },
    ]);
  });

  it('types a timeout, an abort and an oversized answer, and closes the connection each time', async () => {
    const hanging = new Set<Socket>();
    let closed = 0;
    const server = createServer((request, response) => {
      if (request.url?.endsWith('/sendMessage')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ok: true, result: { message_id: 1, text: 'x'.repeat(4096) } }));
        return;
      }
      hanging.add(request.socket);
      request.socket.once('close', () => {
        closed += 1;
      });
    });
    servers.push(server);
    const baseUrl = `http://127.0.0.1:${await listen(server)}`;
    const client = createTelegramClient({
      token: TOKEN,
      baseUrl,
      requestTimeoutMs: 200,
      maxResponseBytes: 1024,
    });

    const timedOut = await client.answerCallbackQuery({ id: 'cb' }).catch((caught: unknown) => caught);
    expect(timedOut).toMatchObject({ kind: 'timeout', method: 'answerCallbackQuery' });
    expect(TelegramApiError.isInstance(timedOut)).toBe(true);
    expect(MetnosError.isInstance(timedOut)).toBe(true);
    expect(String(timedOut)).not.toContain(TOKEN);

    const stop = new AbortController();
    const polling = client
      .getUpdates({ timeout: 30, signal: stop.signal })
      .catch((caught: unknown) => caught);
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    expect(await polling).toMatchObject({ kind: 'aborted', method: 'getUpdates' });

    expect(
      await client.sendMessage({ chatId: 1, text: 'hi' }).catch((caught: unknown) => caught),
    ).toMatchObject({
      kind: 'malformed',
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(hanging.size);
    expect(hanging.size).toBe(2);
  });

  it('refuses a malformed token, base URL or proxy before any call', () => {
    expect(() => createTelegramClient({ token: 'a/b' })).toThrow(/token/);
    expect(() => createTelegramClient({ token: TOKEN, baseUrl: 'ftp://x' })).toThrow(/http/);
    expect(() => createTelegramClient({ token: TOKEN, proxy: 'socks5://127.0.0.1:1080' })).toThrow(/proxy/);
  });
});

describe('proxyFromEnvironment', () => {
  it('names the proxy for the URL’s scheme, in either case, or none', () => {
    const env = { HTTPS_PROXY: 'http://127.0.0.1:3128', http_proxy: '127.0.0.1:8080' };
    expect(proxyFromEnvironment('https://api.telegram.org', env)).toBe('http://127.0.0.1:3128/');
    expect(proxyFromEnvironment('http://api.telegram.org', env)).toBe('http://127.0.0.1:8080/');
    expect(proxyFromEnvironment('https://api.telegram.org', {})).toBeUndefined();
  });
});
