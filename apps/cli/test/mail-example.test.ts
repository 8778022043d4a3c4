import { appendFile, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import {
  generatedMailbox,
  type MailServer,
  mailAccount,
  mailServerUnavailable,
  messageText,
  startMailServer,
  type TestMessage,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, writeWorkspaceConfig } from './__fixtures__/cli.ts';

// The specification's own example, end to end: `metnos ask` through the engine, a scripted model
// over the Ollama wire protocol, the signed mail and entries seeds under the real sandbox, the
// egress proxy logging in with the person's credential, and a real Dovecot whose mailbox changes.

const unavailable = mailServerUnavailable();
let work: string;
let mail: MailServer;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

const REQUEST = 'find the spam mail and move it to trash';
const intentTrash = { text: '{"verb":"move","object":"message","qualifiers":["spam","trash"]}' };
const intentArchive = { text: '{"verb":"move","object":"message","qualifiers":["spam","archive"]}' };
/** The seed's plan shape: find → classify → filter → move, the destination a filler, a final template. */
const planTo = (folder: string, filler: string, wording: string) => ({
  text: JSON.stringify({
    steps: [
      { tool: 'mail_find', args: { folder: 'INBOX' } },
      // rules over the spam filter's headers; no model call per run for mail they leave undecided
      { tool: 'classify_entries', args: { from_step: 1, dimension: 'spam', use_model: false } },
      { tool: 'filter_entries', args: { from_step: 2, where_field: 'spam', where_value: 'spam' } },
      { tool: 'mail_move', args: { from_step: 3, destination: `\${FILLER:${filler}}` } },
    ],
    fillers: {
      [filler]: { prompt: `What is the ${folder} folder for this account?`, default: folder, tier: 'fast' },
    },
    final_message: `Moved \${step4.moved} mail to ${wording}.`,
  }),
});

/** New mail arriving in the inbox: Maildir files dropped into `new/`, owned like the mailbox. */
async function deliver(messages: TestMessage[]): Promise<void> {
  const maildir = join(mail.root, 'home', mail.user, 'Maildir');
  const owner = await stat(maildir);
  for (const [index, message] of messages.entries()) {
    const file = join(maildir, 'new', `${Date.now()}.metnos-test-${index}.localhost`);
    await writeFile(file, messageText(message, 100 + index));
    await chown(file, owner.uid, owner.gid);
  }
}

const callsOf = (out: string) => Number(/· (\d+) model calls? ·/.exec(out)?.[1]);
const spamIn = async (folder: string) =>
  (await mail.listFolder(folder)).filter((message) => message.kind === 'spam').length;

beforeAll(async () => {
  if (unavailable) return;
  work = await mkdtemp(join(tmpdir(), 'metnos-mail-example-'));
  mail = await startMailServer({ messages: generatedMailbox() });
  model = await startOllamaServer();
  const account = mailAccount(mail);
  await mkdir(join(work, 'workspace'), { recursive: true });
  await mkdir(join(work, 'config'), { recursive: true, mode: 0o700 });
  await writeFile(join(work, 'config', 'credentials.toml'), account.toml, { mode: 0o600 });
  await writeWorkspaceConfig(work, model.url);
  const overrides = Object.entries(account.hostOverrides)
    .map(([name, target]) => `"${name}" = "${target}"`)
    .join(', ');
  await appendFile(join(work, 'metnos.toml'), `\n[sandbox]\nhost_overrides = { ${overrides} }\n`);
  Object.assign(process.env, account.env);
  process.env.INIT_CWD = work;
  delete process.env.npm_lifecycle_event;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
}, 60_000);

afterAll(async () => {
  process.env = savedEnv;
  await model?.close();
  await mail?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(unavailable)(`"${REQUEST}" against a real Dovecot`, () => {
  it('proposes the seed plan, resolves the trash folder by a filler, moves the spam and says how many', async () => {
    const inboxSpam = await spamIn('INBOX');
    const trashSpam = await spamIn('Trash');
    expect(inboxSpam).toBeGreaterThan(0);
    model.push(intentTrash, planTo('Trash', 'trash_folder', 'trash'), { text: 'Trash' });
    const first = await cli(['ask', '--yes', REQUEST]);
    expect(first.err).toBe('');
    expect(first.out).toContain(`Moved ${inboxSpam} mail to trash.`);
    expect(first.out).toMatch(/— layer: engine · 3 model calls/);
    expect(model.remaining()).toBe(0);
    // the filler's question reached the fast tier, and its answer named the folder the mail went to
    const fillerPrompt = JSON.stringify(model.requests.at(-1)?.body);
    expect(fillerPrompt).toContain('What is the Trash folder for this account?');
    expect(await spamIn('INBOX')).toBe(0);
    expect(await spamIn('Trash')).toBe(trashSpam + inboxSpam);
    // nothing but spam moved: the newsletters and the mail marked "No" stayed in the inbox
    const inbox = await mail.listFolder('INBOX');
    expect(inbox.filter((message) => message.kind === 'ham').length).toBeGreaterThan(0);
    expect(inbox.filter((message) => message.kind === 'newsletter').length).toBeGreaterThan(0);
  }, 120_000);

  it('serves the same request from memory the second time, with no model call', async () => {
    const before = model.requests.length;
    const second = await cli(['ask', '--yes', REQUEST]);
    expect(second.err).toBe('');
    expect(second.out).toContain('Moved 0 mail to trash.');
    expect(second.out).toContain('— layer: fastpath · 0 model calls');
    expect(model.requests.length).toBe(before);
  }, 120_000);

  it('serves a paraphrase from memory: only the intent is asked, no plan is proposed', async () => {
    await deliver(
      generatedMailbox()
        .filter((message) => message.kind === 'spam')
        .slice(0, 2),
    );
    const trashBefore = await spamIn('Trash');
    const before = model.requests.length;
    model.push(intentTrash);
    const paraphrase = await cli(['ask', '--yes', 'move the junk mail to the bin']);
    expect(paraphrase.err).toBe('');
    expect(paraphrase.out).toContain('Moved 2 mail to trash.');
    expect(paraphrase.out).toContain('— layer: autopath · 1 model call ·');
    expect(model.requests.length - before).toBe(1);
    expect(await spamIn('INBOX')).toBe(0);
    expect(await spamIn('Trash')).toBe(trashBefore + 2);
  }, 120_000);

  it('does not serve the trash plan to "move the spam to the archive"', async () => {
    // new spam arrives, so the archive plan has something to move
    await deliver(
      generatedMailbox()
        .filter((message) => message.kind === 'spam')
        .slice(0, 3),
    );
    const arrived = await spamIn('INBOX');
    const trashBefore = await spamIn('Trash');
    const archiveBefore = await spamIn('Archive');
    model.push(intentArchive, planTo('Archive', 'archive_folder', 'the archive'), { text: 'Archive' });
    const archived = await cli(['ask', '--yes', 'move the spam to the archive']);
    expect(archived.err).toBe('');
    expect(archived.out).toContain('— layer: engine');
    expect(archived.out).toContain(`Moved ${arrived} mail to the archive.`);
    expect(callsOf(archived.out)).toBeGreaterThan(1);
    expect(await spamIn('Trash')).toBe(trashBefore);
    expect(await spamIn('Archive')).toBe(archiveBefore + arrived);
  }, 120_000);

  it('left the password in no audit line, turn log, replay bundle, scratchpad entry or model prompt', async () => {
    const password = mail.password;
    const leaks: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() && (await readFile(path)).includes(password)) leaks.push(path);
      }
    };
    // everything Metnos wrote: the workspace (its .audit), the data dir (memory, scratchpad, turn
    // logs, replay bundles, receipts) and the config dir apart from the person's own credentials file
    await walk(join(work, 'workspace'));
    await walk(join(work, 'data'));
    for (const entry of await readdir(join(work, 'config'))) {
      if (entry === 'credentials.toml') continue;
      const path = join(work, 'config', entry);
      if ((await readFile(path).catch(() => Buffer.alloc(0))).includes(password)) leaks.push(path);
    }
    const prompts = model.requests.map((request) => JSON.stringify(request.body)).join('\n');
    if (prompts.includes(password)) leaks.push('a model prompt');
    expect(leaks).toEqual([]);
    // the walk did look at what the runs wrote
    expect((await readdir(join(work, 'data'))).length).toBeGreaterThan(0);
    expect(model.requests.length).toBeGreaterThan(0);
  });
});
