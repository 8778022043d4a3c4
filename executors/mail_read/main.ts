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

// ─── A minimal IMAP client (RFC 9051 / 3501): tagged commands, literals, parsed responses ───

/** An IMAP value: an atom or string, a literal's bytes, NIL, or a parenthesised list. */
type ImapValue = string | Buffer | null | ImapValue[];

interface ImapReply {
  ok: boolean;
  status: string;
  text: string;
  untagged: ImapValue[][];
}

const MAX_LITERAL_BYTES = 32 * 1024 * 1024;

/** Parses one response (text parts and literal bytes) into values; `[…]` sections stay inside their atom. */
function parseImap(parts: Array<string | Buffer>): ImapValue[] {
  const root: ImapValue[] = [];
  const stack: ImapValue[][] = [root];
  for (const part of parts) {
    if (typeof part !== 'string') {
      stack.at(-1)!.push(part);
      continue;
    }
    let index = 0;
    while (index < part.length) {
      const char = part[index]!;
      if (char === ' ') {
        index++;
      } else if (char === '(') {
        const list: ImapValue[] = [];
        stack.at(-1)!.push(list);
        stack.push(list);
        index++;
      } else if (char === ')') {
        if (stack.length > 1) stack.pop();
        index++;
      } else if (char === '"') {
        let value = '';
        index++;
        while (index < part.length && part[index] !== '"') {
          if (part[index] === '\\') index++;
          value += part[index] ?? '';
          index++;
        }
        index++;
        stack.at(-1)!.push(value);
      } else if (char === '{' && /^\{\d+\+?\}$/.test(part.slice(index))) {
        // a literal's size at the end of the text: the bytes are the next part
        index = part.length;
      } else {
        const start = index;
        let depth = 0;
        while (index < part.length) {
          const next = part[index]!;
          if (next === '[') depth++;
          else if (next === ']') depth--;
          else if (depth <= 0 && (next === ' ' || next === '(' || next === ')')) break;
          index++;
        }
        const atom = part.slice(start, index);
        stack.at(-1)!.push(atom === 'NIL' ? null : atom);
      }
    }
  }
  return root;
}

/** A value as text: strings as they are, literals decoded as UTF-8, NIL and lists as ''. */
function text(value: ImapValue | undefined): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return '';
}

/** Mailbox names travel in modified UTF-7 (RFC 3501 §5.1.3). */
function encodeMailbox(name: string): string {
  let out = '';
  let pending = '';
  const flush = () => {
    if (!pending) return;
    const bytes = Buffer.from(pending, 'utf16le').swap16();
    out += `&${bytes.toString('base64').replace(/=+$/, '').replace(/\//g, ',')}-`;
    pending = '';
  };
  for (const char of name) {
    const code = char.codePointAt(0)!;
    if (code >= 0x20 && code <= 0x7e) {
      flush();
      out += char === '&' ? '&-' : char;
    } else {
      pending += char;
    }
  }
  flush();
  return out;
}

/** A command argument: a quoted string when it can be one, else a literal. */
function quoted(value: string): string | Buffer {
  if (/^[\x20-\x7e]*$/.test(value)) return `"${value.replace(/["\\]/g, (char) => `\\${char}`)}"`;
  return Buffer.from(value, 'utf8');
}

/** A mailbox argument: modified UTF-7, quoted. */
function mailboxArgument(name: string): string {
  return quoted(encodeMailbox(name)) as string;
}

class Imap {
  readonly capabilities = new Set<string>();
  private tag = 0;
  private readonly socket: Socket;
  private readonly reader: Reader;

  constructor(socket: Socket, reader: Reader) {
    this.socket = socket;
    this.reader = reader;
  }

  /** One response: its line, and each literal it announces with the text after it. */
  async response(): Promise<Array<string | Buffer>> {
    const parts: Array<string | Buffer> = [];
    for (;;) {
      const line = (await this.reader.line()).toString('utf8');
      parts.push(line);
      const literal = /\{(\d+)\+?\}$/.exec(line);
      if (!literal) return parts;
      const size = Number(literal[1]);
      if (size > MAX_LITERAL_BYTES)
        throw new ExecutorFailure('Network', 'the mail server sent too large a literal');
      parts.push(await this.reader.bytes(size));
    }
  }

  private reply(first: string, untagged: ImapValue[][]): ImapReply {
    const match = /^\S+ (OK|NO|BAD)\b ?(.*)$/i.exec(first);
    const status = match?.[1]?.toUpperCase() ?? 'BAD';
    return { ok: status === 'OK', status, text: (match?.[2] ?? first).slice(0, 300), untagged };
  }

