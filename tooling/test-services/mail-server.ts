import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapProbe, type ProbedMessage } from './imap-probe.ts';
import { messageText, type TestMessage } from './mail-messages.ts';

/** Where the Debian packages put the binaries the mail server needs. */
export const DOVECOT_BINARY = '/usr/sbin/dovecot';
/** Debian's python3 with python3-aiosmtpd (not a pyenv python on PATH). */
export const SYSTEM_PYTHON = '/usr/bin/python3';
/** Makes the test certificate of a server started with `tls: true`. */
export const OPENSSL_BINARY = '/usr/bin/openssl';
/** The names the test certificate is for. */
const TLS_NAMES = ['imap.metnos.test', 'smtp.metnos.test'];

const SINK_SCRIPT = join(import.meta.dirname, 'smtp-sink.py');
const FOLDERS = ['INBOX', 'Junk', 'Trash', 'Archive', 'Sent'] as const;

/**
 * Why the mail server cannot start on this host (a Debian package missing),
 * or undefined when it can. Tests skip with this reason, never silently.
 *
 * @example
 * describe.skipIf(mailServerUnavailable())('mail', () => { … });
 */
export function mailServerUnavailable(options: { tls?: boolean } = {}): string | undefined {
  if (!existsSync(DOVECOT_BINARY)) return `${DOVECOT_BINARY} is absent: apt-get install dovecot-imapd`;
  if (options.tls && !existsSync(OPENSSL_BINARY))
    return `${OPENSSL_BINARY} is absent: apt-get install openssl`;
  if (!existsSync(SYSTEM_PYTHON)) return `${SYSTEM_PYTHON} is absent`;
  if (!existsSync('/usr/lib/python3/dist-packages/aiosmtpd'))
    return 'aiosmtpd is absent for the system python: apt-get install python3-aiosmtpd';
  return undefined;
}

/** Options of {@link startMailServer}. */
export interface MailServerOptions {
  /** The mail to put in the mailbox before the server starts (e.g. `generatedMailbox()`). */
  messages?: readonly TestMessage[];
  /** The account's user name. Default `me@metnos.test`. */
  user?: string;
  /** The account's password. Default: a fresh random one. */
  password?: string;
  /**
   * Serve TLS too, with a fresh self-signed certificate for imap.metnos.test
   * and smtp.metnos.test: IMAP over TLS on `imapsPort`, STARTTLS on
   * `imapPort`, and the SMTP sink requiring STARTTLS before AUTH.
   */
  tls?: boolean;
  /**
   * The IMAP capabilities Dovecot announces after login instead of its own
   * (`imap_capability`), e.g. the usual list without MOVE to test a client's
   * COPY fallback.
   */
  imapCapability?: string;
}

/** A running Dovecot (IMAP) and SMTP sink on loopback, and how tests look inside them. */
export interface MailServer {
  host: '127.0.0.1';
  imapPort: number;
  smtpPort: number;
  user: string;
  password: string;
  /** The folder the SMTP sink writes accepted messages to (`0001.eml` + `0001.json`). */
  sentDir: string;
  /** The temp folder holding everything (config, mailbox, logs). */
  root: string;
  /** With `tls`: the IMAP-over-TLS port, and the certificate (PEM) to trust as its own authority. */
  imapsPort?: number;
  caFile?: string;
  /** Every message of a folder, read over IMAP with EXAMINE (nothing changes). */
  listFolder(name: string): Promise<ProbedMessage[]>;
  /** The messages the SMTP sink accepted, oldest first: raw text and envelope. */
  sent(): Promise<Array<{ raw: string; mailFrom: string; rcptTos: string[]; user: string | null }>>;
  /** Stops both servers and removes the temp folder. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after 15 s: ${log()}`);
}

/** uid and gid of a system user, from /etc/passwd. */
function systemUser(name: string): { uid: number; gid: number } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Who Dovecot runs as. As root it needs unprivileged users for its internal
 * and login processes and refuses uid 0 for mail: Debian's `dovecot` and
 * `dovenull`. As anyone else, everything runs as that user.
 */
function runAs(): { internal: string; login: string; mail: { name: string; uid: number; gid: number } } {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) {
    const name = process.env.USER ?? `${uid}`;
    const gid = process.getgid?.() ?? uid;
    return { internal: name, login: name, mail: { name, uid, gid } };
  }
  const dovecot = systemUser('dovecot');
  if (!dovecot || !systemUser('dovenull'))
    throw new Error('running as root, Dovecot needs the users dovecot and dovenull (Debian creates them)');
  return { internal: 'dovecot', login: 'dovenull', mail: { name: 'dovecot', ...dovecot } };
}

