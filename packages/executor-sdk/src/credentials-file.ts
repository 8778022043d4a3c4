import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import {
  CREDENTIAL_HANDLE,
  type CredentialEndpoint,
  type CredentialSet,
  type HostCredential,
  Secret,
} from './credentials.ts';
import { MetnosError } from './errors.ts';

/** The file in the Metnos config dir that holds the person's credentials. */
export const CREDENTIALS_FILE = 'credentials.toml';

const credentialMarker = Symbol.for('metnos.error.CredentialError');

/**
 * The credentials file cannot be used: readable by others, not the user's,
 * not TOML, a table that does not describe a credential, a password variable
 * that is not set. The message names the file and the field, never a value.
 */
export class CredentialError extends MetnosError {
  private readonly [credentialMarker] = true;
  /** The handle (table) at fault, when there is one. */
  readonly handle: string | undefined;

  constructor(message: string, handle?: string) {
    super({ code: 'credentials_invalid', message });
    this.name = 'CredentialError';
    this.handle = handle;
  }

  static override isInstance(error: unknown): error is CredentialError {
    return (
      MetnosError.isInstance(error) &&
      (error as unknown as Record<symbol, unknown>)[credentialMarker] === true
    );
  }
}

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'the NAME of an environment variable, not the secret' });
const tls = z.enum(['tls', 'starttls', 'none']);
const hostPort = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+:\d{1,5}$/, {
    message: 'a lowercase "host.name:port", e.g. "imap.example.com:993"',
  });

const mailTable = z
  .object({
    kind: z.literal('mail').optional(),
    imap: hostPort.optional(),
    imap_tls: tls.default('tls'),
    smtp: hostPort.optional(),
    smtp_tls: tls.default('tls'),
    ca_file: z.string().min(1).optional(),
    address: z
      .string()
      .regex(/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/, { message: 'a mail address such as "me@example.com"' })
      .max(320)
      .optional(),
    username: z.string().min(1).max(320),
    password: z.string().min(1).max(1024).optional(),
    password_env: envName.optional(),
  })
  .strict();

const httpTable = z
  .object({
    kind: z.literal('http').optional(),
    url: z.string().regex(/^https?:\/\/[^/@\s]+(\/\S*)?$/, {
      message: 'an http:// or https:// URL without user info, e.g. "https://dav.example.com/me/"',
    }),
    username: z.string().min(1).max(320).optional(),
    password: z.string().min(1).max(1024).optional(),
    password_env: envName.optional(),
    token: z.string().min(1).max(4096).optional(),
    token_env: envName.optional(),
    ca_file: z.string().min(1).optional(),
  })
  .strict();

/** Settings of {@link loadCredentials}. */
export interface LoadCredentialsSettings {
  /** The Metnos config dir (`resolveConfigDir()`), masked from every executor. */
  configDir: string;
  /** Where `password_env` / `token_env` names are looked up: the app passes `process.env`. */
  env: Readonly<Record<string, string | undefined>>;
  /** The file name inside the config dir. Default {@link CREDENTIALS_FILE}. */
  file?: string;
}

function endpoint(
  value: string,
  mode: CredentialEndpoint['tls'],
  ca: string | undefined,
): CredentialEndpoint {
  const at = value.lastIndexOf(':');
  const port = Number(value.slice(at + 1));
  return { host: value.slice(0, at), port, tls: mode, ...(ca ? { ca } : {}) };
}

