import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CredentialSet,
  createBirthHarness,
  type ExecutorResult,
  expandProfile,
  harnessRequest,
  loadCredentials,
  offeredCredentials,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import {
  credentialsDir,
  generatedMailbox,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  startMailServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner, type SandboxRunner } from '../src/runner.ts';
import { createLab, type Lab, observingCode } from './fixtures.ts';

const unavailable = mailServerUnavailable();
if (unavailable) console.warn(`skipping the credential sandbox tests: ${unavailable}`);

const SEEDS = join(import.meta.dirname, '..', '..', '..', 'executors');
/** Known and distinctive, so a grep cannot miss it. */
const PASSWORD = 'Sekr1t-Metnos-Mailbox-Pa55word';
const PLAIN_TOKEN = (user: string) => Buffer.from(`\0${user}\0${PASSWORD}`).toString('base64');

/** Every file under `root`, as text. */
async function filesUnder(root: string): Promise<Array<{ path: string; text: string }>> {
  const out: Array<{ path: string; text: string }> = [];
  const walk = async (dir: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push({ path, text: await readFile(path, 'latin1') });
    }
  };
  await walk(root);
  return out;
}

/**
 * A fixture executor that shows what it can see: its whole context, its
 * environment, /proc/self, the credentials file, and what the egress proxy
 * answers to each CONNECT it tries (`attempts`: target, handle, then a line
 * to send once the session greets).
 */
function seeingCode(
  configFile: string,
  attempts: Record<string, [target: string, handle: string | null, line: string | null, done: string | null]>,
): string {
  return observingCode(`
  out.view = ctx.credentials;
  out.ctx = JSON.stringify(ctx);
  out.env = JSON.stringify(process.env);
  out.environ = await attempt(() => fs.readFileSync('/proc/self/environ', 'latin1'));
  out.cmdline = await attempt(() => fs.readFileSync('/proc/self/cmdline', 'latin1'));
  out.credentialsFile = await attempt(() => fs.readFileSync(${JSON.stringify(configFile)}, 'utf8'));
  const proxy = new URL(process.env.HTTPS_PROXY ?? 'http://127.0.0.1:1');
  const talk = (target, handle, line, done) => new Promise((resolve) => {
    const socket = net.connect(Number(proxy.port), proxy.hostname);
    let got = '';
    let sent = false;
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
      if (line && !sent && /\\r\\n\\r\\n[\\s\\S]*\\r\\n/.test(got)) { sent = true; socket.write(line + '\\r\\n'); }
      if (done && new RegExp(done).test(got)) socket.destroy();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', (error) => resolve('error ' + error.code));
    socket.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n' + (handle ? 'Metnos-Credential: ' + handle + '\\r\\n' : '') + '\\r\\n');
    setTimeout(() => socket.destroy(), 4000);
  });
  out.sessions = {};
  for (const [key, [target, handle, line, done]] of Object.entries(${JSON.stringify(attempts)})) {
    out.sessions[key] = await talk(target, handle, line, done);
  }
`);
}