function dovecotConfig(settings: {
  root: string;
  port: number;
  users: ReturnType<typeof runAs>;
  imapsPort?: number;
  imapCapability?: string;
}): string {
  const { root, port, users, imapsPort, imapCapability } = settings;
  const ssl =
    imapsPort === undefined
      ? 'ssl = no'
      : `ssl = yes\nssl_cert = <${root}/cert.pem\nssl_key = <${root}/key.pem\nssl_min_protocol = TLSv1.2`;
  const special = { Trash: '\\Trash', Junk: '\\Junk', Sent: '\\Sent', Archive: '\\Archive' };
  const mailboxes = Object.entries(special)
    .map(([name, use]) => `  mailbox ${name} {\n    special_use = ${use}\n    auto = subscribe\n  }`)
    .join('\n');
  return `# Metnos test mail server: loopback only, plain text, one passwd-file user
protocols = imap
listen = 127.0.0.1
base_dir = ${root}/run
state_dir = ${root}/state
instance_name = metnos-test-${port}
log_path = ${root}/dovecot.log
${ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${users.internal}
default_internal_group = ${users.internal}
default_login_user = ${users.login}
mail_uid = ${users.mail.uid}
mail_gid = ${users.mail.gid}
first_valid_uid = 1
mail_location = maildir:${root}/home/%u/Maildir
${imapCapability ? `imap_capability = ${imapCapability}\n` : ''}passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${root}/passwd
}
userdb {
  driver = static
  args = uid=${users.mail.uid} gid=${users.mail.gid} home=${root}/home/%u
}
namespace inbox {
  inbox = yes
  separator = /
${mailboxes}
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${imapsPort ?? 0}
    ssl = yes
  }
}
# tests log in with wrong passwords on purpose: no delay, and no penalty for 127.0.0.1 afterwards
auth_failure_delay = 0
service anvil {
  chroot =
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
`;
}

/** Writes the messages as Maildir files (Maildir++: `.Junk/cur/…`), read ones with the `S` flag. */
async function fillMaildir(maildir: string, messages: readonly TestMessage[]): Promise<void> {
  for (const folder of FOLDERS) {
    const base = folder === 'INBOX' ? maildir : join(maildir, `.${folder}`);
    for (const sub of ['cur', 'new', 'tmp']) await mkdir(join(base, sub), { recursive: true });
  }
  await writeFile(
    join(maildir, 'subscriptions'),
    `${FOLDERS.filter((name) => name !== 'INBOX').join('\n')}\n`,
  );
  let index = 0;
  for (const message of messages) {
    index++;
    const folder = message.folder ?? 'INBOX';
    if (!(FOLDERS as readonly string[]).includes(folder)) throw new Error(`unknown test folder ${folder}`);
    const base = folder === 'INBOX' ? maildir : join(maildir, `.${folder}`);
    const flags = `${message.flagged ? 'F' : ''}${message.seen ? 'S' : ''}`;
    const time = Math.floor(new Date(message.date).getTime() / 1000);
    // numbered names in delivery order, so Dovecot gives UIDs in the order the list has
    const name = `${time}.M${String(index).padStart(4, '0')}.metnos.test:2,${flags}`;
    const file = join(base, 'cur', name);
    await writeFile(file, messageText(message, index));
    // Dovecot takes a Maildir file's mtime as the message's arrival (IMAP INTERNALDATE, what SINCE searches)
    await utimes(file, time, time);
  }
}

