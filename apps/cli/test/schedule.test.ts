// `metnos schedule` as a person runs it: the real CLI over a workspace `metnos init` made.
import { spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './__fixtures__/cli.ts';

const METNOS = join(repoRoot, 'bin', 'metnos');
let work: string;
let workspaceDir: string;

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|METNOS_|XDG_)/.test(name)),
  );
  const child = spawn(METNOS, args, {
    cwd: workspaceDir ?? work,
    env: {
      ...base,
      HOME: join(work, 'home'),
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      METNOS_CONFIG_DIR: join(work, 'config'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-schedule-'));
  await mkdir(join(work, 'home'), { recursive: true });
  const init = await run(['init', join(work, 'ws'), '--no-key']);
  expect(init.code).toBe(0);
  workspaceDir = join(work, 'ws');
  await appendFile(join(workspaceDir, 'metnos.toml'), '\n[runtime]\ndata_dir = "data"\n');
}, 120_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('metnos schedule', () => {
  it('adds a schedule from a sentence, shows it as cron, lists, pauses, resumes, runs it now and cancels it', async () => {
    const added = await run([
      'schedule',
      'add',
      'what time is it?',
      '--every',
      'every morning at 8',
      '--tz',
      'Europe/Rome',
      '--yes',
    ]);
    expect(added.code, added.err).toBe(0);
    expect(added.err).toContain('cadence: 0 8 * * *');
    const id = added.out.trim().split(/\s+/)[0]!;
    expect(added.out).toContain('active');

    const listed = await run(['schedule', 'list']);
    expect(listed.out).toContain(id);
    expect(listed.out).toContain('"what time is it?"');

    expect((await run(['schedule', 'pause', id])).out).toContain('paused');
    expect((await run(['schedule', 'resume', id])).out).toContain('active');

    // fired here and now through the engine (the time is answered by rule: no model needed)
    const fired = await run(['schedule', 'run-now', id]);
    expect(fired.code, fired.err).toBe(0);
    expect(fired.out).toMatch(/It is \d{2}:\d{2}/);

    expect((await run(['schedule', 'cancel', id])).out).toContain('cancelled');
    expect((await run(['schedule', 'list'])).out).not.toContain(id);
    expect((await run(['schedule', 'list', '--all'])).out).toContain(id);
  }, 120_000);

  it('refuses what it cannot read with one line and exit 2, and creates nothing without confirmation', async () => {
    const garbled = await run(['schedule', 'add', 'hello', '--every', 'whenever the moon is blue', '--yes']);
    expect(garbled.code).toBe(2);
    expect(garbled.err).not.toMatch(/\n\s+at /);
    const unconfirmed = await run(['schedule', 'add', 'hello', '--every', 'every 5 minutes']);
    expect(unconfirmed.code).toBe(1);
    expect((await run(['schedule', 'list'])).out).not.toContain('"hello"');
    expect((await run(['schedule', 'pause', 'no-such-id'])).code).toBe(2);
    expect((await run(['schedule', 'fly'])).code).toBe(2);
  }, 60_000);
});
