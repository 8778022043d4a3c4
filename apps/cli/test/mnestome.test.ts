import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMnestome } from '@metnos/mnestome';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, STACK_LINE, writeWorkspaceConfig } from './__fixtures__/cli.ts';

let work: string;
let data: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

const request = 'count the words of the last 2 lines of notes/diary.md';
const intent = { text: '{"verb":"count","object":"words","qualifiers":["diary"]}' };
/** fs_read's content piped into text_stats: one passage between two seed executors. */
const plan = {
  text: JSON.stringify({
    steps: [
      { tool: 'fs_read', args: { path: 'notes/diary.md', mode: 'tail', lines: 2 } },
      { tool: 'text_stats', args: { text: '${step1.content.content}' } },
    ],
    final_message: '${step2.content.words} words',
  }),
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-mnestome-'));
  data = join(work, 'data');
  server = await startOllamaServer();
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
  await mkdir(data);
  await writeFile(
    join(work, 'workspace', 'notes', 'diary.md'),
    'monday rain\ntuesday sun\nwednesday wind and rain\n',
  );
  await writeWorkspaceConfig(work, server.url);
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos ask and the mnestome', () => {
  it('keeps the passages of a turn in <data>/mnestome.sqlite', async () => {
    server.push(intent, plan);
    const result = await cli(['ask', request]);
    expect(result.out).toContain('6 words');
    expect(result.code).toBe(0);
    const mnestome = createMnestome({ path: join(data, 'mnestome.sqlite') });
    expect(mnestome.passagesFrom('fs_read')).toEqual([
      expect.objectContaining({ src: 'fs_read', dst: 'text_stats', dstExists: true, uses: 1 }),
    ]);
    mnestome.close();
  });

  it('answers with memory when mnestome.sqlite is garbage, and says what the turn did without', async () => {
    await writeFile(join(data, 'mnestome.sqlite'), 'these bytes are not a SQLite database. '.repeat(200));
    const result = await cli(['ask', request]);
    expect(result.out).toContain('6 words');
    expect(result.out).not.toContain('without memory');
    expect(result.code).toBe(0);
    expect(result.err).toContain(
      `warning: the store ${join(data, 'mnestome.sqlite')} is not a SQLite database`,
    );
    expect(result.err).toContain('this turn ran without the mnestome');
    expect(result.err).not.toMatch(STACK_LINE);
  });
});
