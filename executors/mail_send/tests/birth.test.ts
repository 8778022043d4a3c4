import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CredentialSet, loadCredentials } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import {
  credentialsDir,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  startMailServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping mail_send birth tests: ${unavailable}`);

/** Undoes quoted-printable, for reading what the sink received. */
function unQuote(text: string): string {
  const bytes = text
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

describe.skipIf(unavailable)('mail_send birth', () => {
  let server: MailServer;
  let executor: ReturnType<typeof birth>;
  let credentials: CredentialSet;
  let configDir: string;

  beforeAll(async () => {
    server = await startMailServer();
    const account = mailAccount(server);
    configDir = await credentialsDir(account);
    credentials = await loadCredentials({ configDir, env: account.env });
    executor = birth(dir, { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('sends from the account’s own address over the session the proxy authenticated', async () => {
    const result = await executor.invoke(
      {
        to: ['Ada Rossi <ada@rossi.example>', 'bruno.neri@work.example'],
        cc: ['Chiära <chiara@fabbri.example>'],
        subject: 'Cena di sabato — conferma',
        body: 'Ciao!\nCi vediamo alle 20:00 in città.\n.\n.hidden line\nA presto',
      },
      { credentials },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        from: 'me@metnos.test',
        recipients: ['ada@rossi.example', 'bruno.neri@work.example', 'chiara@fabbri.example'],
      },
    });
    const content = (result as { content: { message_id: string } }).content;
    const sent = await server.sent();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      mailFrom: 'me@metnos.test',
      rcptTos: ['ada@rossi.example', 'bruno.neri@work.example', 'chiara@fabbri.example'],
      user: server.user,
    });
    const raw = sent[0]!.raw;
    expect(raw).toContain('From: me@metnos.test\r\n');
    expect(raw).toContain('To: "Ada Rossi" <ada@rossi.example>,\r\n bruno.neri@work.example\r\n');
    expect(raw).toContain('Cc: =?UTF-8?B?');
    expect(raw).toContain(`Message-ID: <${content.message_id}>`);
    expect(raw).toMatch(/Subject: =\?UTF-8\?B\?/);
    const body = unQuote(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body).toBe('Ciao!\r\nCi vediamo alle 20:00 in città.\r\n.\r\n.hidden line\r\nA presto\r\n');
  });

  it('sends nothing when a recipient is refused, and refuses what is not an address', async () => {
    const before = (await server.sent()).length;
    const refused = await executor.invoke(
      { to: 'ada@rossi.example, ghost@rejected.example', subject: 'hi', body: 'hi' },
      { credentials },
    );
    expect(refused).toMatchObject({
      ok: false,
      error: { class: 'Rejected', message: expect.stringContaining('ghost@rejected.example (550') },
    });
    const bad = await executor.invoke({ to: 'not an address', subject: 'hi', body: 'hi' }, { credentials });
    expect(bad).toMatchObject({ ok: false, error: { class: 'BadAddress' } });
    const injected = await executor.invoke(
      { to: 'ada@rossi.example', subject: 'hi\r\nBcc: everyone@example.com', body: 'hi' },
      { credentials },
    );
    expect(injected).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect((await server.sent()).length).toBe(before);
  });

  it('is NotConfigured without an account or without a sender address', async () => {
    expect(await executor.invoke({ to: 'ada@rossi.example', subject: 'hi', body: 'hi' }, {})).toMatchObject({
      ok: false,
      error: { class: 'NotConfigured' },
    });
    const account = mailAccount(server);
    await writeFile(
      join(configDir, 'credentials.toml'),
      account.toml.replace(`username = "${server.user}"`, 'username = "plainuser"'),
      { mode: 0o600 },
    );
    const noAddress = await loadCredentials({ configDir, env: account.env });
    expect(
      await executor.invoke(
        { to: 'ada@rossi.example', subject: 'hi', body: 'hi' },
        { credentials: noAddress },
      ),
    ).toMatchObject({
      ok: false,
      error: { class: 'NotConfigured', message: expect.stringContaining('address') },
    });
  });
});
