import { join } from 'node:path';
import { type CredentialSet, loadCredentials } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import {
  credentialsDir,
  generatedMailbox,
  ImapProbe,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  startMailServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping mail_move birth tests: ${unavailable}`);

describe.skipIf(unavailable)('mail_move birth', () => {
  let server: MailServer;
  let executor: ReturnType<typeof birth>;
  let credentials: CredentialSet;

  beforeAll(async () => {
    server = await startMailServer({ messages: generatedMailbox() });
    const account = mailAccount(server);
    credentials = await loadCredentials({ configDir: await credentialsDir(account), env: account.env });
    executor = birth(dir, { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('moves the spam to the trash by its special use, and moving again changes nothing', async () => {
    const spam = (await server.listFolder('INBOX')).filter((message) => message.kind === 'spam');
    expect(spam).toHaveLength(10);
    // entries as mail_find gives them: more fields than uid and folder
    const entries = spam.map((message) => ({
      uid: message.uid,
      folder: 'INBOX',
      subject: message.subject,
      from: message.from,
      headers: { 'x-spam-flag': 'YES' },
    }));
    const result = await executor.invoke({ entries, destination: 'trash' }, { credentials });
    expect(result).toMatchObject({
      ok: true,
      content: { moved: 10, destination: 'Trash', missing: 0, uids: spam.map((message) => message.uid) },
    });
    const inbox = await server.listFolder('INBOX');
    expect(inbox.filter((message) => message.kind === 'spam')).toEqual([]);
    expect(inbox).toHaveLength(28);
    const trash = await server.listFolder('Trash');
    expect(trash.map((message) => message.messageId).sort()).toEqual(
      spam.map((message) => message.messageId).sort(),
    );
    expect(trash.every((message) => !message.flags.includes('\\Deleted'))).toBe(true);
    const again = await executor.invoke({ entries, destination: 'Trash' }, { credentials });
    expect(again).toMatchObject({ ok: true, content: { moved: 0, missing: 10, uids: [] } });
    expect(await server.listFolder('INBOX')).toEqual(inbox);
  });

  it('moves from several folders at once, to a folder named exactly or by its flag', async () => {
    const junk = (await server.listFolder('Junk'))[0]!;
    const newsletter = (await server.listFolder('INBOX')).find((message) => message.kind === 'newsletter')!;
    const result = await executor.invoke(
      {
        entries: [
          { uid: junk.uid, folder: 'Junk' },
          { uid: newsletter.uid, folder: 'INBOX' },
        ],
        destination: '\\Archive',
      },
      { credentials },
    );
    expect(result).toMatchObject({ ok: true, content: { moved: 2, destination: 'Archive' } });
    const archive = (await server.listFolder('Archive')).map((message) => message.messageId);
    expect(archive).toEqual(expect.arrayContaining([junk.messageId, newsletter.messageId]));
    expect(await server.listFolder('Junk')).toEqual([]);
    expect(await executor.invoke({ entries: [], destination: 'Archive' }, { credentials })).toMatchObject({
      ok: true,
      content: { moved: 0, missing: 0 },
    });
  });

  it('fails with NotFound for a destination or a source folder that is not there, moving nothing', async () => {
    const before = await server.listFolder('INBOX');
    const nowhere = await executor.invoke(
      { entries: [{ uid: before[0]!.uid, folder: 'INBOX' }], destination: 'Nowhere' },
      { credentials },
    );
    expect(nowhere).toMatchObject({
      ok: false,
      error: {
        class: 'NotFound',
        message: expect.stringContaining('no folder "Nowhere" in this mailbox; folders:'),
      },
    });
    const source = await executor.invoke(
      { entries: [{ uid: 1, folder: 'Nowhere' }], destination: 'Trash' },
      { credentials },
    );
    expect(source).toMatchObject({ ok: false, error: { class: 'NotFound' } });
    expect(await server.listFolder('INBOX')).toEqual(before);
  });
});

/** Dovecot's post-login capabilities without MOVE: the client must COPY, flag and expunge. */
const WITHOUT_MOVE =
  'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT NAMESPACE UIDPLUS LIST-EXTENDED CHILDREN LITERAL+ SPECIAL-USE LIST-STATUS';

describe.skipIf(unavailable)('mail_move birth, on a server without MOVE', () => {
  let server: MailServer;

  beforeAll(async () => {
    server = await startMailServer({ messages: generatedMailbox(), imapCapability: WITHOUT_MOVE });
  });

  afterAll(() => server?.stop());

  it('copies, flags \\Deleted and expunges only the uids it moves', async () => {
    const account = mailAccount(server);
    const credentials = await loadCredentials({ configDir: await credentialsDir(account), env: account.env });
    const executor = birth(dir, { hostOverrides: account.hostOverrides });
    const inbox = await server.listFolder('INBOX');
    const spam = inbox.filter((message) => message.kind === 'spam');
    // someone else's message already flagged \Deleted: a plain EXPUNGE would take it too
    const keep = inbox.find((message) => message.kind === 'personal')!;
    const probe = await ImapProbe.open(server.imapPort, server.user, server.password);
    await probe.command('SELECT INBOX');
    await probe.command(`UID STORE ${keep.uid} +FLAGS (\\Deleted)`);
    await probe.close();
    const result = await executor.invoke(
      { entries: spam.map((message) => ({ uid: message.uid, folder: 'INBOX' })), destination: 'Trash' },
      { credentials },
    );
    expect(result).toMatchObject({ ok: true, content: { moved: 10, destination: 'Trash' } });
    const after = await server.listFolder('INBOX');
    expect(after.filter((message) => message.kind === 'spam')).toEqual([]);
    expect(after.find((message) => message.uid === keep.uid)?.flags).toContain('\\Deleted');
    expect(await server.listFolder('Trash')).toHaveLength(10);
  });
});