async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  await chown(path, uid, gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid, gid);
    else await chown(child, uid, gid);
  }
}

/** A self-signed certificate for the test names, valid for two days: `cert.pem` and `key.pem` in `root`. */
function makeCertificate(root: string): void {
  const made = spawnSync(
    OPENSSL_BINARY,
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=metnos test mail',
      '-addext',
      `subjectAltName=${TLS_NAMES.map((name) => `DNS:${name}`).join(',')}`,
      '-keyout',
      join(root, 'key.pem'),
      '-out',
      join(root, 'cert.pem'),
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make the test certificate: ${made.stderr}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** What a test needs to point Metnos's `mail` credential handle at a {@link MailServer}. */
export interface MailAccount {
  /** Operator mapping of the account's server names to the loopback ports (the sandbox runner's `hostOverrides`). */
  hostOverrides: Record<string, string>;
  /** A `credentials.toml` with a `[mail]` table; the password comes from `env`. */
  toml: string;
  env: Record<string, string>;
  /** `imap.metnos.test:993`, `smtp.metnos.test:465`: the names the credential logs in at. */
  imap: string;
  smtp: string;
}

/**
 * The `[mail]` credential of a running {@link MailServer}: server names under
 * `metnos.test` (a profile and the proxy accept only names) mapped to the
 * loopback ports, plain text (`imap_tls = "none"`) unless `tls` says `tls`
 * (IMAP over TLS, SMTP STARTTLS) or `starttls` (both STARTTLS), trusting the
 * server's own certificate (`ca_file`) unless `trust` is false; the password
 * in an environment variable the file names.
 *
 * @example
 * const account = mailAccount(server);
 * await writeFile(join(configDir, 'credentials.toml'), account.toml, { mode: 0o600 });
 * const credentials = await loadCredentials({ configDir, env: account.env });
 */
export function mailAccount(
  server: MailServer,
  options: { tls?: 'tls' | 'starttls'; trust?: boolean } = {},
): MailAccount {
  const names = { imap: 'imap.metnos.test', smtp: 'smtp.metnos.test' };
  const tls = options.tls;
  if (tls && server.imapsPort === undefined) throw new Error('mailAccount: start the server with tls: true');
  const imapPort = tls === 'tls' ? server.imapsPort! : server.imapPort;
  return {
    hostOverrides: {
      [names.imap]: `127.0.0.1:${imapPort}`,
      [names.smtp]: `127.0.0.1:${server.smtpPort}`,
    },
    toml: `[mail]
imap = "${names.imap}:993"
imap_tls = "${tls ?? 'none'}"
smtp = "${names.smtp}:465"
smtp_tls = "${tls ? 'starttls' : 'none'}"
username = "${server.user}"
password_env = "METNOS_TEST_MAIL_PASSWORD"
${tls && options.trust !== false ? `ca_file = "${server.caFile}"\n` : ''}`,
    env: { METNOS_TEST_MAIL_PASSWORD: server.password },
    imap: `${names.imap}:993`,
    smtp: `${names.smtp}:465`,
  };
}

/**
 * A fresh config dir holding the account's `credentials.toml` (mode 0600),
 * for `loadCredentials({ configDir, env: account.env })` or `METNOS_CONFIG_DIR`.
 *
 * @example
 * const credentials = await loadCredentials({ configDir: await credentialsDir(account), env: account.env });
 */
export async function credentialsDir(account: MailAccount): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-mail-config-'));
  await writeFile(join(dir, 'credentials.toml'), account.toml, { mode: 0o600 });
  return dir;
}

/**
 * Starts a real Dovecot (`dovecot -F -c <tmp conf>`) and an SMTP sink
 * (`python3-aiosmtpd`, AUTH required) on 127.0.0.1 with random ports, one
 * passwd-file user and a throwaway Maildir with INBOX, Junk, Trash (special
 * use `\Trash`), Archive and Sent, filled with `messages`. Throws when a
 * binary is absent; check {@link mailServerUnavailable} first to skip.
 *
 * @example
 * const server = await startMailServer({ messages: generatedMailbox() });
 * const inbox = await server.listFolder('INBOX');
 * await server.stop();
 */
export async function startMailServer(options: MailServerOptions = {}): Promise<MailServer> {
  const missing = mailServerUnavailable({ tls: options.tls });
  if (missing) throw new Error(`the test mail server cannot start: ${missing}`);
  const user = options.user ?? 'me@metnos.test';
  const password =
    options.password ?? `pw-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const users = runAs();
  const root = await mkdtemp(join(tmpdir(), 'metnos-mail-'));
  // Dovecot's unprivileged processes walk into the folder
  await chmod(root, 0o755);
  const sentDir = join(root, 'sent');
  await mkdir(sentDir);
  await mkdir(join(root, 'state'));
  await writeFile(join(root, 'passwd'), `${user}:{PLAIN}${password}::::::\n`, { mode: 0o640 });
  const home = join(root, 'home');
  await fillMaildir(join(home, user, 'Maildir'), options.messages ?? []);
  if ((process.getuid?.() ?? 0) === 0) {
    await chownTree(home, users.mail.uid, users.mail.gid);
    await chown(join(root, 'passwd'), 0, users.mail.gid);
  }
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const imapPort = await freePort();
    const imapsPort = options.tls ? await freePort() : undefined;
    if (options.tls) makeCertificate(root);
    const conf = join(root, 'dovecot.conf');
    await writeFile(
      conf,
      dovecotConfig({ root, port: imapPort, users, imapsPort, imapCapability: options.imapCapability }),
    );
    let dovecotOutput = '';
    const dovecot = spawn(DOVECOT_BINARY, ['-F', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(dovecot);
    dovecot.stdout!.on('data', (chunk: Buffer) => (dovecotOutput += chunk.toString()));
    dovecot.stderr!.on('data', (chunk: Buffer) => (dovecotOutput += chunk.toString()));
    const dovecotLog = () => {
      const file = join(root, 'dovecot.log');
      return `${dovecotOutput}${existsSync(file) ? readFileSync(file, 'utf8') : ''}`.slice(-2000);
    };
    await waitForPort(imapPort, dovecot, dovecotLog);

    const smtpPort = await freePort();
    let sinkOutput = '';
    const tlsFiles = options.tls ? [join(root, 'cert.pem'), join(root, 'key.pem')] : [];
    const sink = spawn(SYSTEM_PYTHON, [SINK_SCRIPT, String(smtpPort), user, password, sentDir, ...tlsFiles], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(sink);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the SMTP sink did not start: ${sinkOutput}`)), 15_000);
      sink.stdout!.on('data', (chunk: Buffer) => {
        sinkOutput += chunk.toString();
        if (sinkOutput.includes('READY')) {
          clearTimeout(timer);
          resolve();
        }
      });
      sink.stderr!.on('data', (chunk: Buffer) => (sinkOutput += chunk.toString()));
      sink.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the SMTP sink exited with ${code}: ${sinkOutput.slice(-2000)}`));
      });
    });

    return {
      host: '127.0.0.1',
      imapPort,
      smtpPort,
      user,
      password,
      sentDir,
      root,
      ...(imapsPort !== undefined ? { imapsPort, caFile: join(root, 'cert.pem') } : {}),
      async listFolder(name) {
        const probe = await ImapProbe.open(imapPort, user, password);
        try {
          return await probe.list(name);
        } finally {
          await probe.close();
        }
      },
      async sent() {
        const names = (await readdir(sentDir)).filter((name) => name.endsWith('.json')).sort();
        return Promise.all(
          names.map(async (name) => {
            const meta = JSON.parse(await readFile(join(sentDir, name), 'utf8')) as {
              mail_from: string;
              rcpt_tos: string[];
              user: string | null;
            };
            const raw = await readFile(join(sentDir, name.replace(/\.json$/, '.eml')), 'utf8');
            return { raw, mailFrom: meta.mail_from, rcptTos: meta.rcpt_tos, user: meta.user };
          }),
        );
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
