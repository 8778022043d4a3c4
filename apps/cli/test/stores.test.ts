import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, STACK_LINE, writeWorkspaceConfig } from './__fixtures__/cli.ts';

const GARBAGE = 'these bytes are not a SQLite database. '.repeat(200);

let work: string;
let data: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

const request = 'read notes/diary.md and tell me the last 2 lines';
const intent = { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' };
const plan = {
  text: JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
    final_message: 'The last lines are:\n${step1.content.content}',
  }),
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-stores-'));
  data = join(work, 'data');
  server = await startOllamaServer();
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
  await mkdir(data);
  await writeFile(join(work, 'workspace', 'notes', 'diary.md'), 'monday\ntuesday\nwednesday\nthursday\n');
  await writeWorkspaceConfig(work, server.url);
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(work, { recursive: true, force: true });
});

describe('corrupted stores', () => {
  it('answers without memory when fastpaths.sqlite and autopath.sqlite are garbage, and says so', async () => {
    await writeFile(join(data, 'fastpaths.sqlite'), GARBAGE);
    await writeFile(join(data, 'autopath.sqlite'), GARBAGE);
    server.push(intent, plan);
    const result = await cli(['ask', request]);
    expect(result.out).toContain('The last lines are:\nwednesday\nthursday');
    expect(result.out).toMatch(/— layer: engine · .* · without memory · turn /);
    expect(result.code).toBe(0);
    for (const file of ['fastpaths.sqlite', 'autopath.sqlite']) {
      expect(result.err).toContain(`warning: the store ${join(data, file)} is not a SQLite database`);
    }
    expect(result.err).toContain('metnos doctor --repair');
    expect(result.err).toContain('this turn ran without memory');
    expect(result.err).not.toMatch(STACK_LINE);
  });

  it('reports bad stores in memory list and feedback as one clear error, without a stack trace', async () => {
    // A real autopath store cut short, as a full disk or a crash during a copy leaves it.
    const autopathFile = join(data, 'autopath.sqlite');
    await rm(autopathFile);
    const autopath = createAutopathStore({ path: autopathFile });
    for (let index = 0; index < 100; index++) {
      const outcome = 'success' as const;
      autopath.observe({ turnId: `t${index}`, request, layer: 'engine', latencyMs: 1, outcome });
    }
    autopath.close();
    await rm(`${autopathFile}-wal`, { force: true });
    await truncate(autopathFile, 6000);
    for (const args of [
      ['memory', 'list'],
      ['feedback', 'some-turn', 'up'],
    ]) {
      const result = await cli(args);
      expect([args, result.code]).toEqual([args, 1]);
      expect(result.err).toMatch(/^error: the store .*(fastpaths|autopath)\.sqlite /);
      expect(result.err).toContain('metnos doctor --repair');
      expect(result.err).not.toMatch(STACK_LINE);
    }
  });

  it('metnos doctor reports them; --repair moves them aside and creates fresh stores that remember again', async () => {
    await rm(join(data, 'terminator.sqlite'), { force: true });
    await mkdir(join(data, 'terminator.sqlite'));
    const report = await cli(['doctor']);
    expect(report.code).toBe(0);
    expect(report.out).toMatch(/no +fastpaths\.sqlite +bad: the store .* is not a SQLite database/);
    expect(report.out).toMatch(/no +autopath\.sqlite +bad: the store .* is damaged/);
    expect(report.out).toMatch(/no +terminator\.sqlite +bad: the store .* is a folder/);
    expect(report.out).toContain('fix: metnos doctor --repair');
    expect(await readFile(join(data, 'fastpaths.sqlite'), 'utf8')).toBe(GARBAGE);

    const repaired = await cli(['doctor', '--repair']);
    expect(repaired.out).toMatch(/ok +fastpaths\.sqlite +repaired: .*now .*fastpaths\.sqlite\.corrupt-/);
    expect(repaired.out).toMatch(/ok +terminator\.sqlite +repaired/);
    const files = await readdir(data);
    const aside = files.find((file) => file.startsWith('fastpaths.sqlite.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(data, aside!), 'utf8')).toBe(GARBAGE);
    const fresh = createFastpathStore({ path: join(data, 'fastpaths.sqlite') });
    expect(fresh.list()).toEqual([]);
    fresh.close();
    expect((await cli(['doctor'])).out).not.toMatch(/^ +no +\S+\.(sqlite|db) /m);

    server.push(intent, plan);
    const first = await cli(['ask', request]);
    expect(first.err).toBe('');
    expect(first.out).not.toContain('without memory');
    const second = await cli(['ask', request]);
    expect(second.out).toContain('— layer: fastpath · 0 model calls');
  });

  it('runs the loop with its scratchpad in memory when scratchpad.db is damaged', async () => {
    await writeFile(join(data, 'scratchpad.db'), GARBAGE);
    server.push({ text: 'Nothing to read; the diary is in notes.' });
    const result = await cli(['ask', '--engine', 'loop', 'where is the diary?']);
    expect(result.out).toContain('local loop · answer');
    expect(result.err).toContain(
      `warning: the store ${join(data, 'scratchpad.db')} is not a SQLite database`,
    );
    expect(result.err).toContain('this turn kept its scratchpad in memory only');
    expect(result.code).toBe(0);
  });
});

describe('a store written by a newer Metnos', () => {
  it('is reported with "update Metnos", and --repair leaves it where it is', async () => {
    const newer = await mkdtemp(join(tmpdir(), 'metnos-newer-'));
    await writeWorkspaceConfig(newer, 'http://127.0.0.1:9');
    const file = join(newer, 'data', 'fastpaths.sqlite');
    await mkdir(join(newer, 'data'), { recursive: true });
    createFastpathStore({ path: file }).close();
    const { readStoreFile } = await import('@metnos/autopath/test');
    readStoreFile(file, (db) =>
      db
        .prepare('INSERT INTO "__drizzle_migrations_autopath" (hash, created_at) VALUES (?, ?)')
        .run('f'.repeat(64), Date.now() + 86_400_000),
    );
    const saved = process.env.INIT_CWD;
    process.env.INIT_CWD = newer;
    try {
      const report = await cli(['doctor', '--repair']);
      expect(report.out).toMatch(/no +fastpaths\.sqlite +bad: .*newer Metnos/);
      expect(report.out).toContain('fix: update Metnos');
      expect(await readdir(join(newer, 'data'))).not.toContainEqual(expect.stringMatching(/corrupt/));
    } finally {
      process.env.INIT_CWD = saved;
      await rm(newer, { recursive: true, force: true });
    }
  });
});

describe('mistakes a person can make', () => {
  it('get a message, never a stack trace: a bad metnos.toml value, a folder that is not there', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'metnos-cli-mistakes-'));
    await writeFile(join(elsewhere, 'metnos.toml'), '[runtime]\nengine = "sometimes"\n');
    process.env.INIT_CWD = elsewhere;
    try {
      const config = await cli(['ask', 'what time is it?']);
      expect(config.code).toBe(1);
      expect(config.err).toContain('metnos.toml: field "runtime.engine"');
      expect(config.err).not.toMatch(STACK_LINE);
      expect((await cli(['keys', 'init'])).code).toBe(0);
      const missing = await cli(['executor', 'sign', 'no-such-folder']);
      expect(missing.code).toBe(1);
      expect(missing.err).toMatch(/^no executor "no-such-folder": not a folder with a manifest.toml/);
      expect(missing.err).not.toMatch(STACK_LINE);
    } finally {
      process.env.INIT_CWD = work;
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
