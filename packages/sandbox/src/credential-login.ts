import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { CredentialEndpoint, HttpCredential, MailCredential } from '@metnos/executor-sdk';

/**
 * Why a login did not happen: the server refused the credential (`auth`),
 * or the conversation broke (`network`: closed, timed out, TLS failed, an
 * answer that is not the protocol). The message names the handle and the
 * server, never the secret.
 */
export class LoginFailure extends Error {
  readonly kind: 'auth' | 'network';

  constructor(kind: 'auth' | 'network', message: string) {
    super(message);
    this.name = 'LoginFailure';
    this.kind = kind;
  }
}

/** An authenticated upstream and what to tell the executor first. */
export interface LoginResult {
  /** The upstream socket (TLS when the endpoint uses it), logged in. */
  socket: Socket;
  /** The synthetic greeting the executor reads first (`* PREAUTH …`, `220 …`). */
  greeting: string;
  /** SMTP only: the answer to the executor's first EHLO, without AUTH and STARTTLS. */
  ehloReply?: (name: string) => string;
}

const MAX_LINE = 16 * 1024;
const MAX_LINES = 256;

/** Reads CRLF-terminated lines from a socket, one at a time, with a deadline. */
class LineReader {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private ended: Error | undefined;
  private lines = 0;
  private readonly onData = (chunk: Buffer) => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    this.waiting?.();
  };
  private readonly onEnd = (error?: Error) => {
    this.ended ??= error ?? new Error('the server closed the connection');
    this.waiting?.();
  };

  readonly socket: Socket;
  private readonly deadline: number;

  constructor(socket: Socket, deadline: number) {
    this.socket = socket;
    this.deadline = deadline;
    socket.on('data', this.onData);
    socket.on('end', () => this.onEnd());
    socket.on('close', () => this.onEnd());
    socket.on('error', (error) => this.onEnd(error));
  }

  async line(): Promise<string> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n');
      if (end !== -1) {
        const line = this.buffer.subarray(0, end).toString('utf8');
        this.buffer = this.buffer.subarray(end + 2);
        if (++this.lines > MAX_LINES) throw new LoginFailure('network', 'the server sent too many lines');
        return line;
      }
      if (this.buffer.length > MAX_LINE)
        throw new LoginFailure('network', 'the server sent an overlong line');
      if (this.ended) throw new LoginFailure('network', this.ended.message);
      const left = this.deadline - Date.now();
      if (left <= 0) throw new LoginFailure('network', 'the server did not answer in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = undefined;
    }
  }

  /**
   * Stops reading; returns what arrived beyond the last line read. `pause`
   * holds the socket's further data for whoever reads it next (not before a
   * TLS upgrade, which takes the socket over).
   */
  release(pause = false): Buffer {
    this.socket.off('data', this.onData);
    if (pause) this.socket.pause();
    const rest = this.buffer;
    this.buffer = Buffer.alloc(0);
    return rest;
  }
}

/**
 * Wraps a connected socket in TLS, checking the certificate against the
 * endpoint's host name and the system's roots (or the credential's `ca_file`).
 */
async function startTls(socket: Socket, endpoint: CredentialEndpoint, deadline: number): Promise<Socket> {
  const secure = tlsConnect({
    socket,
    servername: endpoint.host,
    ...(endpoint.ca ? { ca: endpoint.ca } : {}),
  });
  return await new Promise<Socket>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new LoginFailure('network', 'the TLS handshake did not finish in time')),
      Math.max(0, deadline - Date.now()),
    );
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(secure);
    });
    secure.once('error', (error) => {
      clearTimeout(timer);
      reject(new LoginFailure('network', `TLS with ${endpoint.host} failed: ${error.message}`));
    });
  });
}

/** Removes the credential's secrets (and their base64 forms) from a server's words before anyone sees them. */
function redactor(values: readonly string[]): (text: string) => string {
  const secrets = values.filter((value) => value.length >= 3);
  return (text) => {
    let out = text.slice(0, 300);
    for (const secret of secrets) out = out.split(secret).join('<secret>');
    return out;
  };
}

function plainToken(username: string, password: string): string {
  return Buffer.from(`\0${username}\0${password}`, 'utf8').toString('base64');
}

