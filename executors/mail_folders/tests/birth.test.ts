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
if (unavailable) console.warn(`skipping mail_folders birth tests: ${unavailable}`);

describe.skipIf(unavailable)('mail_folders birth', () => {
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

  it('lists the folders with their special uses and counts, and names the trash', async () => {
    const result = await executor.invoke({}, { credentials });
    expect(result).toMatchObject({ ok: true });
    const content = (result as { content: { folders: Array<Record<string, unknown>> } }).content;
    const byName = Object.fromEntries(content.folders.map((folder) => [folder.name, folder]));
    expect(Object.keys(byName).sort()).toEqual(['Archive', 'INBOX', 'Junk', 'Sent', 'Trash']);
    expect(byName.Trash).toMatchObject({
      special_use: ['\\Trash'],
      messages: 0,
      unseen: 0,
      selectable: true,
    });
    expect(byName.Junk).toMatchObject({ special_use: ['\\Junk'], messages: 1 });
    expect(byName.INBOX).toMatchObject({ special_use: [], messages: 38 });
    expect((byName.INBOX!.unseen as number) > 0).toBe(true);
    expect(content).toMatchObject({
      inbox: 'INBOX',
      trash: 'Trash',
      junk: 'Junk',
      archive: 'Archive',
      sent: 'Sent',
    });
  });

  it('leaves the counts out when asked', async () => {
    const result = await executor.invoke({ counts: false }, { credentials });
    const folders = (result as { content: { folders: Array<Record<string, unknown>> } }).content.folders;
    expect(folders.every((folder) => folder.messages === undefined)).toBe(true);
  });

  it('is NotConfigured without a mail credential, AuthFailed with a wrong password', async () => {
    expect(await executor.invoke({}, {})).toMatchObject({ ok: false, error: { class: 'NotConfigured' } });
    const wrong = await loadCredentials({
      configDir: await credentialsDir(mailAccount(server)),
      env: { METNOS_TEST_MAIL_PASSWORD: 'not-the-password' },
    });
    const refused = await executor.invoke({}, { credentials: wrong });
    expect(refused).toMatchObject({ ok: false, error: { class: 'AuthFailed' } });
    expect(JSON.stringify(refused)).not.toContain('not-the-password');
  });
});
