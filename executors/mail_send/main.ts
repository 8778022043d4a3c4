import { randomUUID } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { defineExecutor, type ExecutorContext, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

// ─── The mail session: the egress proxy logs in with the person's credential ───
// Copied on purpose into every mail_* seed (executors/README.md): each signed file stands alone.

/** The credential handle the manifest declares (`secret:mail`). */
const HANDLE = 'mail';
const PROXY_REFUSAL = 'metnos egress proxy:';
const DEADLINE_MARGIN_MS = 300;

interface MailView {
  kind: 'mail';
  imap?: string;
  smtp?: string;
  address?: string;
}

/** Where the person's mail servers are; the password never reaches this process. */
function mailView(ctx: ExecutorContext): MailView {
  const view = ctx.credentials[HANDLE];
  if (view?.kind !== 'mail') {
    throw new ExecutorFailure(
      'NotConfigured',
      'no mail account is configured: add a [mail] table (imap, smtp, username, password_env) to credentials.toml in the Metnos config dir',
    );
  }
  return view;
}

function proxyAddress(): { host: string; port: number } {
  const value =
    process.env.HTTPS_PROXY ?? process.env.https_proxy ?? process.env.HTTP_PROXY ?? process.env.http_proxy;
  if (!value) {
    throw new ExecutorFailure(
      'NotConfigured',
      'the mail account is reached only through the egress proxy, and this call has none (it needs isolation tier full)',
    );
  }
  const url = new URL(value.includes('://') ? value : `http://${value}`);
  return { host: url.hostname, port: Number(url.port || 80) };
}

/**
 * Reads lines and exact byte counts from a socket, each against the call's
 * deadline (on `performance.now()`: the real clock, also when Date is pinned).
 */
class Reader {
  private buffer: Buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended: string | undefined;
  private readonly deadline: number;

  constructor(socket: Socket, deadline: number) {
    this.deadline = deadline;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.ended ??= 'the mail server closed the connection';
      this.wake?.();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.ended ??= `the connection failed: ${error.code ?? error.message}`;
      this.wake?.();
    });
  }

  private async more(): Promise<void> {
    if (this.ended !== undefined) throw new ExecutorFailure('Network', this.ended);
    const left = this.deadline - performance.now();
    if (left <= 0) throw new ExecutorFailure('Network', 'the mail server did not answer in time');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  /** One CRLF-terminated line, without the CRLF. */
  async line(): Promise<Buffer> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n');
      if (end !== -1) {
        const line = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end + 2);
        return line;
      }
      if (this.buffer.length > MAX_LINE_BYTES)
        throw new ExecutorFailure('Network', 'the mail server sent an overlong line');
      await this.more();
    }
  }

  /** Exactly `size` bytes. */
  async bytes(size: number): Promise<Buffer> {
    while (this.buffer.length < size) await this.more();
    const bytes = this.buffer.subarray(0, size);
    this.buffer = this.buffer.subarray(size);
    return bytes;
  }

  /** What is left until the peer closes (at most 4 KiB), for a refusal's text. */
  async rest(): Promise<string> {
    try {
      while (this.ended === undefined && this.buffer.length < 4096) await this.more();
    } catch {
      // a refusal ends with the connection; what arrived is the reason
    }
    return this.buffer.subarray(0, 4096).toString('utf8');
  }
}

const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Opens `CONNECT <server>` through the egress proxy with `Metnos-Credential: mail`.
 * The proxy checks the handle and the server, logs in, and hands back the session.
 */
