import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot, STACK_LINE, writeWorkspaceConfig } from './__fixtures__/cli.ts';

let work: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-ask-'));
  server = await startOllamaServer();
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
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

const plan = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } }],
  final_message: 'The last lines are:\n${step1.content.content}',
});

describe('metnos ask', () => {
  it('answers through a model speaking the Ollama protocol, then from memory with no model call', async () => {
    server.push({ text: '{"verb":"read","object":"file","qualifiers":["diary"]}' }, { text: plan });
    const first = await cli(['ask', 'read notes/diary.md and tell me the last 2 lines']);
    expect(first.err).toBe('');
    expect(first.out).toContain('The last lines are:\nwednesday\nthursday');
    expect(first.out).toMatch(/— layer: engine · \d+ model calls? /);
    expect(first.code).toBe(0);
    const requestsAfterFirst = server.requests.length;
    expect(requestsAfterFirst).toBeGreaterThan(0);
    expect(
      server.requests.every((request) => (request.body as { model?: string }).model === 'qwen3:8b'),
    ).toBe(true);

    const second = await cli(['ask', 'read notes/diary.md and tell me the last 2 lines']);
    expect(second.out).toContain('wednesday\nthursday');
    expect(second.out).toContain('— layer: fastpath · 0 model calls');
    expect(server.requests.length).toBe(requestsAfterFirst);
  });

  it('answers "what time is it" without a model', async () => {
    const before = server.requests.length;
    const result = await cli(['ask', 'what time is it?']);
    expect(result.out).toMatch(/It is \d{2}:\d{2}\./);
    expect(server.requests.length).toBe(before);
  });

  it('ends cleanly with a message a person can act on when the model is down', async () => {
    const down = await mkdtemp(join(tmpdir(), 'metnos-ask-down-'));
    await writeFile(
      join(down, 'metnos.toml'),
      `[workspace]
root = "workspace"
executors = "${join(repoRoot, 'executors')}"
trusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]
[runtime]
data_dir = "data"
[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
base_url = "http://127.0.0.1:9"
`,
    );
    process.env.INIT_CWD = down;
    const result = await cli(['ask', 'summarise the notes in the folder notes']);
    process.env.INIT_CWD = work;
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    expect(result.err).toMatch(/could not reach the language model/i);
    expect(result.err).toContain('ollama serve');
    expect(result.err).toContain('— layer: terminator');
    expect(result.err).not.toMatch(STACK_LINE);
    await rm(down, { recursive: true, force: true });
  });

  it('records feedback for a turn', async () => {
    const answered = await cli(['ask', 'read notes/diary.md and tell me the last 2 lines']);
    const turnId = /turn ([0-9a-f-]{36})/.exec(answered.out)?.[1];
    expect(turnId).toBeDefined();
    const feedback = await cli(['feedback', turnId!, 'up']);
    expect(feedback.out).toContain('recorded');
    const unknown = await cli(['feedback', 'no-such-turn', 'up']);
    expect(unknown).toMatchObject({ code: 1, out: '' });
    expect(unknown.err).toContain('no turn no-such-turn in the memory');
  });

  it('lists remembered plans and forgets one by hand', async () => {
    const listed = await cli(['memory', 'list']);
    const id = /^([0-9a-f-]{36})\s+\d+\s+fs_read@/m.exec(listed.out)?.[1];
    expect(id).toBeDefined();
    expect((await cli(['memory', 'forget', id!])).out).toContain(`forgot ${id}`);
    expect((await cli(['memory', 'list'])).out).not.toContain(id!);
    const again = await cli(['memory', 'forget', id!]);
    expect(again).toMatchObject({ code: 1, out: '' });
    expect(again.err).toContain(`no remembered plan ${id}`);
  });

  it('runs the turn-by-turn loop with native tool calls', async () => {
    server.push(
      { toolCalls: [{ name: 'fs_read', args: { path: 'notes/diary.md', mode: 'head', lines: 1 } }] },
      { text: 'The first line is monday.' },
    );
    const result = await cli(['ask', '--engine', 'loop', 'read the first line of notes/diary.md']);
    expect(result.out).toContain('The first line is monday.');
    expect(result.out).toContain('local loop · answer · 1 step(s)');
    const withTools = server.requests.at(-2)!.body as { tools?: Array<{ function: { name: string } }> };
    expect(withTools.tools?.map((tool) => tool.function.name)).toContain('fs_read');
  });
});
