import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImapProbe } from './imap-probe.ts';
import { generatedMailbox } from './mail-messages.ts';
import { type MailServer, mailServerUnavailable, startMailServer } from './mail-server.ts';

const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping the test mail server: ${unavailable}`);

/** Speaks SMTP line by line: sends each command, returns every reply. */
async function smtpSession(port: number, commands: string[]): Promise<string[]> {
  const socket = connect({ host: '127.0.0.1', port });
  let buffer = '';
  const replies: string[] = [];
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
        if (!match) return;
        const end = buffer.indexOf(match[0]) + match[0].length;
        const reply = buffer.slice(0, end);
        buffer = buffer.slice(end);
        socket.off('data', onData);
        resolve(reply);
      };
      const onData = (chunk: Buffer) => {
        buffer += chunk.toString();
        check();
      };
      socket.on('data', onData);
      socket.once('error', reject);
      check();
    });
  replies.push(await next());
  for (const command of commands) {
    socket.write(`${command}\r\n`);
    replies.push(await next());
  }
  socket.destroy();
  return replies;
}

describe.skipIf(unavailable)('the test mail server', () => {
  let server: MailServer;
  const mailbox = generatedMailbox();

  beforeAll(async () => {
    server = await startMailServer({ messages: mailbox });
  });
  afterAll(() => server?.stop());

  it('serves the generated mail over IMAP, folder by folder, spam marked the way filters mark it', async () => {
    const inbox = await server.listFolder('INBOX');
    expect(inbox).toHaveLength(mailbox.filter((message) => !message.folder).length);
    expect(inbox.filter((message) => message.kind === 'spam')).toHaveLength(10);
    expect(inbox.filter((message) => message.kind === 'newsletter')).toHaveLength(8);
    expect(inbox[0]).toMatchObject({ uid: 1, subject: mailbox[0]!.subject, messageId: 'test-1@metnos.test' });
    expect(inbox.filter((message) => message.flags.includes('\\Seen')).length).toBeGreaterThan(0);
    expect(await server.listFolder('Junk')).toHaveLength(1);
    expect(await server.listFolder('Archive')).toHaveLength(2);
    expect(await server.listFolder('Trash')).toEqual([]);
  });

  it('refuses a wrong password', async () => {
    await expect(ImapProbe.open(server.imapPort, server.user, 'not-it')).rejects.toThrow(/LOGIN/);
    const replies = await smtpSession(server.smtpPort, [
      'EHLO test',
      `AUTH PLAIN ${Buffer.from(`\0${server.user}\0not-it`).toString('base64')}`,
    ]);
    expect(replies[2]).toMatch(/^535/);
  });

  it('accepts mail over SMTP only after AUTH PLAIN and writes it where the test reads it', async () => {
    const plain = Buffer.from(`\0${server.user}\0${server.password}`).toString('base64');
    const refused = await smtpSession(server.smtpPort, ['EHLO test', 'MAIL FROM:<me@metnos.test>']);
    expect(refused[2]).toMatch(/^530/);
    const replies = await smtpSession(server.smtpPort, [
      'EHLO test',
      `AUTH PLAIN ${plain}`,
      'MAIL FROM:<me@metnos.test>',
      'RCPT TO:<ada@rossi.example>',
      'DATA',
      'Subject: hello\r\n\r\nHi Ada\r\n.',
      'QUIT',
    ]);
    expect(replies[2]).toMatch(/^235/);
    expect(replies[6]).toMatch(/^250/);
    const sent = await server.sent();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      mailFrom: 'me@metnos.test',
      rcptTos: ['ada@rossi.example'],
      user: server.user,
    });
    expect(sent[0]!.raw).toContain('Hi Ada');
  });
});
