import { appendFile, mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ReplayBundle, resultHash } from '@metnos/planner';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENGINE_KINDS } from '../src/commands/ask.ts';
import { appConfigSchema } from '../src/config.ts';
import { cli, STACK_LINE, writeWorkspaceConfig } from './__fixtures__/cli.ts';

let root: string;
/** This test's place: its own metnos.toml, workspace and data folder, so no test's memory serves another's. */
let work: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

const DIARY = 'monday\ntuesday\nwednesday\nthursday\n';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-replay-'));
  server = await startOllamaServer();
  delete process.env.npm_lifecycle_event; // under npx the CLI would read its own cwd, not INIT_CWD
  delete process.env.METNOS_ENGINE;
  process.env.METNOS_CONFIG_DIR = join(root, 'config');
});

beforeEach(async () => {
  work = await mkdtemp(join(root, 'place-'));
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
  await writeWorkspaceConfig(work, server.url);
  process.env.INIT_CWD = work;
  expect(server.remaining()).toBe(0);
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const intent = { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' };
/** The model's plan: the last two lines of a file in the workspace. */
const tailOf = (path: string) => ({
  text: JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path, mode: 'tail', lines: 2 } }],
    final_message: 'The last lines are:\n${step1.content.content}',
  }),
});

const turnOf = (out: string) => /· turn ([0-9a-f-]{36})/.exec(out)?.[1] ?? '';
const callsOf = (out: string) => Number(/· (\d+) model calls? ·/.exec(out)?.[1]);
const bundlePath = (turnId: string) => join(work, 'data', 'replay', `${turnId}.json`);

/** One turn of the learning engine reading `notes/<name>`, answered through the scripted model. */
async function askTail(name = 'diary.md'): Promise<string> {
  await writeFile(join(work, 'workspace', 'notes', name), DIARY);
  server.push(intent, tailOf(`notes/${name}`));
  const asked = await cli(['ask', `read notes/${name} and tell me the last 2 lines`]);
  expect(asked.err).toBe('');
  expect(asked.out).toContain('The last lines are:\nwednesday\nthursday');
  expect(asked.out).toContain('— layer: engine');
  return turnOf(asked.out);
}

