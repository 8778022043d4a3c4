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
  workspace = await mkdtemp(join(tmpdir(), 'metnos-fs-search-'));
  await mkdir(join(workspace, 'notes'));
  await mkdir(join(workspace, 'node_modules', 'dep'), { recursive: true });
  await writeFile(
    join(workspace, 'notes', 'trip.md'),
    'Train to Milano at 8\nHotel in milano centro\nBack on Sunday\n',
  );
  await writeFile(join(workspace, 'notes', 'work.txt'), 'TODO: invoice-2041\nFIXME later\ndone\n');
  await writeFile(
    join(workspace, 'image.bin'),
    Buffer.from([0x4d, 0x69, 0x6c, 0x61, 0x6e, 0x6f, 0x00, 0x01]),
  );
  await writeFile(join(workspace, 'node_modules', 'dep', 'index.js'), '// Milano\n');
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const search = (args: Record<string, unknown>) => executor.invoke(args, { workspace });

describe('fs_search birth', () => {
  it('finds a word case-insensitively with file, line and column, skipping binaries and node_modules', async () => {
    const result = await search({ query: 'milano' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        count: 2,
        matches: [
          { file: 'notes/trip.md', line: 1, column: 10, text: 'Train to Milano at 8' },
          { file: 'notes/trip.md', line: 2, column: 10, text: 'Hotel in milano centro' },
        ],
        files_skipped: 1,
        truncated: false,
      },
    });
  });

  it('honours case sensitivity, regular expressions and the include glob', async () => {
    expect(await search({ query: 'milano', case_sensitive: true })).toMatchObject({
      ok: true,
      content: { count: 1 },
    });
    const regex = await search({ query: 'TODO|FIXME', regex: true, include: '*.txt', case_sensitive: true });
    expect(regex).toMatchObject({ ok: true, content: { count: 2, matches: [{ line: 1 }, { line: 2 }] } });
    const literal = await search({ query: 'invoice-2041', path: 'notes/work.txt' });
    expect(literal).toMatchObject({ ok: true, content: { count: 1, matches: [{ column: 7 }] } });
  });

  it('stops at max_results', async () => {
    const result = await search({ query: 'o', max_results: 2 });
    expect(result).toMatchObject({ ok: true, content: { count: 2, truncated: true } });
  });

  it('fails with BadPattern and NotFound, and refuses paths outside the workspace', async () => {
    expect(await search({ query: '(unclosed', regex: true })).toMatchObject({
      ok: false,
      error: { class: 'BadPattern' },
    });
    expect(await search({ query: 'x', path: 'nowhere' })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(await search({ query: 'root', path: '/etc' })).toMatchObject(refused);
  });
});
