import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CredentialSet, type HostCredential, loadCredentials, Secret } from '@metnos/executor-sdk';
import {
  generatedMailbox,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  startMailServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDomainRule } from '../src/domains.ts';
import { type EgressProxy, startEgressProxy } from '../src/egress-proxy.ts';

const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping the credential proxy tests against Dovecot: ${unavailable}`);

/** Reads what a socket receives until a pattern shows up. */
class Wire {
  text = '';
  private wake: (() => void) | undefined;
  closed = false;

  readonly socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('latin1');
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  async until(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.text);
      if (match) {
        const upTo = this.text.slice(0, match.index + match[0].length);
        this.text = this.text.slice(match.index + match[0].length);
        return upTo;
      }
      if (this.closed || Date.now() > deadline)
        throw new Error(`never saw ${pattern}: ${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Everything until the peer closes. */
  async rest(): Promise<string> {
    while (!this.closed) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.text;
  }

  send(text: string): void {
    this.socket.write(text);
  }
}

async function open(proxy: EgressProxy, head: string): Promise<Wire> {
  const socket = connect(proxy.socketPath);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const wire = new Wire(socket);
  wire.send(head);
  return wire;
}

const connectHead = (target: string, handle?: string) =>
  `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${handle === undefined ? '' : `Metnos-Credential: ${handle}\r\n`}\r\n`;