describe('metnos replay', () => {
  it('replays a turn of ask: every step run again through the sandbox matches the record', async () => {
    const turnId = await askTail();
    const bundle = JSON.parse(await readFile(bundlePath(turnId), 'utf8')) as ReplayBundle;
    expect(bundle.turnId).toBe(turnId);
    expect(bundle.runs[0]?.steps.map((step) => step.tool)).toEqual(['fs_read']);

    const before = server.requests.length;
    const replayed = await cli(['replay', turnId]);
    expect(replayed.err).toBe('');
    expect(replayed.out).toBe(`turn ${turnId}: replayed, 1 step matched\n`);
    expect(replayed.code).toBe(0);
    expect(server.requests.length).toBe(before); // a replay asks no model

    const json = await cli(['replay', turnId, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ turnId, matched: 1, notRerun: [] });

    // the same bundle from a file given by path
    const copy = join(work, 'copy.json');
    await writeFile(copy, await readFile(bundlePath(turnId)));
    const fromFile = await cli(['replay', '--bundle', copy]);
    expect(fromFile.out).toContain(`turn ${turnId}: replayed, 1 step matched`);
  });

  it('names run 1, step 1 when the recorded result of step 1 was changed in the bundle', async () => {
    const turnId = await askTail();
    const bundle = JSON.parse(await readFile(bundlePath(turnId), 'utf8')) as ReplayBundle;
    const step = bundle.runs[0]!.steps[0]!;
    const result = step.result as { content: { content: string } };
    result.content.content = 'friday\nsaturday\n';
    const recorded = step.resultHash;
    step.resultHash = resultHash(result as Parameters<typeof resultHash>[0]);
    await writeFile(bundlePath(turnId), JSON.stringify(bundle));

    const replayed = await cli(['replay', turnId]);
    expect(replayed.code).toBe(1);
    expect(replayed.out).toBe('');
    expect(replayed.err).toContain(`turn ${turnId}: diverged — run 1, step 1 (fs_read): the result differs`);
    expect(replayed.err).toContain('where:    run 1, step 1, fs_read (result)');
    expect(replayed.err).toContain(`expected: ${step.resultHash}`);
    expect(replayed.err).toContain(`actual:   ${recorded}`);

    const json = await cli(['replay', turnId, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out).divergence).toMatchObject({
      at: 'result',
      run: 1,
      step: 1,
      tool: 'fs_read',
      expected: step.resultHash,
      actual: recorded,
    });
  });

  it('diverges on the result when the file the turn read has changed in the workspace', async () => {
    const turnId = await askTail();
    const diary = join(work, 'workspace', 'notes', 'diary.md');
    const { mtime } = await stat(diary);
    // other bytes under the same modification time: the content alone makes the difference
    await writeFile(diary, `${DIARY}friday\n`);
    await utimes(diary, mtime, mtime);
    const replayed = await cli(['replay', turnId]);
    expect(replayed.code).toBe(1);
    expect(replayed.err).toContain('run 1, step 1 (fs_read): the result differs from the record');
    // the same bytes and modification time as the turn read (fs_read reports both): it matches again
    await writeFile(diary, DIARY);
    await utimes(diary, mtime, mtime);
    const restored = await cli(['replay', turnId]);
    expect(restored.out).toContain('replayed, 1 step matched');
    expect(restored.code).toBe(0);
  });

  it('does not write again what a turn wrote: the recorded result of a step with side effects stands', async () => {
    await writeFile(join(work, 'workspace', 'notes', 'diary.md'), DIARY);
    const copy = {
      text: JSON.stringify({
        steps: [
          { tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'head', lines: 1 } },
          { tool: 'fs_write', args: { path: 'notes/first.md', content: '${step1.content.content}' } },
        ],
        final_message: 'Copied.',
      }),
    };
    server.push({ text: '{"verb":"write","object":"file","qualifiers":[]}' }, copy);
    const asked = await cli(['ask', '--yes', 'copy the first line of notes/diary.md to notes/first.md']);
    expect(asked.out).toContain('Copied.');
    const first = join(work, 'workspace', 'notes', 'first.md');
    expect(await readFile(first, 'utf8')).toBe('monday\n');
    await rm(first);
    const replayed = await cli(['replay', turnOf(asked.out)]);
    expect(replayed.out).toBe(
      `turn ${turnOf(asked.out)}: replayed, 2 steps matched (1 not re-run: side effects — fs_write)\n`,
    );
    await expect(stat(first)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('says in one line, exit 2, that there is no bundle for a turn, or that a turn id is not one', async () => {
    const missing = await cli(['replay', '00000000-0000-0000-0000-000000000000']);
    expect(missing).toMatchObject({ code: 2, out: '' });
    expect(missing.err).toMatch(
      /^no replay bundle at .*00000000-0000-0000-0000-000000000000\.json \(metnos ask/,
    );
    expect(missing.err.trim().split('\n')).toHaveLength(1);

    const bad = await cli(['replay', '../../etc/passwd']);
    expect(bad).toMatchObject({ code: 2, out: '' });
    expect(bad.err).toContain('"../../etc/passwd" is not a turn id');

    await writeFile(join(work, 'not-a-bundle.json'), '{"hello": 1}');
    const notOne = await cli(['replay', '--bundle', 'not-a-bundle.json']);
    expect(notOne.code).toBe(2);
    expect(notOne.err).toContain('is not a metnos.replay/1 bundle');

    for (const result of [missing, bad, notOne]) expect(result.err).not.toMatch(STACK_LINE);
    expect((await cli(['replay'])).code).toBe(2);
    expect((await cli(['replay', '--help'])).out).toContain('metnos replay <turn-id>');
  });
});

describe('what ask gives the learning engine', () => {
  it("checks a plan's verify step with the vaglio's verifier, and replays it with the same verdict", async () => {
    await writeFile(join(work, 'workspace', 'notes', 'diary.md'), DIARY);
    const checked = {
      text: JSON.stringify({
        steps: [
          { tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'head', lines: 1 } },
          { kind: 'verify', rulePack: 'rules.answer.v1' },
        ],
        final_message: 'The first line is ${step1.content.content}',
      }),
    };
    server.push(intent, checked);
    const asked = await cli(['ask', 'read the first line of notes/diary.md']);
    expect(asked.out).toContain('The first line is monday');
    expect(asked.code).toBe(0);
    const bundle = JSON.parse(await readFile(bundlePath(turnOf(asked.out)), 'utf8')) as ReplayBundle;
    expect(bundle.runs[0]?.verdicts).toMatchObject([{ pack: { id: 'rules.answer.v1' }, outcome: 'pass' }]);
    expect((await cli(['replay', turnOf(asked.out)])).out).toContain('replayed, 1 step matched');
  });

  it('answers when the bundle cannot be written', async () => {
    await mkdir(join(work, 'data'), { recursive: true });
    await writeFile(join(work, 'data', 'replay'), 'a file where the replay folder would be\n');
    const turnId = await askTail();
    const replayed = await cli(['replay', turnId]);
    expect(replayed.code).toBe(2);
    expect(replayed.err).toMatch(/^the replay bundle at .* is unreadable: ENOTDIR/);
  });

  it('stops a turn at [runtime.budget] tool_calls', async () => {
    await appendFile(join(work, 'metnos.toml'), '\n[runtime.budget]\ntool_calls = 1\n');
    await writeFile(join(work, 'workspace', 'notes', 'diary.md'), DIARY);
    const twoReads = {
      text: JSON.stringify({
        steps: [
          { tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'head', lines: 1 } },
          { tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 1 } },
        ],
        final_message: '${step1.content.content} and ${step2.content.content}',
      }),
    };
    server.push(intent, twoReads);
    const asked = await cli(['ask', 'read the first and the last line of notes/diary.md']);
    expect(asked).toMatchObject({ code: 1, out: '' });
    expect(asked.err).toContain("fs_read: the turn's budget of 1 tool calls is spent");
    expect(asked.err).toContain('— layer: terminator');
  });
});

