import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));
const AT = '2026-05-10T09:00:00Z';

let workspace: string;
let outside: string;

const note = async (relative: string, text: string, modified: string) => {
  const path = join(workspace, relative);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text);
  const when = new Date(modified);
  await utimes(path, when, when);
};

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-notes-search-'));
  outside = await mkdtemp(join(tmpdir(), 'metnos-notes-search-outside-'));
  await note(
    'notes/home.md',
    '# Home\n\n## 2026-05-08 10:00\n\nCalled the plumber about the boiler repair.\n\n#home #todo\n\n## 2026-05-09 18:00\n\nThe boiler repair is booked for Tuesday.\n',
    '2026-05-09T18:00:00Z',
  );
  await note(
    'notes/work/atlas.md',
    '---\ntitle: Project Atlas\ntags:\n  - work/atlas\n  - planning\n---\n\nKickoff on Monday. Plants for the office.\n',
    '2026-05-01T08:00:00Z',
  );
  await note(
    'notes/2026-04-02.md',
    '# 2026-04-02\n\nBought plants at the market in Città di Castello. #garden\n',
    '2026-04-02T12:00:00Z',
  );
  await note('notes/old.md', '# Old\n\nThe plumber retired years ago.\n', '2024-01-01T00:00:00Z');
  await note('notes/.trash/gone.md', '# Gone\n\nplumber boiler repair\n', '2026-05-09T00:00:00Z');
  await writeFile(join(workspace, 'notes', 'binary.md'), Buffer.from([0x70, 0x6c, 0x75, 0x6d, 0, 1, 2]));
  await writeFile(join(outside, 'secret.md'), '# Secret\n\nplumber boiler repair password\n');
  await symlink(outside, join(workspace, 'notes', 'linked'));
  await note('Journal/today.md', '# Today\n\nplumber again\n', '2026-05-10T08:00:00Z');
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

type Hit = { file: string; title: string; tags: string[]; matches: Array<{ line: number; snippet: string }> };
const search = async (args: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  executor.invoke(args, { workspace, config, asOf: AT });
const files = (result: unknown) =>
  ((result as { content: { results: Hit[] } }).content.results ?? []).map((hit) => hit.file);

describe('notes_search birth', () => {
  it('finds notes by words, ranks the closer and newer first, with line, snippet and last change', async () => {
    const result = await search({ query: 'plumber' });
    expect(result).toMatchObject({ ok: true, content: { count: 2, notes_searched: 4, truncated: false } });
    expect(files(result)).toEqual(['notes/home.md', 'notes/old.md']);
    expect((result as { content: { results: Hit[] } }).content.results[0]).toMatchObject({
      title: 'Home',
      modified: '2026-05-09T18:00:00.000Z',
      tags: ['home', 'todo'],
      matches: [{ line: 5, snippet: 'Called the plumber about the boiler repair.' }],
    });
  });

  it('matches a quoted phrase, a word prefix, accents loosely, and every term unless match is any', async () => {
    const phrase = await search({ query: '"boiler repair"' });
    expect(files(phrase)).toEqual(['notes/home.md']);
    expect(
      (phrase as { content: { results: Hit[] } }).content.results[0]!.matches.map((m) => m.line),
    ).toEqual([5, 11]);
    expect(files(await search({ query: '"repair boiler"' }))).toEqual([]);
    expect(files(await search({ query: 'plant' }))).toEqual(['notes/work/atlas.md', 'notes/2026-04-02.md']);
    expect(files(await search({ query: 'citta castello' }))).toEqual(['notes/2026-04-02.md']);
    expect(files(await search({ query: 'plumber plants' }))).toEqual([]);
    expect(files(await search({ query: 'plumber plants', match: 'any' }))).toHaveLength(4);
  });

  it('finds tags inline and in the front matter, sub-tags included, and searches the configured folder', async () => {
    expect(files(await search({ query: '#home' }))).toEqual(['notes/home.md']);
    const work = await search({ query: 'kickoff', tags: ['#work'] });
    expect(work).toMatchObject({
      ok: true,
      content: {
        results: [{ file: 'notes/work/atlas.md', title: 'Project Atlas', tags: ['work/atlas', 'planning'] }],
      },
    });
    expect(files(await search({ query: '#garden plants' }))).toEqual(['notes/2026-04-02.md']);
    expect(files(await search({ query: 'plumber' }, { notes_folder: 'Journal' }))).toEqual([
      'Journal/today.md',
    ]);
  });

  it('never reads hidden folders, binary files or notes behind a symbolic link out of the folder', async () => {
    const result = await search({ query: 'password' });
    expect(result).toMatchObject({ ok: true, content: { count: 0, results: [] } });
    expect(JSON.stringify(await search({ query: 'plumber', match: 'any', limit: 100 }))).not.toMatch(
      /secret|gone|binary/,
    );
  });

  it('caps the results at limit and says so', async () => {
    expect(await search({ query: 'plumber', limit: 1 })).toMatchObject({
      ok: true,
      content: { count: 2, truncated: true, results: [{ file: 'notes/home.md' }] },
    });
  });

  it('fails with typed errors: empty queries, missing folders, folders outside, hostile arguments', async () => {
    expect(await search({ query: '" " , ;' })).toMatchObject({ ok: false, error: { class: 'BadQuery' } });
    const many = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    expect(await search({ query: many })).toMatchObject({ ok: false, error: { class: 'BadQuery' } });
    expect(await search({ query: 'x', folder: 'nowhere' })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    for (const folder of ['../', '/etc', 'notes/linked']) {
      expect(await search({ query: 'x', folder }), folder).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    const hostile = JSON.parse('{"query": "x", "__proto__": {"limit": 1}}') as Record<string, unknown>;
    expect(await search(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect(await search({ query: 'x', limit: 1e9 })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await search({ query: '(((((((((((a+)+)+)+)+)+)+)+)+)+)+$' })).toMatchObject({ ok: true });
  });
});