  /** Runs one command: strings are sent as they are, Buffers as literals. */
  async run(...pieces: Array<string | Buffer>): Promise<ImapReply> {
    const id = `m${++this.tag}`;
    const untagged: ImapValue[][] = [];
    let line = `${id} `;
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        line += piece;
        continue;
      }
      if (this.capabilities.has('LITERAL+')) {
        this.socket.write(`${line}{${piece.length}+}\r\n`);
        this.socket.write(piece);
        line = '';
        continue;
      }
      this.socket.write(`${line}{${piece.length}}\r\n`);
      line = '';
      for (;;) {
        const parts = await this.response();
        const first = parts[0] as string;
        if (first.startsWith('+')) break;
        if (first.startsWith(`${id} `)) return this.reply(first, untagged);
        untagged.push(parseImap(parts));
      }
      this.socket.write(piece);
    }
    this.socket.write(`${line}\r\n`);
    for (;;) {
      const parts = await this.response();
      const first = parts[0] as string;
      if (first.startsWith(`${id} `)) return this.reply(first, untagged);
      if (!first.startsWith('+')) untagged.push(parseImap(parts));
    }
  }

  /** Runs a command that must succeed; a NO or BAD becomes `failure`. */
  async must(
    failure: (reply: ImapReply) => ExecutorFailure,
    ...pieces: Array<string | Buffer>
  ): Promise<ImapReply> {
    const reply = await this.run(...pieces);
    if (!reply.ok) throw failure(reply);
    return reply;
  }

  /** Opens a folder (read-only with EXAMINE); a folder that is not there is NotFound. */
  async open(folder: string, readOnly: boolean): Promise<{ exists: number }> {
    const reply = await this.run(`${readOnly ? 'EXAMINE' : 'SELECT'} `, mailboxArgument(folder));
    if (!reply.ok)
      throw new ExecutorFailure('NotFound', `no folder "${folder}" in this mailbox (${reply.text})`);
    const exists = reply.untagged.find((values) => text(values[2]).toUpperCase() === 'EXISTS');
    return { exists: Number(text(exists?.[1])) || 0 };
  }

  async close(): Promise<void> {
    try {
      this.socket.write(`m${++this.tag} LOGOUT\r\n`);
    } catch {
      // closing anyway
    }
    this.socket.destroy();
  }
}

/** The logged-in IMAP session the proxy hands over (`* PREAUTH`), with its capabilities. */
async function openImap(ctx: ExecutorContext): Promise<Imap> {
  const { socket, reader } = await openSession(ctx, 'imap');
  const imap = new Imap(socket, reader);
  try {
    const greeting = (await imap.response())[0] as string;
    if (!/^\* PREAUTH\b/i.test(greeting)) {
      throw new ExecutorFailure('Network', 'the mail server did not hand over a logged-in session');
    }
    let listed = /\[CAPABILITY ([^\]]*)\]/i.exec(greeting)?.[1];
    if (listed === undefined) {
      const reply = await imap.run('CAPABILITY');
      listed = reply.untagged
        .find((values) => text(values[1]).toUpperCase() === 'CAPABILITY')
        ?.slice(2)
        .map(text)
        .join(' ');
    }
    for (const capability of (listed ?? '').split(' '))
      if (capability) imap.capabilities.add(capability.toUpperCase());
    return imap;
  } catch (error) {
    await imap.close();
    throw error;
  }
}

// ─── Reading messages: headers (RFC 5322, RFC 2047), transfer encodings, charsets ───

/** Bytes as text in a charset; unknown charsets fall back to UTF-8, then Latin-1. */
function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  const label = (charset ?? 'utf-8').trim().toLowerCase();
  try {
    return new TextDecoder(label === 'us-ascii' ? 'utf-8' : label, { fatal: true }).decode(bytes);
  } catch {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return bytes.toString('latin1');
    }
  }
}

/** RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?ISO-8859-1?Q?…?=`), adjacent ones joined. */
function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)\s+(?==\?)/g, '$1')
    .replace(
      /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g,
      (_, charset: string, encoding: string, data: string) => {
        const bytes =
          encoding.toUpperCase() === 'B'
            ? Buffer.from(data, 'base64')
            : Buffer.from(
                data
                  .replace(/_/g, ' ')
                  .replace(/=([0-9A-Fa-f]{2})/g, (__, hex: string) =>
                    String.fromCharCode(Number.parseInt(hex, 16)),
                  ),
                'latin1',
              );
        return decodeCharset(bytes, charset.split('*')[0]);
      },
    );
}

/** Header fields by lowercase name (folded lines joined), values decoded. */
function parseHeaders(raw: Buffer): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  const unfolded = decodeCharset(raw, 'utf-8').replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = decodeWords(line.slice(colon + 1).trim());
    headers.set(name, [...(headers.get(name) ?? []), value]);
  }
  return headers;
}