describe.skipIf(unavailable)('the egress proxy logs in with a credential handle', () => {
  let server: MailServer;
  let dir: string;
  let proxy: EgressProxy;
  let mail: HostCredential;
  const imap = 'imap.metnos.test';
  const smtp = 'smtp.metnos.test';

  beforeAll(async () => {
    server = await startMailServer({ messages: generatedMailbox() });
    dir = await mkdtemp(join(tmpdir(), 'metnos-credential-proxy-'));
    mail = {
      kind: 'mail',
      handle: 'mail',
      imap: { host: imap, port: 993, tls: 'none' },
      smtp: { host: smtp, port: 465, tls: 'none' },
      username: server.user,
      password: new Secret(server.password),
    };
    proxy = await startEgressProxy({
      socketPath: join(dir, 'proxy.sock'),
      rules: ['imap.metnos.test:993', 'smtp.metnos.test:465', 'other.metnos.test:993'].map(
        (entry) => parseDomainRule(entry) as Exclude<ReturnType<typeof parseDomainRule>, string>,
      ),
      // other.metnos.test is the same Dovecot: were the target check off, a login there would work
      hostOverrides: {
        [imap]: `127.0.0.1:${server.imapPort}`,
        [smtp]: `127.0.0.1:${server.smtpPort}`,
        'other.metnos.test': `127.0.0.1:${server.imapPort}`,
      },
      credentials: { mail },
    });
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('hands an IMAP session that is already logged in: PREAUTH, then the mailbox answers', async () => {
    const wire = await open(proxy, connectHead(`${imap}:993`, 'mail'));
    expect(await wire.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 200/);
    const greeting = await wire.until(/\r\n/);
    expect(greeting).toMatch(/^\* PREAUTH \[CAPABILITY [^\]]*IMAP4rev1/);
    expect(greeting).not.toMatch(/AUTH=|LOGINDISABLED|STARTTLS/);
    expect(greeting).toContain('credential "mail"');
    wire.send('a1 EXAMINE INBOX\r\n');
    const examined = await wire.until(/a1 OK[^\r]*\r\n/);
    expect(examined).toMatch(/\* (\d+) EXISTS/);
    wire.socket.destroy();
    expect(proxy.credentialUses.at(-1)).toBe(`credential "mail" logged in at ${imap}:993 (IMAP)`);
  });

  it('hands an SMTP session that is already authenticated: its first EHLO answered without AUTH', async () => {
    const wire = await open(proxy, connectHead(`${smtp}:465`, 'mail'));
    expect(await wire.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 200/);
    expect(await wire.until(/\r\n/)).toMatch(/^220 smtp\.metnos\.test ESMTP/);
    wire.send('EHLO sandbox\r\n');
    const ehlo = await wire.until(/250 [^\r]*\r\n/);
    expect(ehlo).toMatch(/^250-smtp\.metnos\.test greets sandbox/);
    expect(ehlo).not.toMatch(/AUTH/);
    wire.send('MAIL FROM:<me@metnos.test>\r\n');
    expect(await wire.until(/\r\n/)).toMatch(/^250/);
    wire.send('RCPT TO:<ada@rossi.example>\r\n');
    expect(await wire.until(/\r\n/)).toMatch(/^250/);
    wire.send('DATA\r\n');
    expect(await wire.until(/\r\n/)).toMatch(/^354/);
    wire.send('Subject: through the proxy\r\n\r\nHello\r\n.\r\n');
    expect(await wire.until(/\r\n/)).toMatch(/^250/);
    wire.send('QUIT\r\n');
    await wire.rest();
    const sent = await server.sent();
    expect(sent.at(-1)).toMatchObject({ rcptTos: ['ada@rossi.example'], user: server.user });
  });

  it('refuses a handle that is not offered, a server that is not the credential’s, and bad headers', async () => {
    const forged = await open(proxy, connectHead(`${imap}:993`, 'bank'));
    expect(await forged.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*credential bank is not offered to this call/);
    const elsewhere = await open(proxy, connectHead('other.metnos.test:993', 'mail'));
    expect(await elsewhere.rest()).toMatch(
      /^HTTP\/1\.1 403[\s\S]*logs in only at its own servers \(imap\.metnos\.test:993, smtp\.metnos\.test:465\)/,
    );
    const odd = await open(proxy, connectHead(`${imap}:993`, '../mail'));
    expect(await odd.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*"\.\.\/mail" is not offered/);
    const asHttp = await open(
      proxy,
      `GET http://${imap}:993/ HTTP/1.1\r\nHost: x\r\nMetnos-Credential: mail\r\n\r\n`,
    );
    expect(await asHttp.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*is for CONNECT/);
    // without the header the allow-listed server is an ordinary tunnel: its own greeting, no login
    const plain = await open(proxy, connectHead('other.metnos.test:993'));
    await plain.until(/\r\n\r\n/);
    expect(await plain.until(/\r\n/)).toMatch(/^\* OK /);
    plain.socket.destroy();
    expect(proxy.refusals.join('\n')).not.toContain(server.password);
  });

  it('answers 401 when the server refuses the password, and never shows the password', async () => {
    const wrong: HostCredential = {
      ...(mail as Extract<HostCredential, { kind: 'mail' }>),
      password: new Secret('wrong-horse-battery'),
    };
    const second = await startEgressProxy({
      socketPath: join(dir, 'wrong.sock'),
      rules: [parseDomainRule(`${imap}:993`), parseDomainRule(`${smtp}:465`)] as never,
      hostOverrides: { [imap]: `127.0.0.1:${server.imapPort}`, [smtp]: `127.0.0.1:${server.smtpPort}` },
      credentials: { mail: wrong },
    });
    try {
      const refused = await (await open(second, connectHead(`${imap}:993`, 'mail'))).rest();
      expect(refused).toMatch(/^HTTP\/1\.1 401[\s\S]*the IMAP server refused the login/);
      const smtpRefused = await (await open(second, connectHead(`${smtp}:465`, 'mail'))).rest();
      expect(smtpRefused).toMatch(/^HTTP\/1\.1 401[\s\S]*the SMTP server refused the login: 535/);
      for (const text of [refused, smtpRefused, ...second.refusals]) {
        expect(text).not.toContain('wrong-horse-battery');
        expect(text).not.toContain(server.user);
      }
    } finally {
      await second.close();
    }
  });
});

describe('the egress proxy adds Authorization for an http credential', () => {
  let upstream: Server;
  let seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  let dir: string;
  let proxy: EgressProxy;
  const password = 'calendar-pass-1234';

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      seen.push({ url: request.url ?? '', headers: request.headers });
      response
        .writeHead(request.headers.authorization ? 207 : 401, { 'content-type': 'text/plain' })
        .end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    dir = await mkdtemp(join(tmpdir(), 'metnos-credential-http-'));
    const credentials: CredentialSet = {
      calendar: {
        kind: 'http',
        handle: 'calendar',
        url: 'http://dav.metnos.test:5232/me/',
        endpoint: { host: 'dav.metnos.test', port: 5232, tls: 'none' },
        username: 'me',
        password: new Secret(password),
      },
      api: {
        kind: 'http',
        handle: 'api',
        url: 'http://api.metnos.test:8080/',
        endpoint: { host: 'api.metnos.test', port: 8080, tls: 'none' },
        token: new Secret('token-abcdef-123456'),
      },
    };
    proxy = await startEgressProxy({
      socketPath: join(dir, 'proxy.sock'),
      rules: ['dav.metnos.test:5232', 'api.metnos.test:8080', 'other.metnos.test:5232'].map(
        (entry) => parseDomainRule(entry) as Exclude<ReturnType<typeof parseDomainRule>, string>,
      ),
      hostOverrides: {
        'dav.metnos.test': `127.0.0.1:${port}`,
        'api.metnos.test': `127.0.0.1:${port}`,
        'other.metnos.test': `127.0.0.1:${port}`,
      },
      credentials,
    });
  });

  afterAll(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('sends Basic for a username and password, replacing any Authorization the client sent', async () => {
    seen = [];
    const wire = await open(
      proxy,
      'REPORT http://dav.metnos.test/me/calendar/ HTTP/1.1\r\nHost: dav.metnos.test\r\nAuthorization: Basic Zm9yZ2VkOnZhbHVl\r\nMetnos-Credential: calendar\r\nDepth: 1\r\ncontent-length: 0\r\n\r\n',
    );
    expect(await wire.rest()).toMatch(/^HTTP\/1\.1 207/);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('/me/calendar/');
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`me:${password}`).toString('base64')}`);
    expect(seen[0]!.headers.host).toBe('dav.metnos.test:5232');
    expect(seen[0]!.headers['metnos-credential']).toBeUndefined();
    expect(seen[0]!.headers.depth).toBe('1');
  });

  it('sends Bearer for a token', async () => {
    seen = [];
    const wire = await open(
      proxy,
      'GET http://api.metnos.test:8080/v1/things HTTP/1.1\r\nHost: api.metnos.test\r\nMetnos-Credential: api\r\n\r\n',
    );
    expect(await wire.rest()).toMatch(/^HTTP\/1\.1 207/);
    expect(seen[0]!.headers.authorization).toBe('Bearer token-abcdef-123456');
  });

  it('refuses another origin, CONNECT, and a handle not offered', async () => {
    seen = [];
    const other = await open(
      proxy,
      'GET http://other.metnos.test:5232/me/ HTTP/1.1\r\nHost: other.metnos.test\r\nMetnos-Credential: calendar\r\n\r\n',
    );
    expect(await other.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*sent only to http:\/\/dav\.metnos\.test:5232/);
    const tunnel = await open(proxy, connectHead('dav.metnos.test:5232', 'calendar'));
    expect(await tunnel.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*not CONNECT/);
    const forged = await open(
      proxy,
      'GET http://dav.metnos.test:5232/ HTTP/1.1\r\nHost: dav.metnos.test\r\nMetnos-Credential: mail\r\n\r\n',
    );
    expect(await forged.rest()).toMatch(/^HTTP\/1\.1 403[\s\S]*credential mail is not offered/);
    expect(seen).toEqual([]);
  });
});

const tlsUnavailable = mailServerUnavailable({ tls: true });
if (tlsUnavailable) console.warn(`skipping the credential proxy TLS tests: ${tlsUnavailable}`);

describe.skipIf(tlsUnavailable)(
  'the egress proxy logs in over TLS and STARTTLS, checking certificates',
  () => {
    let server: MailServer;
    let dir: string;
    const proxies: EgressProxy[] = [];
    const imap = 'imap.metnos.test';
    const smtp = 'smtp.metnos.test';

    /** A proxy for the account as `mailAccount` describes it, credentials loaded from the file. */
    async function proxyFor(tls: 'tls' | 'starttls', trust = true): Promise<EgressProxy> {
      const account = mailAccount(server, { tls, trust });
      const configDir = await mkdtemp(join(dir, 'config-'));
      await writeFile(join(configDir, 'credentials.toml'), account.toml, { mode: 0o600 });
      const credentials = await loadCredentials({ configDir, env: account.env });
      const proxy = await startEgressProxy({
        socketPath: join(configDir, 'proxy.sock'),
        rules: [account.imap, account.smtp].map(
          (entry) => parseDomainRule(entry) as Exclude<ReturnType<typeof parseDomainRule>, string>,
        ),
        hostOverrides: account.hostOverrides,
        credentials,
      });
      proxies.push(proxy);
      return proxy;
    }

    beforeAll(async () => {
      server = await startMailServer({ messages: generatedMailbox(), tls: true });
      dir = await mkdtemp(join(tmpdir(), 'metnos-credential-tls-'));
    });

    afterAll(async () => {
      for (const proxy of proxies) await proxy.close();
      await server?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('logs in to IMAP over TLS and over STARTTLS', async () => {
      for (const tls of ['tls', 'starttls'] as const) {
        const proxy = await proxyFor(tls);
        const wire = await open(proxy, connectHead(`${imap}:993`, 'mail'));
        expect(await wire.until(/\r\n\r\n/), tls).toMatch(/^HTTP\/1\.1 200/);
        expect(await wire.until(/\r\n/)).toMatch(/^\* PREAUTH \[CAPABILITY /);
        wire.send('a1 EXAMINE INBOX\r\n');
        expect(await wire.until(/a1 OK[^\r]*\r\n/)).toMatch(/\* 38 EXISTS/);
        wire.socket.destroy();
      }
    });

    it('sends over SMTP after STARTTLS, which the server requires before AUTH', async () => {
      const proxy = await proxyFor('starttls');
      const wire = await open(proxy, connectHead(`${smtp}:465`, 'mail'));
      await wire.until(/\r\n\r\n/);
      await wire.until(/^220 [^\r]*\r\n/);
      wire.send('EHLO sandbox\r\nMAIL FROM:<me@metnos.test>\r\n');
      const ehlo = await wire.until(/250 [^\r]*\r\n250 [^\r]*\r\n/);
      expect(ehlo).not.toMatch(/STARTTLS|AUTH/);
      wire.send('RCPT TO:<ada@rossi.example>\r\nDATA\r\n');
      await wire.until(/354[^\r]*\r\n/);
      wire.send('Subject: over TLS\r\n\r\nHello\r\n.\r\nQUIT\r\n');
      await wire.rest();
      expect((await server.sent()).at(-1)).toMatchObject({
        rcptTos: ['ada@rossi.example'],
        user: server.user,
      });
    });

    it('speaks TLS to an https credential’s server and adds Basic inside it', async () => {
      const seen: IncomingHttpHeaders[] = [];
      const secure = createHttpsServer(
        {
          cert: await readFile(join(server.root, 'cert.pem')),
          key: await readFile(join(server.root, 'key.pem')),
        },
        (request, response) => {
          seen.push(request.headers);
          response.writeHead(200, { 'content-type': 'text/plain' }).end('calendar');
        },
      );
      await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
      const { port } = secure.address() as AddressInfo;
      const host = 'imap.metnos.test';
      const ca = await readFile(server.caFile!, 'utf8');
      const proxy = await startEgressProxy({
        socketPath: join(dir, 'https.sock'),
        rules: [parseDomainRule(`${host}:8443`) as Exclude<ReturnType<typeof parseDomainRule>, string>],
        hostOverrides: { [host]: `127.0.0.1:${port}` },
        credentials: {
          calendar: {
            kind: 'http',
            handle: 'calendar',
            url: `https://${host}:8443/dav/`,
            endpoint: { host, port: 8443, tls: 'tls', ca },
            username: 'me',
            password: new Secret('over-tls-1234'),
          },
        },
      });
      proxies.push(proxy);
      try {
        const answer = await (
          await open(
            proxy,
            `GET http://${host}:8443/dav/ HTTP/1.1\r\nHost: ${host}\r\nMetnos-Credential: calendar\r\n\r\n`,
          )
        ).rest();
        expect(answer).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\ncalendar\r\n/);
        expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from('me:over-tls-1234').toString('base64')}`);
        expect(seen[0]!.host).toBe(`${host}:8443`);
      } finally {
        await new Promise<void>((resolve) => secure.close(() => resolve()));
      }
    });

    it('refuses a server whose certificate does not chain to a trusted authority, before sending the password', async () => {
      for (const tls of ['tls', 'starttls'] as const) {
        const proxy = await proxyFor(tls, false);
        const refused = await (await open(proxy, connectHead(`${imap}:993`, 'mail'))).rest();
        expect(refused, tls).toMatch(
          /^HTTP\/1\.1 502[\s\S]*credential "mail" at imap\.metnos\.test:993: TLS with imap\.metnos\.test failed: self[- ]signed certificate/,
        );
      }
    });
  },
);
