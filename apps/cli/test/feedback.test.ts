import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, writeWorkspaceConfig } from './__fixtures__/cli.ts';

let work: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-feedback-'));
  server = await startOllamaServer();
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
  await writeFile(join(work, 'workspace', 'notes', 'diary.md'), 'monday\ntuesday\nwednesday\nthursday\n');
  await writeWorkspaceConfig(work, server.url);
  process.env.INIT_CWD = work;
  delete process.env.npm_lifecycle_event; // under npx the CLI would read its own cwd, not INIT_CWD
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(work, { recursive: true, force: true });
});

const REQUEST = 'read notes/diary.md and tell me the last 2 lines';
const intent = { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' };
/** What a model gets wrong: the first lines for the last. */
const wrong = {
  text: JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'head', lines: 2 } }],
    final_message: 'The lines are:\n${step1.content.content}',
  }),
};
const right = {
  text: JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
    final_message: 'The last lines are:\n${step1.content.content}',
  }),
};

const turnOf = (out: string) => /· turn ([0-9a-f-]{36})/.exec(out)?.[1] ?? '';
const callsOf = (out: string) => Number(/· (\d+) model calls? ·/.exec(out)?.[1]);

describe('metnos feedback goes through the engine', () => {
  it('down, twice, sends the same request back to the Proposer, which may not bring the plan back', async () => {
    server.push(intent, wrong);
    const learned = await cli(['ask', REQUEST]);
    expect(learned.out).toContain('The lines are:\nmonday\ntuesday');
    const replayed = await cli(['ask', REQUEST]);
    expect(replayed.out).toContain('— layer: fastpath · 0 model calls');

    const firstDown = await cli(['feedback', turnOf(replayed.out), 'down']);
    expect(firstDown.out).toContain('recorded');
    expect(firstDown.out).toContain('dropped 1 remembered shortcut: the request goes back to the model');

    server.push(intent, wrong);
    const asked = await cli(['ask', REQUEST]);
    expect(asked.out).toContain('— layer: engine');
    expect(callsOf(asked.out)).toBeGreaterThan(0);

    const secondDown = await cli(['feedback', turnOf(asked.out), 'down']);
    expect(secondDown.out).toContain('memory will not use this plan for this request again');

    const before = server.requests.length;
    server.push(intent, wrong, right);
    const fixed = await cli(['ask', REQUEST]);
    expect(fixed.out).toContain('The last lines are:\nwednesday\nthursday');
    expect(fixed.out).toContain('— layer: engine');
    expect(callsOf(fixed.out)).toBeGreaterThan(0);
    expect(server.requests.length - before).toBe(3);
  });

  it('retry asks again now, without the remembered plan', async () => {
    server.push(intent, right);
    const first = await cli(['ask', 'show the end of notes/diary.md']);
    expect(first.out).toContain('The last lines are:\nwednesday\nthursday');
    server.push(intent, right, wrong);
    const retried = await cli(['feedback', turnOf(first.out), 'retry']);
    expect(retried.out).toContain('feedback "retry" recorded');
    expect(retried.out).toContain('The lines are:\nmonday\ntuesday');
    expect(server.remaining()).toBe(0);
    expect(retried.out).toMatch(/— layer: engine · \d+ model calls/);
    expect(turnOf(retried.out)).not.toBe(turnOf(first.out));
  });

  it('refuses a turn it does not know, and a kind it does not know', async () => {
    const unknown = await cli(['feedback', 'no-such-turn', 'up']);
    expect(unknown).toMatchObject({ code: 1, out: '' });
    expect(unknown.err).toContain('no turn no-such-turn in the memory');
    const odd = await cli(['feedback', 'some-turn', 'sideways']);
    expect(odd.code).toBe(2);
    expect(odd.err).toContain('metnos feedback — tell the memory how a turn went');
  });
});
