import { join } from 'node:path';
import { type CredentialSet, loadCredentials } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import {
  credentialsDir,
  generatedMailbox,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  startMailServer,
  type TestMessage,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping mail_read birth tests: ${unavailable}`);

const LONG = Array.from({ length: 400 }, (_, index) => `Line ${index + 1} of a long report.`).join('\n');
const extra: TestMessage[] = [
  {
    from: 'Report Bot <bot@reports.example>',
    to: 'Me <me@metnos.test>',
    subject: 'Weekly report',
    date: '2026-11-20T10:00:00Z',
    body: LONG,
    messageId: 'long@metnos.test',
  },
  {
    from: 'Shop <news@shop.example>',
    to: 'Me <me@metnos.test>',
    subject: 'HTML only',
    date: '2026-11-20T11:00:00Z',
    body: '',
    messageId: 'html@metnos.test',
    raw: [
      'From: Shop <news@shop.example>',
      'To: me@metnos.test',
      'Subject: =?UTF-8?Q?Offerte_della_settimana_=E2=82=AC?=',
      'Date: Fri, 20 Nov 2026 11:00:00 +0000',
      'Message-ID: <html@metnos.test>',
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=ISO-8859-1',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<html><head><style>p{color:red}</style></head><body><p>Citt=E0 &amp; caff=E8</p><script>x()</script>',
      '<p>Second paragraph, long enough to be =',
      'joined.</p></body></html>',
      '',
    ].join('\r\n'),
  },
];

type Read = {
  ok: true;
  content: {
    uid: number;
    subject: string;
    text: string;
    format: string;
    truncated: boolean;
    flags: string[];
    attachments: Array<{ name: string; type: string; size: number; part: string }>;
    headers: Record<string, string>;
  };
};

describe.skipIf(unavailable)('mail_read birth', () => {
  let server: MailServer;
  let executor: ReturnType<typeof birth>;
  let credentials: CredentialSet;
  const uidOf = async (messageId: string, folder = 'INBOX') =>
    (await server.listFolder(folder)).find((message) => message.messageId === messageId)!.uid;
  const read = async (args: Record<string, unknown>) => {
    const result = await executor.invoke(args, { credentials });
    expect(result).toMatchObject({ ok: true });
    return (result as Read).content;
  };

  beforeAll(async () => {
    const mailbox = generatedMailbox();
    server = await startMailServer({ messages: [...mailbox, ...extra] });
    const account = mailAccount(server);
    credentials = await loadCredentials({ configDir: await credentialsDir(account), env: account.env });
    executor = birth(dir, { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('reads a message’s text and lists its attachments without fetching them or marking it read', async () => {
    const uid = await uidOf('test-4@metnos.test');
    const before = await server.listFolder('INBOX');
    const invoice = await read({ uid });
    expect(invoice).toMatchObject({
      uid,
      folder: 'INBOX',
      subject: 'Invoice 2026-114 attached',
      format: 'plain',
      truncated: false,
      attachments: [{ name: 'invoice-2026-114.pdf', type: 'application/pdf', part: '2' }],
    });
    expect(invoice.text).toContain('Invoice 2026-114 attached — see below.');
    expect(invoice.attachments[0]!.size).toBeGreaterThan(20);
    const photos = await read({ uid: await uidOf('test-3@metnos.test') });
    expect(photos.attachments.map((file) => [file.name, file.type, file.part])).toEqual([
      ['beach.jpg', 'image/jpeg', '2'],
      ['notes.txt', 'text/plain', '3'],
    ]);
    expect(photos.attachments[0]!.size).toBeGreaterThanOrEqual(2040);
    expect(photos.text).not.toContain('Bring sunscreen');
    expect(await server.listFolder('INBOX')).toEqual(before);
  });

  it('turns HTML into text, decodes quoted-printable Latin-1 and encoded subjects, and cuts long text', async () => {
    const html = await read({ uid: await uidOf('html@metnos.test') });
    expect(html).toMatchObject({ format: 'html', subject: 'Offerte della settimana €', attachments: [] });
    expect(html.text).toBe('Città & caffè\n\nSecond paragraph, long enough to be joined.');
    const long = await read({ uid: await uidOf('long@metnos.test'), max_chars: 500 });
    expect(long.truncated).toBe(true);
    expect(long.text).toHaveLength(500);
    expect(long.text.startsWith('Line 1 of a long report.\nLine 2')).toBe(true);
    const spamUid = (await server.listFolder('INBOX')).find((message) => message.kind === 'spam')!.uid;
    expect((await read({ uid: spamUid })).headers).toMatchObject({ 'x-spam-flag': 'YES' });
  });

  it('fails with NotFound for a uid or folder that is not there', async () => {
    expect(await executor.invoke({ uid: 99999 }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'NotFound', message: 'no message with uid 99999 in folder "INBOX"' },
    });
    expect(await executor.invoke({ uid: 1, folder: 'Nowhere' }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(await executor.invoke({ uid: 'one' }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });
});