describe.skipIf(unavailable)('credential handles through the real sandbox', () => {
  let server: MailServer;
  let configDir: string;
  let credentials: CredentialSet;
  let runner: SandboxRunner;
  let lab: Lab;
  const results: ExecutorResult[] = [];
  const workspaces: string[] = [];
  const imap = 'imap.metnos.test:993';
  const smtp = 'smtp.metnos.test:465';

  beforeAll(async () => {
    server = await startMailServer({ messages: generatedMailbox(), password: PASSWORD });
    const account = mailAccount(server);
    configDir = await credentialsDir(account);
    credentials = await loadCredentials({ configDir, env: account.env });
    runner = createSandboxRunner({
      configDir,
      // other.metnos.test is the same Dovecot: a credential sent there would log in
      hostOverrides: { ...account.hostOverrides, 'other.metnos.test': `127.0.0.1:${server.imapPort}` },
    });
    lab = await createLab('metnos-credential-lab-');
  });

  afterAll(async () => {
    await server?.stop();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  it('runs every mail seed with a known password, then finds it in no audit line, result or message', async () => {
    const seed = (name: string) => createBirthHarness(join(SEEDS, name), { runner });
    const calls: Array<[string, Record<string, unknown>]> = [
      ['mail_folders', {}],
      ['mail_find', { query: 'is:unread' }],
      ['mail_read', { uid: 1 }],
      ['mail_move', { entries: [{ uid: 2, folder: 'INBOX' }], destination: 'Archive' }],
      ['mail_send', { to: 'ada@rossi.example', subject: 'hello', body: 'hi' }],
      // refusals and failures carry messages too
      ['mail_find', { folder: 'Nowhere' }],
    ];
    for (const [name, args] of calls) {
      const harness = seed(name);
      workspaces.push((await harness.prepare()).workspace);
      const result = await harness.invoke(args, { credentials });
      results.push(result);
      if (!('folder' in args && args.folder === 'Nowhere')) expect(result, name).toMatchObject({ ok: true });
    }
    const wrongDir = await credentialsDir(mailAccount(server));
    const wrong = await loadCredentials({
      configDir: wrongDir,
      env: { METNOS_TEST_MAIL_PASSWORD: `${PASSWORD}-wrong` },
    });
    const refused = await seed('mail_folders').invoke({}, { credentials: wrong });
    expect(refused).toMatchObject({ ok: false, error: { class: 'AuthFailed' } });
    results.push(refused);

    // the handle is named where a login happened; the password nowhere
    expect(results[0]!.isolation?.notes).toContain(`egress credential "mail" logged in at ${imap} (IMAP)`);
    const texts = [
      ...results.map((result) => JSON.stringify(result)),
      ...(await Promise.all(workspaces.map((workspace) => filesUnder(join(workspace, '.audit')))))
        .flat()
        .map((file) => file.text),
      ...(await server.sent()).map((message) => message.raw),
    ];
    expect(texts.length).toBeGreaterThan(results.length);
    for (const text of texts) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(PLAIN_TOKEN(server.user));
    }
  });

  it('gives the process its servers’ addresses and nothing else: context, stdin, environment, files', async () => {
    const executor = await lab.executor(
      'seeing',
      {
        code: seeingCode(join(configDir, 'credentials.toml'), {
          imap: [imap, 'mail', 'a1 EXAMINE INBOX', 'a1 OK[^\\r]*\\r\\n'],
          smtp: [smtp, 'mail', 'EHLO sandbox', '\\r\\n250 [^\\r]*\\r\\n'],
        }),
        profile: { domains: ['$CREDENTIAL:mail'], durationMs: 15_000 },
        capabilities: ['net:imap', 'secret:mail'],
      },
      runner,
    );
    const result = await executor.invoke({}, { credentials });
    expect(result).toMatchObject({ ok: true });
    const seen = (result as { content: Record<string, unknown> }).content as {
      view: unknown;
      ctx: string;
      credentialsFile: { ok: boolean };
      sessions: Record<string, string>;
    };
    expect(seen.view).toEqual({ mail: { kind: 'mail', imap, smtp, address: server.user } });
    expect(seen.credentialsFile.ok).toBe(false);
    expect(seen.sessions.imap).toMatch(/^HTTP\/1\.1 200[\s\S]*\* PREAUTH[\s\S]*a1 OK/);
    expect(seen.sessions.smtp).toMatch(/^HTTP\/1\.1 200[\s\S]*220 [\s\S]*250/);
    const everything = JSON.stringify(result);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(PLAIN_TOKEN(server.user));
    // the JSON the harness reads on stdin, built from a context that carries the credentials
    const declared = {
      profile: 'p',
      min_tier: 'full' as const,
      max_duration_ms: 1000,
      max_memory_mb: 64,
      max_output_bytes: 1024,
      fs: { read: [], write: [] },
      exec: { mode: 'none' as const, binaries: [] },
      network: { mode: 'allowlist' as const, domains: ['$CREDENTIAL:mail'] },
    };
    const offered = offeredCredentials(['secret:mail'], credentials);
    const stdin = harnessRequest(
      {
        codeFile: '/x/main.ts',
        code: Buffer.from(''),
        schema: {},
        manifest: {
          sandbox: declared,
          contract: { input_schema: 'a', output_schema: 'b', error_classes: [] },
        },
      } as unknown as VerifiedExecutor,
      {},
      { traceId: 't', workspace: '/w', caller: { kind: 'test' }, credentials },
      { tmpDir: '/t', credentials: offered },
      expandProfile(declared, { workspace: '/w', tmpDir: '/t', credentials: offered }),
    );
    expect(stdin).toContain(imap);
    expect(stdin).not.toContain(PASSWORD);
    expect(stdin).not.toMatch(/"(password|username|token)"/);
    expect(JSON.parse(stdin).context.credentials).toEqual({
      mail: { kind: 'mail', imap, smtp, address: server.user },
    });
  });

  it('refuses a handle the manifest does not declare, another server, and a handle no one configured', async () => {
    const undeclared = await lab.executor(
      'undeclared',
      {
        code: seeingCode('/nonexistent', { imap: [imap, 'mail', null, null] }),
        profile: { domains: [imap] },
        capabilities: ['net:imap'],
      },
      runner,
    );
    const first = await undeclared.invoke({}, { credentials });
    const seenFirst = (first as { content: { view: unknown; sessions: Record<string, string> } }).content;
    expect(seenFirst.view).toEqual({});
    expect(seenFirst.sessions.imap).toMatch(
      /^HTTP\/1\.1 403[\s\S]*credential mail is not offered to this call/,
    );

    const wandering = await lab.executor(
      'wandering',
      {
        code: seeingCode('/nonexistent', {
          other: ['other.metnos.test:993', 'mail', null, null],
          forged: [imap, 'calendar', null, null],
          bank: [imap, 'bank', null, null],
        }),
        profile: { domains: ['$CREDENTIAL:mail', 'other.metnos.test:993'] },
        capabilities: ['net:imap', 'secret:mail', 'secret:calendar'],
      },
      runner,
    );
    const withBank: CredentialSet = { ...credentials, bank: { ...credentials.mail!, handle: 'bank' } };
    const second = await wandering.invoke({}, { credentials: withBank });
    const seen = (second as { content: { view: unknown; sessions: Record<string, string> } }).content;
    expect(Object.keys(seen.view as object)).toEqual(['mail']);
    expect(seen.sessions.other).toMatch(
      /^HTTP\/1\.1 403[\s\S]*credential "mail" logs in only at its own servers \(imap\.metnos\.test:993, smtp\.metnos\.test:465\)/,
    );
    expect(seen.sessions.forged).toMatch(/^HTTP\/1\.1 403[\s\S]*credential calendar is not offered/);
    expect(seen.sessions.bank).toMatch(/^HTTP\/1\.1 403[\s\S]*credential bank is not offered/);
    for (const result of [first, second]) {
      expect(result.isolation?.notes?.join('\n')).toMatch(/egress refused credential/);
      expect(JSON.stringify(result)).not.toContain(PASSWORD);
    }
  });
});