/** The PEM text of a table's `ca_file` (relative to the config dir), or undefined without one. */
async function caOf(
  handle: string,
  file: string | undefined,
  configDir: string,
): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const path = isAbsolute(file) ? file : join(configDir, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CredentialError(
      `[${handle}] ca_file: ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      handle,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new CredentialError(`[${handle}] ca_file: ${path} holds no PEM certificate`, handle);
  return text;
}

function secretOf(
  handle: string,
  field: 'password' | 'token',
  table: { [key: string]: unknown },
  env: LoadCredentialsSettings['env'],
): Secret | undefined {
  const inline = table[field];
  const variable = table[`${field}_env`];
  if (inline !== undefined && variable !== undefined)
    throw new CredentialError(`[${handle}]: set ${field} or ${field}_env, not both`, handle);
  if (typeof inline === 'string') return new Secret(inline);
  if (typeof variable !== 'string') return undefined;
  const value = env[variable];
  if (value === undefined || value === '')
    throw new CredentialError(
      `[${handle}] ${field}_env: the environment variable ${variable} is not set`,
      handle,
    );
  return new Secret(value);
}

function fieldProblem(handle: string, issue: z.core.$ZodIssue): CredentialError {
  const field = issue.path.join('.') || '(table)';
  // zod's own wording for an unknown key names it; every other message here is ours or generic
  const message =
    issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : issue.message;
  return new CredentialError(`[${handle}] ${field}: ${message}`, handle);
}

async function parseTable(
  handle: string,
  raw: unknown,
  env: LoadCredentialsSettings['env'],
  configDir: string,
): Promise<HostCredential> {
  if (!CREDENTIAL_HANDLE.test(handle))
    throw new CredentialError(
      `[${handle.slice(0, 40)}]: a handle is lowercase letters and underscores, at most 32 (e.g. "mail")`,
    );
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new CredentialError(`[${handle}]: expected a table`, handle);
  const table = raw as Record<string, unknown>;
  const isHttp = table.kind === 'http' || (table.kind === undefined && 'url' in table);
  if (isHttp) {
    const parsed = httpTable.safeParse(table);
    if (!parsed.success) throw fieldProblem(handle, parsed.error.issues[0]!);
    const data = parsed.data;
    const ca = await caOf(handle, data.ca_file, configDir);
    const url = new URL(data.url);
    const https = url.protocol === 'https:';
    const password = secretOf(handle, 'password', data, env);
    const token = secretOf(handle, 'token', data, env);
    if (token && (password || data.username))
      throw new CredentialError(`[${handle}]: a token, or a username and password, not both`, handle);
    if (!token && !(password && data.username))
      throw new CredentialError(
        `[${handle}]: needs a username and password (or password_env), or a token`,
        handle,
      );
    return {
      kind: 'http',
      handle,
      url: url.href,
      endpoint: {
        host: url.hostname,
        port: url.port ? Number(url.port) : https ? 443 : 80,
        tls: https ? 'tls' : 'none',
        ...(ca ? { ca } : {}),
      },
      ...(data.username ? { username: data.username } : {}),
      ...(password ? { password } : {}),
      ...(token ? { token } : {}),
    };
  }
  const parsed = mailTable.safeParse(table);
  if (!parsed.success) throw fieldProblem(handle, parsed.error.issues[0]!);
  const data = parsed.data;
  if (!data.imap && !data.smtp)
    throw new CredentialError(`[${handle}]: a mail credential names imap, smtp or both`, handle);
  const password = secretOf(handle, 'password', data, env);
  if (!password) throw new CredentialError(`[${handle}]: needs password or password_env`, handle);
  const ca = await caOf(handle, data.ca_file, configDir);
  return {
    kind: 'mail',
    handle,
    ...(data.imap ? { imap: endpoint(data.imap, data.imap_tls, ca) } : {}),
    ...(data.smtp ? { smtp: endpoint(data.smtp, data.smtp_tls, ca) } : {}),
    ...(data.address || /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(data.username)
      ? { address: data.address ?? data.username }
      : {}),
    username: data.username,
    password,
  };
}

/**
 * Reads the person's credentials from `<configDir>/credentials.toml`: one
 * table per handle. A missing file is no credentials. The file must be a
 * regular file of this user, not a symlink, readable by nobody else (mode
 * 0600), or it is refused. Passwords may sit in the file or in an environment
 * variable the file names (`password_env`). The values come back wrapped in
 * {@link Secret}, so no log line or JSON shows them.
 *
 * ```toml
 * [mail]
 * imap = "imap.example.com:993"
 * imap_tls = "tls"           # tls | starttls | none
 * smtp = "smtp.example.com:465"
 * smtp_tls = "tls"
 * address = "me@example.com"   # the sender; default: the username when it is an address
 * username = "me@example.com"
 * password_env = "METNOS_MAIL_PASSWORD"
 *
 * [calendar]
 * url = "https://dav.example.com/me/calendar/"
 * username = "me"
 * password_env = "METNOS_CALENDAR_PASSWORD"   # or token / token_env for a bearer token
 * # ca_file = "home-ca.pem"   # in any table: the authority a self-signed server's certificate chains to
 * ```
 *
 * @example
 * const credentials = await loadCredentials({ configDir: resolveConfigDir(), env: process.env });
 * createInvoker({ catalog, runner, credentials });
 */
export async function loadCredentials(settings: LoadCredentialsSettings): Promise<CredentialSet> {
  const path = join(settings.configDir, settings.file ?? CREDENTIALS_FILE);
  let text: string;
  try {
    // O_NOFOLLOW: a symlink planted in the config dir is refused, not followed
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new CredentialError(`${path} is not a regular file`);
      const uid = process.getuid?.();
      if (uid !== undefined && info.uid !== uid)
        throw new CredentialError(`${path} belongs to uid ${info.uid}, not to this user (${uid})`);
      if ((info.mode & 0o077) !== 0)
        throw new CredentialError(
          `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}): run chmod 600 ${path}`,
        );
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (CredentialError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    if (code === 'ELOOP') throw new CredentialError(`${path} is a symlink; put the file itself there`);
    throw new CredentialError(`${path} cannot be read (${code ?? 'unknown error'})`);
  }
  let data: Record<string, unknown>;
  try {
    data = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    // the parser's message quotes the line, which may hold a password: only the position is shown
    const { line, column } = error as { line?: number; column?: number };
    throw new CredentialError(
      `${path} is not valid TOML${line ? ` (line ${line}${column ? `, column ${column}` : ''})` : ''}`,
    );
  }
  const credentials: Record<string, HostCredential> = {};
  for (const [handle, table] of Object.entries(data))
    credentials[handle] = await parseTable(handle, table, settings.env, settings.configDir);
  return Object.freeze(credentials);
}
