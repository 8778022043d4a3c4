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

// ─── Folders and their special uses (RFC 6154) ───

/** A mailbox name from modified UTF-7 (RFC 3501 §5.1.3). */
function decodeMailbox(name: string): string {
  return name.replace(/&([^-]*)-/g, (_, encoded: string) => {
    if (encoded === '') return '&';
    const bytes = Buffer.from(encoded.replace(/,/g, '/'), 'base64');
    const even = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
    return even.swap16().toString('utf16le');
  });
}

interface FolderInfo {
  name: string;
  special_use: string[];
  selectable: boolean;
  messages?: number;
  unseen?: number;
}

const SPECIAL_USES = ['\\All', '\\Archive', '\\Drafts', '\\Flagged', '\\Junk', '\\Sent', '\\Trash'];

/** Names servers without SPECIAL-USE commonly give their special folders (English, Italian, German, French, Spanish). */
const USUAL_NAMES: Record<string, RegExp> = {
  '\\Trash':
    /^(trash|deleted( items| messages)?|bin|cestino|posta eliminata|papierkorb|gelöschte elemente|corbeille|éléments supprimés|papelera)$/i,
  '\\Junk':
    /^(junk( e-?mail)?|spam|bulk mail|posta indesiderata|indesiderata|spam-verdacht|courrier indésirable|correo no deseado)$/i,
  '\\Sent':
    /^(sent( items| messages| mail)?|posta inviata|inviata|gesendet|gesendete elemente|envoyés|éléments envoyés|enviados)$/i,
  '\\Archive': /^(archive|archives|archivio|archiv|archivos)$/i,
  '\\Drafts': /^(drafts?|bozze|entwürfe|brouillons|borradores)$/i,
};

/** Every folder with its attributes, and its counts when asked (LIST-STATUS, else one STATUS each). */
async function listFolders(imap: Imap, counts: boolean): Promise<FolderInfo[]> {
  const listStatus = counts && imap.capabilities.has('LIST-STATUS');
  const returns = [
    ...(imap.capabilities.has('SPECIAL-USE') ? ['SPECIAL-USE'] : []),
    ...(listStatus ? ['STATUS (MESSAGES UNSEEN)'] : []),
  ];
  const reply = await imap.must(
    (failed) => new ExecutorFailure('Network', `the mail server refused LIST: ${failed.text}`),
    `LIST "" "*"${returns.length > 0 ? ` RETURN (${returns.join(' ')})` : ''}`,
  );
  const folders = new Map<string, FolderInfo>();
  const statusOf = (values: ImapValue[]) => {
    const pairs = Array.isArray(values[3]) ? values[3] : [];
    const found: Record<string, number> = {};
    for (let index = 0; index + 1 < pairs.length; index += 2)
      found[text(pairs[index]).toUpperCase()] = Number(text(pairs[index + 1]));
    return found;
  };
  for (const values of reply.untagged) {
    const kind = text(values[1]).toUpperCase();
    if (kind === 'LIST') {
      const attributes = (Array.isArray(values[2]) ? values[2] : []).map(text);
      const name = decodeMailbox(text(values[4]));
      const lowered = attributes.map((attribute) => attribute.toLowerCase());
      folders.set(name, {
        name,
        special_use: SPECIAL_USES.filter((use) => lowered.includes(use.toLowerCase())),
        selectable: !lowered.includes('\\noselect') && !lowered.includes('\\nonexistent'),
      });
    } else if (kind === 'STATUS') {
      const folder = folders.get(decodeMailbox(text(values[2])));
      const status = statusOf(values);
      if (folder) Object.assign(folder, { messages: status.MESSAGES ?? 0, unseen: status.UNSEEN ?? 0 });
    }
  }
  if (counts && !listStatus) {
    for (const folder of folders.values()) {
      if (!folder.selectable) continue;
      const status = await imap.run('STATUS ', mailboxArgument(folder.name), ' (MESSAGES UNSEEN)');
      const values = status.untagged.find((found) => text(found[1]).toUpperCase() === 'STATUS');
      if (status.ok && values) {
        const found = statusOf(values);
        Object.assign(folder, { messages: found.MESSAGES ?? 0, unseen: found.UNSEEN ?? 0 });
      }
    }
  }
  return [...folders.values()];
}

/** The folder that has a special use: by its flag, else by a usual name. */
function folderFor(folders: readonly FolderInfo[], use: string): FolderInfo | undefined {
  return (
    folders.find((folder) => folder.special_use.includes(use)) ??
    folders.find((folder) => folder.selectable && USUAL_NAMES[use]?.test(folder.name.split(/[/.]/).at(-1)!))
  );
}

// ─── mail_folders ───

interface Args {
  counts?: boolean;
}

interface Output {
  folders: FolderInfo[];
  inbox: string;
  trash?: string;
  junk?: string;
  archive?: string;
  sent?: string;
  drafts?: string;
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const imap = await openImap(ctx);
    try {
      const folders = await listFolders(imap, args.counts ?? true);
      const named = (use: string) => {
        const found = folderFor(folders, use)?.name;
        return found === undefined ? {} : { [use.slice(1).toLowerCase()]: found };
      };
      return ok({
        folders,
        inbox: folders.find((folder) => folder.name.toUpperCase() === 'INBOX')?.name ?? 'INBOX',
        ...named('\\Trash'),
        ...named('\\Junk'),
        ...named('\\Archive'),
        ...named('\\Sent'),
        ...named('\\Drafts'),
      });
    } finally {
      await imap.close();
    }
  },
});
