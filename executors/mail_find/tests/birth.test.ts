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
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping mail_find birth tests: ${unavailable}`);

interface Entry {
  uid: number;
  folder: string;
  message_id: string;
  from: string;
  subject: string;
  date: string;
  flags: string[];
  unread: boolean;
  snippet: string;
  headers: Record<string, string>;
}
type Found = { ok: true; content: { total: number; returned: number; entries: Entry[] } };

describe.skipIf(unavailable)('mail_find birth', () => {
  let server: MailServer;
  let executor: ReturnType<typeof birth>;
  let credentials: CredentialSet;
  const mailbox = generatedMailbox();
  const find = async (args: Record<string, unknown>) => {
    const result = await executor.invoke(args, { credentials });
    expect(result).toMatchObject({ ok: true });
    return (result as Found).content;
  };

  beforeAll(async () => {
    server = await startMailServer({ messages: mailbox });
    const account = mailAccount(server);
    credentials = await loadCredentials({ configDir: await credentialsDir(account), env: account.env });
    executor = birth(dir, { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('returns the inbox as entries, newest first, with the spam filter’s headers for rules to classify on', async () => {
    const before = await server.listFolder('INBOX');
    const found = await find({});
    expect(found.total).toBe(before.length);
    expect(found.entries.map((entry) => entry.uid)).toEqual(before.map((message) => message.uid).reverse());
    const spam = found.entries.filter((entry) => entry.headers['x-spam-flag'] === 'YES');
    expect(spam).toHaveLength(10);
    expect(
      spam.every((entry) => /^Yes, score=\d+\.\d required=5\.0/.test(entry.headers['x-spam-status']!)),
    ).toBe(true);
    expect(spam.some((entry) => entry.subject.startsWith('[SPAM]'))).toBe(true);
    const ham = found.entries.filter((entry) => entry.headers['x-spam-status']?.startsWith('No, score=-1.2'));
    expect(ham).toHaveLength(4);
    const newsletters = found.entries.filter((entry) => entry.headers['list-unsubscribe']);
    expect(newsletters).toHaveLength(8);
    expect(newsletters[0]!.headers.precedence).toBe('bulk');
    const first = found.entries.find((entry) => entry.message_id === 'test-1@metnos.test')!;
    expect(first).toMatchObject({
      folder: 'INBOX',
      from: 'Ada Rossi <ada@rossi.example>',
      subject: 'Dinner on Saturday?',
      date: '2026-11-01T09:00:00.000Z',
      unread: false,
      flags: expect.arrayContaining(['\\Seen']),
    });
    expect(first.snippet).toMatch(/^Hi, Dinner on Saturday\? — see below\./);
    // only filter headers come back, never the rest of the message's headers
    expect(Object.keys(first.headers)).toEqual([]);
    // the multipart message with attachments has the text part as its snippet
    expect(found.entries.find((entry) => entry.subject === 'Photos from the trip')!.snippet).toMatch(
      /^Hi, Photos/,
    );
    // searching read nothing: the flags are as they were
    expect(await server.listFolder('INBOX')).toEqual(before);
  });

  it('filters by unread, sender, subject (UTF-8 too), dates and words, and limits', async () => {
    const inbox = await server.listFolder('INBOX');
    const unread = await find({ query: 'is:unread' });
    expect(unread.total).toBe(inbox.filter((message) => !message.flags.includes('\\Seen')).length);
    expect(unread.entries.every((entry) => entry.unread)).toBe(true);
    expect((await find({ unread: true })).total).toBe(unread.total);
    const ada = await find({ from: 'rossi.example' });
    expect(ada.total).toBeGreaterThan(0);
    expect(ada.entries.every((entry) => entry.from.includes('rossi.example'))).toBe(true);
    expect(
      (await find({ query: 'from:rossi.example is:unread' })).entries.every((entry) => entry.unread),
    ).toBe(true);
    const euro = await find({ subject: '€' });
    expect(euro.entries.map((entry) => entry.subject).sort()).toEqual(
      mailbox
        .filter((message) => !message.folder && message.subject.includes('€'))
        .map((message) => message.subject)
        .sort(),
    );
    expect(euro.total).toBe(4);
    const spamWord = await find({ query: 'subject:"[SPAM]"' });
    expect(spamWord.total).toBe(4);
    const since = await find({ since: '2026-11-15' });
    expect(since.entries.every((entry) => entry.date >= '2026-11-15')).toBe(true);
    expect(since.total).toBeLessThan(inbox.length);
    const limited = await find({ limit: 5 });
    expect(limited).toMatchObject({ total: inbox.length, returned: 5 });
    expect((await find({ folder: 'Junk' })).entries[0]).toMatchObject({
      folder: 'Junk',
      subject: '[SPAM] 200 free spins',
    });
  });

  it('fails with NotFound for a folder that is not there and BadQuery for a query it cannot read', async () => {
    expect(await executor.invoke({ folder: 'Nowhere' }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'NotFound', message: expect.stringContaining('no folder "Nowhere"') },
    });
    expect(await executor.invoke({ query: 'colour:red' }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'BadQuery' },
    });
    expect(await executor.invoke({ query: 'since:2026-02-30' }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'BadQuery' },
    });
    expect(await executor.invoke({ limit: 0 }, { credentials })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await executor.invoke({}, {})).toMatchObject({ ok: false, error: { class: 'NotConfigured' } });
  });
});