describe('engine variants', () => {
  it('oneshot sends a repeated request to the model again; the default serves it from memory', async () => {
    const turnId = await askTail();
    expect(turnId).not.toBe('');
    const request = 'read notes/diary.md and tell me the last 2 lines';

    const remembered = await cli(['ask', request]);
    expect(remembered.out).toContain('— layer: fastpath · 0 model calls');

    process.env.METNOS_ENGINE = 'oneshot';
    try {
      server.push(intent, tailOf('notes/diary.md'));
      const before = server.requests.length;
      const oneshot = await cli(['ask', request]);
      expect(oneshot.out).toContain('The last lines are:\nwednesday\nthursday');
      expect(oneshot.out).toContain('— layer: engine');
      expect(callsOf(oneshot.out)).toBeGreaterThan(0);
      expect(server.requests.length).toBeGreaterThan(before);
      expect(server.remaining()).toBe(0);
      // the flag wins over the environment
      expect((await cli(['ask', '--engine', 'learning', request])).out).toContain('— layer: fastpath');
    } finally {
      delete process.env.METNOS_ENGINE;
    }
    expect((await cli(['ask', request])).out).toContain('— layer: fastpath · 0 model calls');
  });

  it('refuses an unknown engine with exit 2 and the names it knows, from the flag or the environment', async () => {
    const flag = await cli(['ask', '--engine', 'sometimes', 'what time is it?']);
    expect(flag).toMatchObject({ code: 2, out: '' });
    expect(flag.err).toBe(
      'unknown engine "sometimes" (--engine): known engines are learning, oneshot, strict, loop\n',
    );
    process.env.METNOS_ENGINE = 'turbo';
    try {
      const env = await cli(['ask', 'what time is it?']);
      expect(env).toMatchObject({ code: 2, out: '' });
      expect(env.err).toBe(
        'unknown engine "turbo" (METNOS_ENGINE): known engines are learning, oneshot, strict, loop\n',
      );
    } finally {
      delete process.env.METNOS_ENGINE;
    }
    // metnos.toml accepts the same names
    expect(appConfigSchema.shape.runtime.unwrap().shape.engine.unwrap().options).toEqual([...ENGINE_KINDS]);
    expect((await cli(['ask', '--engine', 'strict', 'what time is it?'])).out).toMatch(/It is \d{2}:\d{2}\./);
  });
});