async function openSession(
  ctx: ExecutorContext,
  role: 'imap' | 'smtp',
): Promise<{ socket: Socket; reader: Reader }> {
  const view = mailView(ctx);
  const target = view[role];
  if (!target) {
    throw new ExecutorFailure(
      'NotConfigured',
      `the mail account has no ${role.toUpperCase()} server configured`,
    );
  }
  const proxy = proxyAddress();
  const deadline = performance.now() + ctx.remainingMs() - DEADLINE_MARGIN_MS;
  const socket = netConnect({ host: proxy.host, port: proxy.port });
  socket.setNoDelay(true);
  const reader = new Reader(socket, deadline);
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nMetnos-Credential: ${HANDLE}\r\n\r\n`);
  let status: string;
  try {
    status = (await reader.line()).toString('latin1');
    while ((await reader.line()).length > 0) {
      // the proxy's response headers
    }
  } catch (error) {
    socket.destroy();
    throw error instanceof ExecutorFailure
      ? new ExecutorFailure('Network', `the egress proxy did not answer: ${error.message}`)
      : error;
  }
  const code = Number(/^HTTP\/\d\.\d (\d{3})/.exec(status)?.[1] ?? 0);
  if (code === 200) return { socket, reader };
  const said = (await reader.rest()).replace(PROXY_REFUSAL, '').trim().slice(0, 300);
  socket.destroy();
  const reason = said || `the egress proxy answered ${code}`;
  if (code === 401) throw new ExecutorFailure('AuthFailed', reason);
  if (code === 403) throw new ExecutorFailure('Forbidden', reason);
  throw new ExecutorFailure('Network', reason);
}

// ─── mail_send: one message over SMTP submission (RFC 5321, 5322, 2047) ───

interface Args {
  to: string | string[];
  cc?: string[];
  subject: string;
  body: string;
  reply_to?: string;
}

interface Output {
  message_id: string;
  from: string;
  recipients: string[];
  sent_at: string;
  size: number;
}

const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const MAX_RECIPIENTS = 50;

/** `=?UTF-8?B?…?=` words for non-ASCII header text, cut on character boundaries, folded. */
function encodeHeader(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const words: string[] = [];
  let chunk = '';
  for (const char of value) {
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word, 'utf8').toString('base64')}?=`).join('\r\n ');
}

/** An address as given (`ada@example.com` or `Ada Rossi <ada@example.com>`): the bare address and the header form. */
function addressOf(value: string): { address: string; header: string } {
  const trimmed = value.trim();
  const named = /^(.*?)\s*<([^<>]+)>$/.exec(trimmed);
  const address = (named ? named[2]! : trimmed).trim();
  if (!ADDRESS.test(address) || address.length > 254) {
    throw new ExecutorFailure(
      'BadAddress',
      `"${value.slice(0, 100)}" is not a mail address such as ada@example.com`,
    );
  }
  const name = (named?.[1] ?? '').trim().replace(/^"(.*)"$/, '$1');
  if (!name) return { address, header: address };
  const shown = /^[\x20-\x7e]*$/.test(name)
    ? `"${name.replace(/["\\]/g, (char) => `\\${char}`)}"`
    : encodeHeader(name);
  return { address, header: `${shown} <${address}>` };
}

/** Quoted-printable (RFC 2045) of UTF-8 text with CRLF line ends. */
function quotedPrintable(body: string): string {
  return body
    .split('\r\n')
    .map((line) => {
      const bytes = Buffer.from(line, 'utf8');
      let out = '';
      let width = 0;
      bytes.forEach((byte, index) => {
        const last = index === bytes.length - 1;
        const plain = (byte >= 33 && byte <= 126 && byte !== 61) || ((byte === 32 || byte === 9) && !last);
        const piece = plain
          ? String.fromCharCode(byte)
          : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
        if (width + piece.length > 75) {
          out += '=\r\n';
          width = 0;
        }
        out += piece;
        width += piece.length;
      });
      return out;
    })
    .join('\r\n');
}

