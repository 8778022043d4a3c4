import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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
let outside: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-fs-write-'));
  outside = await mkdtemp(join(tmpdir(), 'metnos-fs-write-outside-'));
  await writeFile(join(workspace, 'todo.md'), '- milk\n');
  await symlink(outside, join(workspace, 'elsewhere'));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const write = (args: Record<string, unknown>) => executor.invoke(args, { workspace });

describe('fs_write birth', () => {
  it('creates a new file and reports the bytes written', async () => {
    const result = await write({ path: 'hello.txt', content: 'ciao, mondo\n', mode: 'create' });
    expect(result).toMatchObject({
      ok: true,
      content: { path: 'hello.txt', bytes_written: 12, created: true },
    });
    expect(await readFile(join(workspace, 'hello.txt'), 'utf8')).toBe('ciao, mondo\n');
  });

  it('appends to an existing file', async () => {
    const result = await write({ path: 'todo.md', content: '- eggs\n', mode: 'append' });
    expect(result).toMatchObject({ ok: true, content: { bytes_written: 7, size: 14, created: false } });
    expect(await readFile(join(workspace, 'todo.md'), 'utf8')).toBe('- milk\n- eggs\n');
  });

  it('overwrites a file and creates parent folders on request', async () => {
    const missing = await write({ path: 'deep/er/file.txt', content: 'x' });
    expect(missing).toMatchObject({ ok: false, error: { class: 'NotFound' } });
    const result = await write({ path: 'deep/er/file.txt', content: 'first', create_dirs: true });
    expect(result).toMatchObject({ ok: true, content: { dirs_created: true, created: true } });
    await write({ path: join(workspace, 'deep/er/file.txt'), content: 'second' });
    expect(await readFile(join(workspace, 'deep/er/file.txt'), 'utf8')).toBe('second');
  });

  it('refuses to replace a file in create mode with Exists', async () => {
    const result = await write({ path: 'todo.md', content: 'gone', mode: 'create' });
    expect(result).toMatchObject({ ok: false, error: { class: 'Exists' } });
    expect(await readFile(join(workspace, 'todo.md'), 'utf8')).toContain('- milk');
  });

  it('refuses paths outside the workspace, through symlinks, and into .audit', async () => {
    for (const path of ['../escape.txt', '/tmp/escape.txt', 'elsewhere/escape.txt', '.audit/x.jsonl']) {
      const result = await write({ path, content: 'nope', create_dirs: true });
      expect(result, path).toMatchObject(refused);
    }
  });

  it('refuses to write over a directory', async () => {
    expect(await write({ path: 'deep', content: 'x' })).toMatchObject({
      ok: false,
      error: { class: 'IsADirectory' },
    });
  });
});
