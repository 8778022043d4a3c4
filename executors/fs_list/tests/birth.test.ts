import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

/** Outside paths are refused by the sandbox's policy check (PolicyViolation) or, failing that, by the executor. */
const refused = {
  ok: false,
  error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
};
let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-fs-list-'));
  await mkdir(join(workspace, 'photos', '2025', 'summer'), { recursive: true });
  await mkdir(join(workspace, '.cache'));
  await writeFile(join(workspace, 'readme.md'), '# hi\n');
  await writeFile(join(workspace, 'notes.md'), 'notes');
  await writeFile(join(workspace, '.cache', 'blob'), 'x');
  await writeFile(join(workspace, 'photos', 'cover.jpg'), 'jpg');
  await writeFile(join(workspace, 'photos', '2025', 'beach.png'), 'png!');
  await writeFile(join(workspace, 'photos', '2025', 'summer', 'sea.jpg'), 'jpg');
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const list = (args: Record<string, unknown>) => executor.invoke(args, { workspace });
const paths = (result: Awaited<ReturnType<typeof list>>) =>
  result.ok
    ? (result.content as { entries: { path: string }[] }).entries.map((entry) => entry.path)
    : result.error;

describe('fs_list birth', () => {
  it('lists the workspace root, sorted, without hidden entries', async () => {
    const result = await list({});
    expect(paths(result)).toEqual(['notes.md', 'photos', 'readme.md']);
    expect(result).toMatchObject({
      ok: true,
      content: {
        path: '.',
        entries: [{ name: 'notes.md', type: 'file', size: 5 }, { type: 'directory' }, {}],
      },
    });
  });

  it('walks sub-folders with a glob filter and a depth cap', async () => {
    expect(paths(await list({ path: 'photos', recursive: true, pattern: '*.{jpg,png}' }))).toEqual([
      '2025/beach.png',
      '2025/summer/sea.jpg',
      'cover.jpg',
    ]);
    expect(paths(await list({ path: 'photos', recursive: true, max_depth: 2, pattern: '*.jpg' }))).toEqual([
      'cover.jpg',
    ]);
    expect(paths(await list({ recursive: true, pattern: 'photos/**/*.jpg' }))).toEqual([
      'photos/2025/summer/sea.jpg',
      'photos/cover.jpg',
    ]);
  });

  it('shows hidden entries on request and stops at max_entries', async () => {
    // .audit exists from the first call on (the host creates it, masked and empty, before any executor runs)
    expect(paths(await list({ include_hidden: true, type: 'directory' }))).toEqual([
      '.audit',
      '.cache',
      'photos',
    ]);
    expect(await list({ recursive: true, max_entries: 2 })).toMatchObject({
      ok: true,
      content: { count: 2, truncated: true },
    });
  });

  it('fails with NotFound and NotADirectory, and refuses paths outside the workspace', async () => {
    expect(await list({ path: 'nowhere' })).toMatchObject({ ok: false, error: { class: 'NotFound' } });
    expect(await list({ path: 'readme.md' })).toMatchObject({ ok: false, error: { class: 'NotADirectory' } });
    expect(await list({ path: '..' })).toMatchObject(refused);
  });
});