function first(headers: Map<string, string[]>, name: string): string {
  return headers.get(name)?.[0] ?? '';
}

/** An RFC 5322 date as ISO 8601, or '' when it cannot be read. */
function isoDate(value: string): string {
  const time = Date.parse(value.replace(/\s*\([^)]*\)\s*$/, ''));
  return Number.isFinite(time) ? new Date(time).toISOString() : '';
}

/** Undoes a Content-Transfer-Encoding; a cut base64 or quoted-printable tail is dropped, not guessed. */
function decodeTransfer(bytes: Buffer, encoding: string): Buffer {
  const kind = encoding.trim().toLowerCase();
  if (kind === 'base64') {
    const clean = bytes.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, '');
    return Buffer.from(clean.slice(0, clean.length - (clean.length % 4)), 'base64');
  }
  if (kind === 'quoted-printable') {
    const textPart = bytes
      .toString('latin1')
      .replace(/=\r?\n/g, '')
      .replace(/=[0-9A-Fa-f]?$/, '');
    return Buffer.from(
      textPart.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      ),
      'latin1',
    );
  }
  return bytes;
}

/** HTML as readable text: no tags, scripts or styles; common entities decoded. */
function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/gi, ' ')
    .replace(/&lt;/gi, '<')
    .replace(/&gt;/gi, '>')
    .replace(/&quot;/gi, '"')
    .replace(/&#39;|&apos;/gi, "'")
    .replace(/&amp;/gi, '&')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n\s*/g, '\n\n')
    .trim();
}

// ─── mail_read ───

interface Args {
  uid: number;
  folder?: string;
  max_chars?: number;
}

interface Attachment {
  name: string;
  type: string;
  size: number;
  part: string;
}

interface Output {
  uid: number;
  folder: string;
  message_id: string;
  from: string;
  to: string;
  cc: string;
  reply_to: string;
  subject: string;
  date: string;
  flags: string[];
  size: number;
  text: string;
  format: 'plain' | 'html' | 'none';
  truncated: boolean;
  attachments: Attachment[];
  headers: Record<string, string>;
}

const FILTER_HEADERS = [
  'x-spam-flag',
  'x-spam-status',
  'x-spam-level',
  'x-spam-score',
  'x-spam',
  'list-unsubscribe',
  'list-id',
  'precedence',
  'auto-submitted',
];

/** One leaf of a BODYSTRUCTURE: what it is, where it is, whether it is an attachment. */
interface Leaf {
  section: string;
  type: string;
  charset: string | undefined;
  encoding: string;
  size: number;
  name: string | undefined;
  attachment: boolean;
}

function pairs(value: ImapValue | undefined): Map<string, string> {
  const found = new Map<string, string>();
  if (!Array.isArray(value)) return found;
  for (let index = 0; index + 1 < value.length; index += 2)
    found.set(text(value[index]).toLowerCase(), text(value[index + 1]));
  return found;
}

