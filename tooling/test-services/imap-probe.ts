import { connect, type Socket } from 'node:net';

/** One message as a test sees it in a folder, read straight from the IMAP server. */
export interface ProbedMessage {
  uid: number;
  flags: string[];
  subject: string;
  from: string;
  messageId: string;
  /** The `X-Test-Kind` header of generated mail (`spam`, `newsletter`, …), or ''. */
  kind: string;
}

/**
 * A minimal IMAP client for assertions (not an executor): logs in with
 * LOGIN, runs tagged commands, collects the untagged lines and literals.
 */
export class ImapProbe {
  private buffer = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  private tag = 0;
  private closed = false;
  private readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('error', () => undefined);
  }

  /** Connects and logs in. */
  static async open(port: number, user: string, password: string): Promise<ImapProbe> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const probe = new ImapProbe(socket);
    await probe.line();
    await probe.command(`LOGIN "${user}" "${password}"`);
    return probe;
  }

  private async wait(): Promise<void> {
    if (this.closed) throw new Error('the IMAP server closed the connection');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** One response line, with any literal it announces appended as-is. */
  private async line(): Promise<string> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n');
      if (end !== -1) {
        let line = this.buffer.subarray(0, end).toString('utf8');
        let rest = this.buffer.subarray(end + 2);
        const literal = /\{(\d+)\}$/.exec(line);
        if (literal) {
          const size = Number(literal[1]);
          while (rest.length < size) {
            await this.wait();
            rest = this.buffer.subarray(end + 2);
          }
          line += `\n${rest.subarray(0, size).toString('utf8')}`;
          this.buffer = rest.subarray(size);
          line += await this.line();
          return line;
        }
        this.buffer = rest;
        return line;
      }
      await this.wait();
    }
  }

  /** Runs a command; resolves to its untagged lines, rejects on NO/BAD. */
  async command(text: string): Promise<string[]> {
    const id = `P${++this.tag}`;
    this.socket.write(`${id} ${text}\r\n`);
    const lines: string[] = [];
    for (;;) {
      const line = await this.line();
      if (line.startsWith(`${id} `)) {
        if (!/^\S+ OK/.test(line)) throw new Error(`IMAP ${text.split(' ')[0]}: ${line}`);
        return lines;
      }
      lines.push(line);
    }
  }

  /** Every message of a folder: uid, flags and a few headers. */
  async list(folder: string): Promise<ProbedMessage[]> {
    await this.command(`EXAMINE "${folder}"`);
    const lines = await this.command(
      'UID FETCH 1:* (UID FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT FROM MESSAGE-ID X-TEST-KIND)])',
    );
    const messages: ProbedMessage[] = [];
    for (const line of lines) {
      const uid = /UID (\d+)/.exec(line);
      if (!uid) continue;
      const header = (name: string) =>
        new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(line.split('\n').slice(1).join('\n'))?.[1]?.trim() ?? '';
      messages.push({
        uid: Number(uid[1]),
        flags: /FLAGS \(([^)]*)\)/.exec(line)?.[1]?.split(' ').filter(Boolean) ?? [],
        subject: header('Subject'),
        from: header('From'),
        messageId: header('Message-ID').replace(/^<|>$/g, ''),
        kind: header('X-Test-Kind'),
      });
    }
    return messages.sort((a, b) => a.uid - b.uid);
  }

  async close(): Promise<void> {
    try {
      await this.command('LOGOUT');
    } catch {
      // the server may close first
    }
    this.socket.destroy();
  }
}
