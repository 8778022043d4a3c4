import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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
const numbered = `${Array.from({ length: 100 }, (_, index) => `line ${index + 1}`).join('\n')}\n`;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-fs-read-'));
  await mkdir(join(workspace, 'notes'));
  await writeFile(join(workspace, 'notes', 'journal.md'), '# Journal\n\nCaffè alle 8.\n');
  await writeFile(join(workspace, 'numbered.txt'), numbered);
  await writeFile(join(workspace, 'big.txt'), 'x'.repeat(5000));
  await symlink('/etc/hostname', join(workspace, 'escape'));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const read = (args: Record<string, unknown>) => executor.invoke(args, { workspace });

describe('fs_read birth', () => {
  it('reads a whole file by workspace-relative path', async () => {
    const result = await read({ path: 'notes/journal.md' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        path: 'notes/journal.md',
        content: '# Journal\n\nCaffè alle 8.\n',
        total_lines: 3,
        truncated: false,
      },
    });
  });

  it('accepts an absolute path inside the workspace', async () => {
    const result = await read({ path: join(workspace, 'notes', 'journal.md'), mode: 'head', lines: 1 });
    expect(result).toMatchObject({
      ok: true,
      content: { content: '# Journal\n', start_line: 1, end_line: 1 },
    });
  });

  it('returns the last lines with their line numbers', async () => {
    const result = await read({ path: 'numbered.txt', mode: 'tail', lines: 3 });
    expect(result).toMatchObject({
      ok: true,
      content: { content: 'line 98\nline 99\nline 100\n', start_line: 98, end_line: 100, total_lines: 100 },
    });
  });

  it('returns a line range and a byte range', async () => {
    const lines = await read({ path: 'numbered.txt', mode: 'range', start_line: 10, end_line: 12 });
    expect(lines).toMatchObject({
      ok: true,
      content: { content: 'line 10\nline 11\nline 12\n', end_line: 12 },
    });
    const bytes = await read({ path: 'numbered.txt', mode: 'range', start_byte: 0, end_byte: 6 });
    expect(bytes).toMatchObject({ ok: true, content: { content: 'line 1', start_byte: 0, end_byte: 6 } });
  });

  it('refuses a whole read above max_bytes with TooLarge, and cuts head at the limit', async () => {
    expect(await read({ path: 'big.txt', max_bytes: 1000 })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge' },
    });
    const head = await read({ path: 'numbered.txt', mode: 'head', lines: 50, max_bytes: 21 });
    expect(head).toMatchObject({
      ok: true,
      content: { content: 'line 1\nline 2\nline 3\n', truncated: true },
    });
  });

  it('fails with NotFound and IsADirectory, and refuses paths outside the workspace', async () => {
    expect(await read({ path: 'missing.txt' })).toMatchObject({ ok: false, error: { class: 'NotFound' } });
    expect(await read({ path: 'notes' })).toMatchObject({ ok: false, error: { class: 'IsADirectory' } });
    for (const path of ['../../etc/passwd', '/etc/passwd', 'escape']) {
      expect(await read({ path }), path).toMatchObject(refused);
    }
  });

  it('rejects unknown arguments before running', async () => {
    expect(await read({ path: 'numbered.txt', shell: 'rm -rf /' })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });
});
