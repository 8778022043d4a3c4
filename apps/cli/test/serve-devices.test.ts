// The whole path as a person takes it, in three processes on loopback: `metnos serve` with its
// device channel, the laptop agent in a home of its own, and the `metnos` commands between them.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { serverToken } from '@metnos/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePhotos } from '../../../executors/photo_organize/tests/photos.ts';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');
const LAPTOP = join(repoRoot, 'apps', 'laptop-agent', 'src', 'main.ts');

let work: string;
let workspaceDir: string;
let model: Awaited<ReturnType<typeof startOllamaServer>>;
const started: ChildProcess[] = [];

function env(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|METNOS_|XDG_)/.test(name)),
  );
  return { ...base, HOME: home, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...extra };
}
const serverEnv = () => env(join(work, 'home'), { METNOS_CONFIG_DIR: join(work, 'config') });
const laptopHome = () => join(work, 'laptop');
const laptopEnv = () =>
  env(laptopHome(), {
    METNOS_CONFIG_DIR: join(laptopHome(), '.config', 'metnos'),
    XDG_STATE_HOME: join(laptopHome(), '.local', 'state'),
    XDG_CACHE_HOME: join(laptopHome(), '.cache'),
  });

function start(command: string, args: string[], environment: NodeJS.ProcessEnv, cwd = workspaceDir) {
  const child = spawn(command, args, {
    cwd,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk));
  // 'exit', not 'close': a helper the command leaves running may hold its pipes open
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => setTimeout(() => resolve(code), 200)),
  );
  return { child, out: () => out, err: () => err, exited };
}

async function metnos(args: string[], cwd = workspaceDir) {
  const running = start(METNOS, args, serverEnv(), cwd);
  const code = await running.exited;
  return { code, out: running.out(), err: running.err() };
}

const laptopArgs = (args: string[]) => [
  '--conditions=metnos-source',
  '--disable-warning=ExperimentalWarning',
  LAPTOP,
  ...args,
];

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-serve-devices-'));
  workspaceDir = join(work, 'ws');
  await mkdir(join(work, 'home'), { recursive: true });
  await mkdir(join(laptopHome(), 'Pictures'), { recursive: true });
  model = await startOllamaServer();
  await mkdir(workspaceDir, { recursive: true });
  serverToken(join(work, 'config'), { create: true });
  await writeFile(
    join(workspaceDir, 'metnos.toml'),
    `[workspace]\nroot = "workspace"\nexecutors = "${join(repoRoot, 'executors')}"\ntrusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]\n\n[runtime]\ndata_dir = "data"\n\n[runtime.llm.fast]\nprovider = "ollama"\nmodel = "qwen3:8b"\nbase_url = "${model.url}"\nthink = false\n\n[devices]\nlisten = "127.0.0.1:0"\n`,
  );
}, 120_000);

afterAll(async () => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await model.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos serve with a paired laptop', () => {
  it('pairs, organises photos on the laptop, shows both audit lines, undoes it, and refuses the device once revoked', async () => {
    const server = start(METNOS, ['serve', '--port', '0'], serverEnv());
    let url = '';
    let channel = '';
    await until(() => {
      url = /listening on (http:\/\/\S+)/.exec(server.out())?.[1] ?? '';
      channel = /the device channel listens on (tls:\/\/\S+)/.exec(server.err())?.[1] ?? '';
      return url !== '' && channel !== '';
    }, `metnos serve to start:\n${server.err()}`);

    const pairing = await metnos(['devices', 'pair', '--executor', 'photo_organize']);
    expect(pairing.code, pairing.err).toBe(0);
    const code = /pairing code: (\S+)/.exec(pairing.out)![1]!;
    const paired = start(
      process.execPath,
      laptopArgs(['pair', channel, code, '--name', 'ada-laptop', '--grant', join(laptopHome(), 'Pictures')]),
      laptopEnv(),
    );
    expect(await paired.exited, paired.err()).toBe(0);
    const device = /\((dev_[a-z0-9]+)\)/.exec(paired.out())![1]!;

    await writePhotos(join(laptopHome(), 'Pictures'), 30);
    const agent = start(process.execPath, laptopArgs(['run']), laptopEnv());
    await until(
      async () =>
        /ada-laptop\s+active\s+photo_organize\s+linux/.test((await metnos(['devices', 'list'])).out),
      'the laptop to connect',
    );

    const call = await metnos(['devices', 'call', device, 'photo_organize', '--server', url]);
    expect(call.code, call.err).toBe(0);
    expect(call.out).toMatch(/^ok: trace \S+, 30 file operations applied, isolation full/m);
    const trace = /trace (\S+),/.exec(call.out)![1]!;
    expect((await readdir(join(laptopHome(), 'Pictures'))).filter((name) => name.endsWith('.jpg'))).toEqual(
      [],
    );

    const audit = await metnos(['audit', trace]);
    expect(audit.out).toMatch(/^server .*exit ok .*device ada-laptop/m);
    expect(audit.out).toMatch(/^laptop .*exit ok .*touched 30/m);

    const undo = await metnos(['undo', trace, '--server', url]);
    expect(undo.code, undo.err).toBe(0);
    expect(
      (await readdir(join(laptopHome(), 'Pictures'))).filter((name) => name.endsWith('.jpg')),
    ).toHaveLength(30);

    expect((await metnos(['devices', 'revoke', 'ada-laptop'])).code).toBe(0);
    const refused = await metnos(['devices', 'call', device, 'photo_organize', '--server', url]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/Revoked/);
    agent.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
