import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

/** Outside paths are refused by the sandbox's policy check (PolicyViolation) or, failing that, by the executor. */
const refused = {
  ok: false,
  error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
};
let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-fs-move-'));
  await mkdir(join(workspace, 'inbox'));
  await mkdir(join(workspace, 'archive'));
  await writeFile(join(workspace, 'inbox', 'invoice.pdf'), 'invoice');
  await writeFile(join(workspace, 'inbox', 'note.txt'), 'new note');
  await writeFile(join(workspace, 'archive', 'note.txt'), 'old note');
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const move = (args: Record<string, unknown>) => executor.invoke(args, { workspace });
const exists = (path: string) =>
  access(join(workspace, path)).then(
    () => true,
    () => false,
  );

describe('fs_move birth', () => {
  it('renames a file', async () => {
    const result = await move({ source: 'inbox/invoice.pdf', destination: 'inbox/2026-invoice.pdf' });
    expect(result).toMatchObject({
      ok: true,
      content: { from: 'inbox/invoice.pdf', to: 'inbox/2026-invoice.pdf', type: 'file' },
    });
    expect(await exists('inbox/invoice.pdf')).toBe(false);
    expect(await readFile(join(workspace, 'inbox', '2026-invoice.pdf'), 'utf8')).toBe('invoice');
  });

  it('moves into an existing folder, and into new folders on request', async () => {
    expect(await move({ source: 'inbox/invoice.pdf', destination: 'archive' })).toMatchObject({
      ok: true,
      content: { to: 'archive/invoice.pdf' },
    });
    expect(await move({ source: 'archive/invoice.pdf', destination: 'y/2026/invoice.pdf' })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(
      await move({ source: 'archive/invoice.pdf', destination: 'y/2026/invoice.pdf', create_dirs: true }),
    ).toMatchObject({
      ok: true,
    });
    expect(await exists('y/2026/invoice.pdf')).toBe(true);
  });

  it('never replaces a file unless overwrite is set', async () => {
    expect(await move({ source: 'inbox/note.txt', destination: 'archive/note.txt' })).toMatchObject({
      ok: false,
      error: { class: 'Exists' },
    });
    expect(await readFile(join(workspace, 'archive', 'note.txt'), 'utf8')).toBe('old note');
    expect(
      await move({ source: 'inbox/note.txt', destination: 'archive/note.txt', overwrite: true }),
    ).toMatchObject({
      ok: true,
      content: { overwritten: true },
    });
    expect(await readFile(join(workspace, 'archive', 'note.txt'), 'utf8')).toBe('new note');
  });

  it('fails with NotFound and InvalidTarget, and refuses paths outside the workspace', async () => {
    expect(await move({ source: 'ghost.txt', destination: 'b.txt' })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(await move({ source: 'inbox', destination: 'inbox/sub/inbox', create_dirs: true })).toMatchObject({
      ok: false,
      error: { class: 'InvalidTarget' },
    });
    expect(await move({ source: 'inbox/note.txt', destination: '/tmp/stolen.txt' })).toMatchObject(refused);
    expect(await exists('inbox/note.txt')).toBe(true);
    expect(await move({ source: 'inbox/note.txt', destination: '.' })).toMatchObject({
      ok: true,
      content: { to: 'note.txt' },
    });
    expect(await move({ source: '.', destination: 'elsewhere' })).toMatchObject({
      ok: false,
      error: { class: 'PermissionDenied' },
    });
  });
});
