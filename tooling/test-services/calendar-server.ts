import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's python3, which has the radicale module of the `radicale` package (not a pyenv python on PATH). */
export const RADICALE_PYTHON = '/usr/bin/python3';
const RADICALE_MODULE = '/usr/lib/python3/dist-packages/radicale';

/**
 * Why the calendar server cannot start on this host (a Debian package
 * missing), or undefined when it can. Tests skip with this reason, never
 * silently.
 *
 * @example
 * describe.skipIf(calendarServerUnavailable())('caldav', () => { … });
 */
export function calendarServerUnavailable(): string | undefined {
  if (!existsSync(RADICALE_PYTHON)) return `${RADICALE_PYTHON} is absent`;
  if (!existsSync(RADICALE_MODULE)) return `${RADICALE_MODULE} is absent: apt-get install radicale`;
  return undefined;
}

/** Options of {@link startCalendarServer}. */
export interface CalendarServerOptions {
  /** The account's user name. Default `me`. */
  user?: string;
  /** The account's password. Default: a fresh random one. */
  password?: string;
  /** The calendar collection created for the user. Default `calendar`. */
  calendar?: string;
}

/** A running Radicale on loopback with one user and one calendar, and how tests look inside it. */
export interface CalendarServer {
  host: '127.0.0.1';
  port: number;
  user: string;
  password: string;
  /** The calendar collection's path on the server, e.g. `/me/calendar/`. */
  path: string;
  /** Stores one iCalendar object at `<path><name>.ics` (with the user's login), as another client would. */
  put(name: string, ics: string): Promise<void>;
  /** The calendar's objects, by resource name, as the server stores them. */
  objects(): Promise<Record<string, string>>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** What a test needs to point Metnos's `calendar` credential handle at a {@link CalendarServer}. */
export interface CalendarAccount {
  /** Operator mapping of the server name to the loopback port (the sandbox runner's `hostOverrides`). */
  hostOverrides: Record<string, string>;
  /** A `credentials.toml` with a `[calendar]` table; the password comes from `env`. */
  toml: string;
  env: Record<string, string>;
  /** The calendar's URL as the credential names it. */
  url: string;
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
    if (child.exitCode !== null) throw new Error(`radicale exited with ${child.exitCode}: ${log()}`);
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
  throw new Error(`radicale does not listen on 127.0.0.1:${port} after 15 s: ${log()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * The `[calendar]` credential of a running {@link CalendarServer}: the server
 * name `dav.metnos.test` (a profile and the proxy accept only names) mapped
 * to the loopback port, plain http, the password in an environment variable
 * the file names.
 *
 * @example
 * const account = calendarAccount(server);
 * await writeFile(join(configDir, 'credentials.toml'), account.toml, { mode: 0o600 });
 * const credentials = await loadCredentials({ configDir, env: account.env });
 */
export function calendarAccount(server: CalendarServer, name = 'dav.metnos.test'): CalendarAccount {
  const url = `http://${name}:5232${server.path}`;
  return {
    hostOverrides: { [name]: `127.0.0.1:${server.port}` },
    toml: `[calendar]
url = "${url}"
username = "${server.user}"
password_env = "METNOS_TEST_CALENDAR_PASSWORD"
`,
    env: { METNOS_TEST_CALENDAR_PASSWORD: server.password },
    url,
  };
}

/**
 * Starts a real Radicale (`python3 -m radicale --config <tmp config>`, the
 * Debian package) on 127.0.0.1 with a random port, a plain-text htpasswd
 * file with one user, filesystem storage in a temp folder, and one calendar
 * collection made with MKCALENDAR. Throws when the package is absent; check
 * {@link calendarServerUnavailable} first to skip.
 *
 * @example
 * const server = await startCalendarServer();
 * await server.put('lunch', 'BEGIN:VCALENDAR…');
 * await server.stop();
 */
export async function startCalendarServer(options: CalendarServerOptions = {}): Promise<CalendarServer> {
  const missing = calendarServerUnavailable();
  if (missing) throw new Error(`the test calendar server cannot start: ${missing}`);
  const user = options.user ?? 'me';
  const password =
    options.password ?? `pw-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const path = `/${user}/${options.calendar ?? 'calendar'}/`;
  const root = await mkdtemp(join(tmpdir(), 'metnos-caldav-'));
  await writeFile(join(root, 'users'), `${user}:${password}\n`, { mode: 0o600 });
  const port = await freePort();
  const config = join(root, 'config');
  await writeFile(
    config,
    `# Metnos test calendar server: loopback only, plain http, one htpasswd user
[server]
hosts = 127.0.0.1:${port}
[auth]
type = htpasswd
htpasswd_filename = ${join(root, 'users')}
htpasswd_encryption = plain
delay = 0
[storage]
filesystem_folder = ${join(root, 'collections')}
[rights]
type = owner_only
[web]
type = none
[logging]
level = warning
`,
  );
  let output = '';
  const child = spawn(RADICALE_PYTHON, ['-m', 'radicale', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    await stopChild(child);
    await rm(root, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  try {
    await waitForPort(port, child, () => output.slice(-2000));
    const made = await fetch(`${base}${path}`, { method: 'MKCALENDAR', headers: { authorization } });
    if (made.status !== 201)
      throw new Error(`MKCALENDAR ${path} answered ${made.status}: ${await made.text()}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    path,
    async put(name, ics) {
      const response = await fetch(`${base}${path}${encodeURIComponent(name)}.ics`, {
        method: 'PUT',
        headers: { authorization, 'content-type': 'text/calendar; charset=utf-8' },
        body: ics,
      });
      if (response.status !== 201 && response.status !== 204) {
        throw new Error(`PUT ${name}.ics answered ${response.status}: ${await response.text()}`);
      }
    },
    async objects() {
      const response = await fetch(`${base}${path}`, {
        method: 'PROPFIND',
        headers: { authorization, depth: '1', 'content-type': 'application/xml' },
        body: '<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/></prop></propfind>',
      });
      const hrefs = [...(await response.text()).matchAll(/<href>([^<]+\.ics)<\/href>/g)].map(
        (match) => match[1]!,
      );
      const found: Record<string, string> = {};
      for (const href of hrefs) {
        const object = await fetch(`${base}${href}`, { headers: { authorization } });
        found[
          decodeURIComponent(
            href
              .split('/')
              .at(-1)!
              .replace(/\.ics$/, ''),
          )
        ] = await object.text();
      }
      return found;
    },
    stop,
  };
}
