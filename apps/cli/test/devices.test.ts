import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPublicKey, verifyExecutor } from '@metnos/executor-sdk';
import { createDeviceStore, type DeviceHub, openDeviceAuthority, startDeviceHub } from '@metnos/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePhotos } from '../../../executors/photo_organize/tests/photos.ts';
import { cli, repoRoot, STACK_LINE } from './__fixtures__/cli.ts';

// `metnos devices` works on the same devices.sqlite as the device channel; `metnos audit` shows
// the server's and the laptop's lines of a remote call. The laptop is a real metnos-laptop process.

let work: string;
let hub: DeviceHub;
let store: ReturnType<typeof createDeviceStore>;
const laptopHome = () => join(work, 'laptop');

function laptop(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const home = laptopHome();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=metnos-source',
        '--disable-warning=ExperimentalWarning',
        join(repoRoot, 'apps', 'laptop-agent', 'src', 'main.ts'),
        ...args,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          METNOS_CONFIG_DIR: join(home, '.config', 'metnos'),
          XDG_STATE_HOME: join(home, '.local', 'state'),
          XDG_CACHE_HOME: join(home, '.cache'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-devices-'));
  process.env.INIT_CWD = work;
  delete process.env.npm_lifecycle_event;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
  await mkdir(join(work, 'workspace'), { recursive: true });
  await mkdir(join(laptopHome(), 'Pictures'), { recursive: true });
  const trustedKeys = [await readPublicKey(join(repoRoot, 'keys', 'metnos-release.pub'))];
  const photoOrganize = await verifyExecutor(join(repoRoot, 'executors', 'photo_organize'), { trustedKeys });
  store = createDeviceStore({ path: join(work, 'data', 'devices.sqlite') });
  hub = await startDeviceHub({
    store,
    authority: await openDeviceAuthority({ dir: join(work, 'config', 'devices') }),
    executor: (name) => (name === 'photo_organize' ? photoOrganize : undefined),
    trustedKeys,
    workspace: join(work, 'workspace'),
    port: 0,
  });
  await writeFile(
    join(work, 'metnos.toml'),
    `[workspace]\nroot = "workspace"\nexecutors = "${join(repoRoot, 'executors')}"\ntrusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]\n\n[runtime]\ndata_dir = "data"\n\n[devices]\nlisten = "127.0.0.1:${hub.port}"\n`,
  );
});

afterAll(async () => {
  await hub?.close();
  store?.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos devices, metnos audit', () => {
  it('pairs, lists, renames, runs through the channel, shows both audit lines, and revokes', async () => {
    expect((await cli(['devices', 'pair'])).code).toBe(2);
    const pairing = await cli(['devices', 'pair', '--executor', 'photo_organize']);
    expect(pairing.code).toBe(0);
    const code = /pairing code: ([A-Z0-9-]{19})/.exec(pairing.out)![1]!;
    expect(pairing.out).toContain(`metnos-laptop pair tls://127.0.0.1:${hub.port} ${code}`);

    const paired = await laptop([
      'pair',
      `tls://127.0.0.1:${hub.port}`,
      code,
      '--name',
      'ada-laptop',
      '--grant',
      join(laptopHome(), 'Pictures'),
    ]);
    expect(paired.code, paired.err).toBe(0);
    const id = /\((dev_[a-z0-9]+)\)/.exec(paired.out)![1]!;
    expect((await cli(['devices', 'list'])).out).toMatch(
      new RegExp(`${id}\\s+ada-laptop\\s+active\\s+photo_organize`),
    );
    expect((await cli(['devices', 'rename', 'ada-laptop', 'studio'])).code).toBe(0);
    expect(store.device(id)?.name).toBe('studio');

    await writePhotos(join(laptopHome(), 'Pictures'), 12);
    const running = spawn(
      process.execPath,
      [
        '--conditions=metnos-source',
        '--disable-warning=ExperimentalWarning',
        join(repoRoot, 'apps', 'laptop-agent', 'src', 'main.ts'),
        'run',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: laptopHome(),
          METNOS_CONFIG_DIR: join(laptopHome(), '.config', 'metnos'),
          XDG_STATE_HOME: join(laptopHome(), '.local', 'state'),
          XDG_CACHE_HOME: join(laptopHome(), '.cache'),
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => running.on('close', resolve));
    for (let waited = 0; !hub.connected(id) && waited < 20_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const outcome = await hub.call('studio', 'photo_organize', {}, { caller: { kind: 'cli' } });
    expect(outcome.result.ok).toBe(true);

    const audit = await cli(['audit', outcome.trace]);
    expect(audit.code).toBe(0);
    expect(audit.out).toMatch(/^server .* photo_organize@1\.0\.0 .*exit ok .*device studio/m);
    expect(audit.out).toMatch(/^laptop .* photo_organize@1\.0\.0 .*exit ok .*touched 12/m);
    expect(audit.out).toMatch(/move IMG_0000\.jpg -> \d{4}\/\d{2}\/IMG_0000\.jpg {2}sha256:[0-9a-f]{64}/);
    expect(audit.out).toMatch(/12 files before, 12 after/);

    const revoked = await cli(['devices', 'revoke', id]);
    expect(revoked.code).toBe(0);
    // the running server reads the store: the next call is refused at once
    expect((await hub.call(id, 'photo_organize', {}, { caller: { kind: 'cli' } })).result).toMatchObject({
      ok: false,
      error: { class: 'Revoked' },
    });
    running.kill('SIGTERM');
    await exited;
    const unknown = await cli(['devices', 'revoke', 'nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).not.toMatch(STACK_LINE);
    expect((await cli(['audit', 'tr_nothing'])).code).toBe(1);
  });
});
