// Two processes on loopback: the device hub in the test's process, the laptop agent as a child
// process with its own temporary HOME, and a TCP relay between them that a test can cut or
// make swallow one direction, to drop the link at the step it wants.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPublicKey, verifyExecutor } from '@metnos/executor-sdk';
import { createLedger } from '@metnos/laptop-agent';
import {
  createDeviceStore,
  createPairingCode,
  openDeviceAuthority,
  startDeviceHub,
} from '../src/devices/index.ts';

export const REPO = join(import.meta.dirname, '..', '..', '..');
const LAPTOP_MAIN = join(REPO, 'apps', 'laptop-agent', 'src', 'main.ts');

/** A relay from a loopback port to the hub: `cut()` drops every link, `swallow()` drops one direction's bytes. */
export async function startRelay(target: number) {
  const pairs = new Set<[Socket, Socket]>();
  let swallowing: 'up' | 'down' | undefined;
  const server: Server = createServer((laptop) => {
    const hub = new Socket();
    hub.connect(target, '127.0.0.1');
    const pair: [Socket, Socket] = [laptop, hub];
    pairs.add(pair);
    laptop.on('data', (chunk) => {
      if (swallowing !== 'up') hub.write(chunk);
    });
    hub.on('data', (chunk) => {
      if (swallowing !== 'down') laptop.write(chunk);
    });
    const close = () => {
      laptop.destroy();
      hub.destroy();
      pairs.delete(pair);
    };
    laptop.on('close', close).on('error', close);
    hub.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    links: () => pairs.size,
    swallow(direction: 'up' | 'down' | undefined) {
      swallowing = direction;
    },
    cut() {
      for (const [laptop, hub] of pairs) {
        laptop.destroy();
        hub.destroy();
      }
      pairs.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [laptop, hub] of pairs) {
          laptop.destroy();
          hub.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

/** A laptop: its temporary HOME, the environment the agent reads, and ways to run it. */
export async function makeLaptop() {
  const home = await mkdtemp(join(tmpdir(), 'metnos-laptop-home-'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    METNOS_CONFIG_DIR: join(home, '.config', 'metnos'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    LANG: 'C.UTF-8',
  };
  const pictures = join(home, 'Pictures');
  await mkdir(pictures, { recursive: true });
  const stateDir = join(home, '.local', 'state', 'metnos', 'laptop');
  const args = (rest: string[]) => [
    '--conditions=metnos-source',
    '--disable-warning=ExperimentalWarning',
    LAPTOP_MAIN,
    ...rest,
  ];

  /** Runs one command to its end. */
  const run = (rest: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args(rest), { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  /** Starts `metnos-laptop run`; `waitFor` resolves at the first stderr line matching. */
  const start = () => {
    const child: ChildProcess = spawn(process.execPath, args(['run']), {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const watchers: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk;
      for (const line of chunk.toString().split('\n'))
        for (const watcher of [...watchers])
          if (watcher.pattern.test(line)) {
            watchers.splice(watchers.indexOf(watcher), 1);
            watcher.resolve(line);
          }
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    return {
      child,
      exited,
      output: () => output,
      waitFor: (pattern: RegExp) =>
        new Promise<string>((resolve, reject) => {
          watchers.push({ pattern, resolve });
          exited.then(() => reject(new Error(`the laptop exited before ${pattern}:\n${output}`)));
        }),
      kill: async () => {
        child.kill('SIGKILL');
        await exited;
      },
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      },
    };
  };

  /** The laptop's ledger, read by the test (WAL lets it read beside the agent). */
  const ledger = () => createLedger({ path: join(stateDir, 'ledger.sqlite') });

  /** The laptop's own audit lines. */
  const auditLines = async (): Promise<Array<Record<string, unknown>>> => {
    const dir = join(stateDir, 'audit');
    const names = await readdir(dir).catch(() => [] as string[]);
    const lines: Array<Record<string, unknown>> = [];
    for (const name of names.sort())
      for (const line of (await readFile(join(dir, name), 'utf8')).split('\n'))
        if (line.trim()) lines.push(JSON.parse(line));
    return lines;
  };

  return {
    home,
    env,
    pictures,
    stateDir,
    run,
    start,
    ledger,
    auditLines,
    remove: () => rm(home, { recursive: true, force: true }),
  };
}

/** The server side: a fresh CA, device store and workspace, a hub on a loopback port, and a relay in front. */
export async function makeServer(options: { pushUpdates?: boolean } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'metnos-hub-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  const trustedKeys = [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'))];
  const photoOrganize = await verifyExecutor(join(REPO, 'executors', 'photo_organize'), { trustedKeys });
  const store = createDeviceStore({ path: join(root, 'data', 'devices.sqlite') });
  const authority = await openDeviceAuthority({ dir: join(root, 'config', 'devices') });
  const logs: string[] = [];
  const hub = await startDeviceHub({
    store,
    authority,
    executor: (name) => (name === 'photo_organize' ? photoOrganize : undefined),
    trustedKeys,
    workspace,
    port: 0,
    callTimeoutMs: 120_000,
    log: (line) => logs.push(line),
    ...(options.pushUpdates === undefined ? {} : { pushUpdates: options.pushUpdates }),
  });
  const relay = await startRelay(hub.port);
  /** The server's audit lines (`.audit/executors`), oldest first. */
  const auditLines = async (): Promise<Array<Record<string, unknown>>> => {
    const dir = join(workspace, '.audit', 'executors');
    const lines: Array<Record<string, unknown>> = [];
    for (const name of (await readdir(dir).catch(() => [] as string[])).sort())
      for (const line of (await readFile(join(dir, name), 'utf8')).split('\n'))
        if (line.trim()) lines.push(JSON.parse(line));
    return lines;
  };
  return {
    root,
    workspace,
    store,
    authority,
    hub,
    relay,
    logs,
    auditLines,
    address: `tls://127.0.0.1:${relay.port}`,
    code: (executors = ['photo_organize']) => createPairingCode(store, { executors }).code,
    close: async () => {
      await relay.close();
      await hub.close();
      store.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Pairs a laptop with a server through the relay, grants its Pictures folder, and returns its device id. */
export async function pair(
  server: Awaited<ReturnType<typeof makeServer>>,
  laptop: Awaited<ReturnType<typeof makeLaptop>>,
) {
  const paired = await laptop.run([
    'pair',
    server.address,
    server.code(),
    '--name',
    'test-laptop',
    '--grant',
    laptop.pictures,
  ]);
  if (paired.code !== 0) throw new Error(`pairing failed: ${paired.stderr}`);
  const device = /\((dev_[a-z0-9]+)\)/.exec(paired.stdout)![1]!;
  return device;
}

/** Every file under a folder, relative, sorted, the host's `.audit` left out. */
export async function tree(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1))
    .filter((path) => !path.startsWith('.audit'))
    .sort();
}

/** Resolves once `check` is true (polled every 25 ms), or fails after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 20_000,
  what = 'the condition',
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