/** A file name from `name`/`filename`, RFC 2231 (`filename*=utf-8''…`) or RFC 2047 encoded. */
function fileName(...sources: Array<Map<string, string>>): string | undefined {
  for (const source of sources) {
    for (const key of ['filename*', 'name*']) {
      const encoded = source.get(key);
      const match = encoded && /^([^']*)'[^']*'(.*)$/.exec(encoded);
      if (match) {
        try {
          return decodeCharset(
            Buffer.from(decodeURIComponent(match[2]!.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')), 'utf8'),
            'utf-8',
          );
        } catch {
          return match[2];
        }
      }
    }
    const plain = source.get('filename') ?? source.get('name');
    if (plain) return decodeWords(plain);
  }
  return undefined;
}

/** The leaves of a BODYSTRUCTURE with their section numbers (`1`, `2.1`, …). */
function leaves(node: ImapValue[], section: string, out: Leaf[], depth = 0): Leaf[] {
  if (depth > 20) return out;
  if (Array.isArray(node[0])) {
    let index = 0;
    for (const child of node) {
      if (!Array.isArray(child)) break;
      index++;
      leaves(child, section ? `${section}.${index}` : String(index), out, depth + 1);
    }
    return out;
  }
  const type = `${text(node[0])}/${text(node[1])}`.toLowerCase();
  const parameters = pairs(node[2]);
  const base = type.startsWith('text/') ? 8 : type === 'message/rfc822' ? 10 : 7;
  const disposition = node[base + 1];
  const dispositionKind = Array.isArray(disposition) ? text(disposition[0]).toLowerCase() : '';
  const name = fileName(pairs(Array.isArray(disposition) ? disposition[1] : undefined), parameters);
  const encoding = text(node[5]).toLowerCase();
  const encodedSize = Number(text(node[6])) || 0;
  out.push({
    section: section || '1',
    type,
    charset: parameters.get('charset'),
    encoding,
    size: encoding === 'base64' ? Math.floor((encodedSize * 3) / 4) : encodedSize,
    name,
    attachment:
      dispositionKind === 'attachment' ||
      name !== undefined ||
      !(type === 'text/plain' || type === 'text/html'),
  });
  return out;
}

function fetchedFields(reply: ImapReply): Map<string, ImapValue> | undefined {
  const values = reply.untagged.find(
    (found) => text(found[2]).toUpperCase() === 'FETCH' && Array.isArray(found[3]),
  );
  if (!values) return undefined;
  const item = values[3] as ImapValue[];
  const fields = new Map<string, ImapValue>();
  for (let index = 0; index + 1 < item.length; index += 2)
    fields.set(text(item[index]).toUpperCase(), item[index + 1]!);
  return fields;
}

function bytesOf(fields: Map<string, ImapValue>, prefix: string): Buffer {
  for (const [key, value] of fields) {
    if (key.startsWith(prefix)) return Buffer.isBuffer(value) ? value : Buffer.from(text(value), 'utf8');
  }
  return Buffer.alloc(0);
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const folder = args.folder ?? 'INBOX';
    const maxChars = args.max_chars ?? 20_000;
    const imap = await openImap(ctx);
    try {
      await imap.open(folder, true);
      const described = await imap.must(
        (failed) => new ExecutorFailure('Network', `the mail server refused FETCH: ${failed.text}`),
        `UID FETCH ${args.uid} (UID FLAGS RFC822.SIZE BODYSTRUCTURE BODY.PEEK[HEADER])`,
      );
      const fields = fetchedFields(described);
      if (!fields || Number(text(fields.get('UID'))) !== args.uid) {
        throw new ExecutorFailure('NotFound', `no message with uid ${args.uid} in folder "${folder}"`);
      }
      const headers = parseHeaders(bytesOf(fields, 'BODY[HEADER'));
      const structure = fields.get('BODYSTRUCTURE');
      const parts = Array.isArray(structure) ? leaves(structure, '', []) : [];
      const body =
        parts.find((part) => !part.attachment && part.type === 'text/plain') ??
        parts.find((part) => !part.attachment && part.type === 'text/html');
      let textOut = '';
      let truncated = false;
      if (body) {
        // a few bytes per character at most, and no more than the part holds
        const wanted = Math.min(
          maxChars * 4 + 16,
          body.encoding === 'base64' ? body.size * 2 + 64 : body.size + 64,
        );
        const fetched = await imap.must(
          (failed) => new ExecutorFailure('Network', `the mail server refused FETCH: ${failed.text}`),
          `UID FETCH ${args.uid} (BODY.PEEK[${body.section}]<0.${wanted}>)`,
        );
        const raw = bytesOf(fetchedFields(fetched) ?? new Map(), `BODY[${body.section}]`);
        const decoded = decodeCharset(decodeTransfer(raw, body.encoding), body.charset);
        const plain = (body.type === 'text/html' ? htmlToText(decoded) : decoded).replace(/\r\n/g, '\n');
        truncated = plain.length > maxChars || raw.length >= wanted;
        textOut = plain.slice(0, maxChars);
      }
      const flagsValue = fields.get('FLAGS');
      const filter: Record<string, string> = {};
      for (const name of FILTER_HEADERS) {
        const value = first(headers, name);
        if (value) filter[name] = value.slice(0, 500);
      }
      return ok({
        uid: args.uid,
        folder,
        message_id: first(headers, 'message-id').replace(/^<|>$/g, ''),
        from: first(headers, 'from').slice(0, 500),
        to: first(headers, 'to').slice(0, 2000),
        cc: first(headers, 'cc').slice(0, 2000),
        reply_to: first(headers, 'reply-to').slice(0, 500),
        subject: first(headers, 'subject').slice(0, 1000),
        date: isoDate(first(headers, 'date')),
        flags: (Array.isArray(flagsValue) ? flagsValue : []).map(text),
        size: Number(text(fields.get('RFC822.SIZE'))) || 0,
        text: textOut,
        format: body ? (body.type === 'text/html' ? 'html' : 'plain') : 'none',
        truncated,
        attachments: parts
          .filter((part) => part.attachment)
          .map((part) => ({
            name: part.name ?? `part-${part.section}`,
            type: part.type,
            size: part.size,
            part: part.section,
          })),
        headers: filter,
      });
    } finally {
      await imap.close();
    }
  },
});