/** An IMAP quoted string, or undefined when the value cannot be one (CR, LF, NUL, 8-bit). */
function imapQuoted(value: string): string | undefined {
  if (/[\r\n\0\u0080-\uffff]/.test(value)) return undefined;
  return `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

const IMAP_HIDDEN = /^(AUTH=|STARTTLS$|LOGINDISABLED$|SASL-IR$)/i;

function imapCapabilities(line: string): string[] | undefined {
  const coded = /\[CAPABILITY ([^\]]*)\]/i.exec(line);
  if (coded) return coded[1]!.split(' ').filter(Boolean);
  const untagged = /^\* CAPABILITY (.*)$/i.exec(line);
  return untagged ? untagged[1]!.split(' ').filter(Boolean) : undefined;
}

/**
 * Logs in to an IMAP server (RFC 9051 / 3501) on the host's side: reads the
 * greeting, upgrades with STARTTLS when the endpoint says so, then
 * `AUTHENTICATE PLAIN` (with SASL-IR when offered) or `LOGIN`. The executor
 * then gets a synthetic `* PREAUTH` greeting with the server's capabilities
 * minus the authentication ones.
 *
 * @example
 * const { socket, greeting } = await imapLogin(upstream, mail.imap!, mail, Date.now() + 15_000);
 */
export async function imapLogin(
  upstream: Socket,
  endpoint: CredentialEndpoint,
  credential: MailCredential,
  deadline: number,
): Promise<LoginResult> {
  const password = credential.password.reveal();
  const redact = redactor([password, credential.username, plainToken(credential.username, password)]);
  let socket = endpoint.tls === 'tls' ? await startTls(upstream, endpoint, deadline) : upstream;
  let reader = new LineReader(socket, deadline);
  let tag = 0;
  /** Sends one command; `continuation` answers a `+` (AUTHENTICATE PLAIN without SASL-IR). */
  const command = async (
    text: string,
    continuation?: string,
  ): Promise<{ ok: boolean; line: string; untagged: string[] }> => {
    const id = `M${++tag}`;
    socket.write(`${id} ${text}\r\n`);
    const untagged: string[] = [];
    let continued = false;
    for (;;) {
      const line = await reader.line();
      if (line.startsWith(`${id} `)) return { ok: /^\S+ OK\b/i.test(line), line, untagged };
      if (line.startsWith('+')) {
        if (continuation === undefined || continued)
          throw new LoginFailure('network', 'the IMAP server asked for more than the login needs');
        continued = true;
        socket.write(`${continuation}\r\n`);
        continue;
      }
      untagged.push(line);
    }
  };
  const greeting = await reader.line();
  if (!/^\* OK\b/i.test(greeting))
    throw new LoginFailure('network', `the IMAP server greeted with "${redact(greeting)}"`);
  let capabilities = imapCapabilities(greeting);
  const askCapabilities = async () => {
    const answer = await command('CAPABILITY');
    return answer.untagged.map(imapCapabilities).find((found) => found !== undefined) ?? [];
  };
  if (endpoint.tls === 'starttls') {
    const answer = await command('STARTTLS');
    if (!answer.ok) throw new LoginFailure('network', 'the IMAP server refused STARTTLS');
    const early = reader.release();
    if (early.length > 0) throw new LoginFailure('network', 'the IMAP server sent data before TLS started');
    socket = await startTls(socket, endpoint, deadline);
    reader = new LineReader(socket, deadline);
    capabilities = undefined;
  }
  capabilities ??= await askCapabilities();
  const upper = capabilities.map((capability) => capability.toUpperCase());
  let answer: { ok: boolean; line: string; untagged: string[] };
  if (upper.includes('AUTH=PLAIN')) {
    const token = plainToken(credential.username, password);
    answer = upper.includes('SASL-IR')
      ? await command(`AUTHENTICATE PLAIN ${token}`)
      : await command('AUTHENTICATE PLAIN', token);
  } else {
    const user = imapQuoted(credential.username);
    const pass = imapQuoted(password);
    if (upper.includes('LOGINDISABLED') || user === undefined || pass === undefined)
      throw new LoginFailure('network', 'the IMAP server offers no login this credential can use');
    answer = await command(`LOGIN ${user} ${pass}`);
  }
  if (!answer.ok)
    throw new LoginFailure(
      'auth',
      `the IMAP server refused the login: ${redact(answer.line.replace(/^\S+ /, ''))}`,
    );
  const after =
    imapCapabilities(answer.line) ??
    answer.untagged.map(imapCapabilities).find((found) => found !== undefined) ??
    (await askCapabilities());
  const rest = reader.release(true);
  if (rest.length > 0) socket.unshift(rest);
  const shown = after.filter((capability) => !IMAP_HIDDEN.test(capability));
  return {
    socket,
    greeting: `* PREAUTH [CAPABILITY ${shown.join(' ')}] logged in by Metnos with credential "${credential.handle}"\r\n`,
  };
}

/** Reads one SMTP reply (its continuation lines too): the code and the text lines. */
async function smtpReply(reader: LineReader): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  for (;;) {
    const line = await reader.line();
    const match = /^(\d{3})([ -])(.*)$/.exec(line);
    if (!match) throw new LoginFailure('network', 'the SMTP server answered outside the protocol');
    lines.push(match[3]!);
    if (match[2] === ' ') return { code: Number(match[1]), lines };
  }
}

const SMTP_HIDDEN = /^(AUTH\b|AUTH=|STARTTLS$)/i;

/**
 * Logs in to an SMTP submission server (RFC 5321, RFC 4954) on the host's
 * side: greeting, `EHLO`, STARTTLS when the endpoint says so, then
 * `AUTH PLAIN` (or `AUTH LOGIN` when only that is offered). The executor gets
 * a synthetic `220` and its first `EHLO` answered from the server's
 * extensions minus AUTH and STARTTLS.
 *
 * @example
 * const { socket, greeting, ehloReply } = await smtpLogin(upstream, mail.smtp!, mail, Date.now() + 15_000);
 */
export async function smtpLogin(
  upstream: Socket,
  endpoint: CredentialEndpoint,
  credential: MailCredential,
  deadline: number,
): Promise<LoginResult> {
  const password = credential.password.reveal();
  const plain = plainToken(credential.username, password);
  const redact = redactor([password, credential.username, plain]);
  let socket = endpoint.tls === 'tls' ? await startTls(upstream, endpoint, deadline) : upstream;
  let reader = new LineReader(socket, deadline);
  const send = async (line: string) => {
    socket.write(`${line}\r\n`);
    return smtpReply(reader);
  };
  const greeting = await smtpReply(reader);
  if (greeting.code !== 220)
    throw new LoginFailure(
      'network',
      `the SMTP server greeted with ${greeting.code} ${redact(greeting.lines[0] ?? '')}`,
    );
  let ehlo = await send('EHLO metnos');
  if (ehlo.code !== 250) throw new LoginFailure('network', `the SMTP server refused EHLO (${ehlo.code})`);
  if (endpoint.tls === 'starttls') {
    const answer = await send('STARTTLS');
    if (answer.code !== 220) throw new LoginFailure('network', 'the SMTP server refused STARTTLS');
    if (reader.release().length > 0)
      throw new LoginFailure('network', 'the SMTP server sent data before TLS started');
    socket = await startTls(socket, endpoint, deadline);
    reader = new LineReader(socket, deadline);
    ehlo = await send('EHLO metnos');
    if (ehlo.code !== 250) throw new LoginFailure('network', `the SMTP server refused EHLO (${ehlo.code})`);
  }
  const extensions = ehlo.lines.slice(1);
  const auth =
    extensions
      .find((line) => /^AUTH[ =]/i.test(line))
      ?.toUpperCase()
      .split(/[ =]/)
      .slice(1) ?? [];
  let answer: { code: number; lines: string[] };
  if (auth.includes('PLAIN')) {
    answer = await send(`AUTH PLAIN ${plain}`);
  } else if (auth.includes('LOGIN')) {
    answer = await send('AUTH LOGIN');
    if (answer.code === 334) answer = await send(Buffer.from(credential.username).toString('base64'));
    if (answer.code === 334) answer = await send(Buffer.from(password).toString('base64'));
  } else {
    throw new LoginFailure('network', 'the SMTP server offers no AUTH PLAIN or LOGIN');
  }
  if (answer.code !== 235) {
    const kind = answer.code === 535 || answer.code === 534 || answer.code === 530 ? 'auth' : 'network';
    throw new LoginFailure(
      kind,
      `the SMTP server refused the login: ${answer.code} ${redact(answer.lines.join(' '))}`,
    );
  }
  const rest = reader.release(true);
  if (rest.length > 0) socket.unshift(rest);
  const shown = extensions.filter((line) => !SMTP_HIDDEN.test(line));
  const server = endpoint.host;
  return {
    socket,
    greeting: `220 ${server} ESMTP logged in by Metnos with credential "${credential.handle}"\r\n`,
    ehloReply: (name) =>
      shown.length === 0
        ? `250 ${server} greets ${name}\r\n`
        : [
            `250-${server} greets ${name}`,
            ...shown.map((line, index) => `250${index === shown.length - 1 ? ' ' : '-'}${line}`),
          ]
            .join('\r\n')
            .concat('\r\n'),
  };
}

/**
 * The `Authorization` header value of an HTTP credential: Basic with the
 * username and password, or Bearer with the token.
 *
 * @example
 * authorizationOf(calendar); // 'Basic bWU6cw=='
 */
export function authorizationOf(credential: HttpCredential): string {
  if (credential.token) return `Bearer ${credential.token.reveal()}`;
  const pair = `${credential.username ?? ''}:${credential.password?.reveal() ?? ''}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/** Connects TLS over an already open socket when the endpoint uses TLS from the first byte. */
export async function secureUpstream(
  socket: Socket,
  endpoint: CredentialEndpoint,
  deadline: number,
): Promise<Socket> {
  return endpoint.tls === 'tls' ? startTls(socket, endpoint, deadline) : socket;
}