/** The RFC 5322 message: headers, then the body as 7bit or quoted-printable. */
function composeMessage(settings: {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string | undefined;
  subject: string;
  body: string;
  messageId: string;
  date: Date;
}): string {
  const body = settings.body.replace(/\r?\n/g, '\r\n');
  const plain = /^[\t\r\n -~]*$/.test(body) && body.split('\r\n').every((line) => line.length <= 998);
  const headers = [
    `From: ${settings.from}`,
    `To: ${settings.to.join(',\r\n ')}`,
    ...(settings.cc.length > 0 ? [`Cc: ${settings.cc.join(',\r\n ')}`] : []),
    ...(settings.replyTo ? [`Reply-To: ${settings.replyTo}`] : []),
    `Subject: ${encodeHeader(settings.subject)}`,
    `Date: ${settings.date.toUTCString().replace(/GMT$/, '+0000')}`,
    `Message-ID: <${settings.messageId}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Transfer-Encoding: ${plain ? '7bit' : 'quoted-printable'}`,
    'User-Agent: Metnos mail_send/1.0',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${plain ? body : quotedPrintable(body)}\r\n`;
}

/** Reads one SMTP reply, continuation lines included. */
async function smtpReply(reader: Reader): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  for (;;) {
    const line = (await reader.line()).toString('utf8');
    const match = /^(\d{3})([ -]?)(.*)$/.exec(line);
    if (!match) throw new ExecutorFailure('Network', 'the mail server answered outside SMTP');
    lines.push(match[3]!);
    if (match[2] !== '-') return { code: Number(match[1]), text: lines.join(' ').slice(0, 300) };
  }
}

/** A refused step: 5xx is the server's final word (Rejected), 4xx a temporary one (Network, try later). */
function refusal(step: string, reply: { code: number; text: string }): ExecutorFailure {
  return reply.code >= 500
    ? new ExecutorFailure('Rejected', `the mail server refused ${step}: ${reply.code} ${reply.text}`)
    : new ExecutorFailure(
        'Network',
        `the mail server refused ${step} for now, try later: ${reply.code} ${reply.text}`,
      );
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const view = mailView(ctx);
    if (!view.address) {
      throw new ExecutorFailure(
        'NotConfigured',
        'the mail account has no sender address: set address in its [mail] table of credentials.toml',
      );
    }
    const fromName = typeof ctx.config.from_name === 'string' ? ctx.config.from_name.slice(0, 100) : '';
    const from = addressOf(fromName ? `${fromName} <${view.address}>` : view.address);
    const to = (Array.isArray(args.to) ? args.to : args.to.split(','))
      .filter((value) => value.trim())
      .map(addressOf);
    const cc = (args.cc ?? []).map(addressOf);
    if (to.length === 0) throw new ExecutorFailure('BadAddress', 'the message has no recipient');
    const recipients = [...new Set([...to, ...cc].map((entry) => entry.address))];
    if (recipients.length > MAX_RECIPIENTS)
      throw new ExecutorFailure('BadAddress', `at most ${MAX_RECIPIENTS} recipients in one message`);
    const replyTo = args.reply_to ? addressOf(args.reply_to).header : undefined;
    const date = new Date();
    const messageId = `${randomUUID()}@${from.address.split('@')[1]}`;
    const message = composeMessage({
      from: from.header,
      to: to.map((entry) => entry.header),
      cc: cc.map((entry) => entry.header),
      replyTo,
      subject: args.subject,
      body: args.body,
      messageId,
      date,
    });

    const { socket, reader } = await openSession(ctx, 'smtp');
    const send = async (line: string) => {
      socket.write(`${line}\r\n`);
      return smtpReply(reader);
    };
    try {
      const greeting = await smtpReply(reader);
      if (greeting.code !== 220) throw refusal('the session', greeting);
      let hello = await send('EHLO metnos');
      if (hello.code !== 250) hello = await send('HELO metnos');
      if (hello.code !== 250) throw refusal('EHLO', hello);
      const sender = await send(`MAIL FROM:<${from.address}>`);
      if (sender.code !== 250) throw refusal(`the sender ${from.address}`, sender);
      const refused: string[] = [];
      for (const recipient of recipients) {
        const answer = await send(`RCPT TO:<${recipient}>`);
        if (answer.code !== 250 && answer.code !== 251)
          refused.push(`${recipient} (${answer.code} ${answer.text})`);
      }
      if (refused.length > 0) {
        // nothing is sent unless every recipient is accepted
        await send('RSET').catch(() => undefined);
        throw new ExecutorFailure(
          'Rejected',
          `the mail server refused ${refused.join(', ')}; nothing was sent`,
        );
      }
      const data = await send('DATA');
      if (data.code !== 354) throw refusal('the message', data);
      // dot-stuffing: a line that starts with "." gets another
      socket.write(`${message.replace(/(^|\r\n)\./g, '$1..')}.\r\n`);
      let accepted: { code: number; text: string };
      try {
        accepted = await smtpReply(reader);
      } catch (error) {
        throw new ExecutorFailure(
          'Network',
          `the connection broke after the message was sent and before the server confirmed it; it may or may not have been delivered (${(error as Error).message})`,
        );
      }
      if (accepted.code !== 250) throw refusal('the message', accepted);
      socket.write('QUIT\r\n');
      return ok({
        message_id: messageId,
        from: from.address,
        recipients,
        sent_at: date.toISOString(),
        size: Buffer.byteLength(message, 'utf8'),
      });
    } finally {
      socket.destroy();
    }
  },
});
