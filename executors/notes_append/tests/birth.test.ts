import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));
const AT = '2026-05-01T12:32:00Z';

let workspace: string;
let outside: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-notes-append-'));
  outside = await mkdtemp(join(tmpdir(), 'metnos-notes-append-outside-'));
  await mkdir(join(workspace, 'notes'));
  await writeFile(join(workspace, 'notes', 'shopping.md'), '# Shopping\n\n- milk');
  await symlink(outside, join(workspace, 'notes', 'elsewhere'));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const append = (args: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  executor.invoke(args, { workspace, config, asOf: AT });

describe('notes_append birth', () => {
  it("creates today's daily note in the notes folder with a dated heading, in the instance's time zone", async () => {
    const result = await append(
      { text: 'Called the plumber.', tags: ['home', '#todo'] },
      { timezone: 'Europe/Rome' },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        path: 'notes/2026-05-01.md',
        note: '2026-05-01',
        created: true,
        heading: '2026-05-01 14:32',
        tags: ['home', 'todo'],
      },
    });
    expect(await readFile(join(workspace, 'notes', '2026-05-01.md'), 'utf8')).toBe(
      '# 2026-05-01\n\n## 2026-05-01 14:32\n\nCalled the plumber.\n\n#home #todo\n',
    );
    const second = await append({ text: 'Plumber came.' }, { timezone: 'Europe/Rome' });
    expect(second).toMatchObject({ ok: true, content: { created: false } });
    expect(await readFile(join(workspace, 'notes', '2026-05-01.md'), 'utf8')).toBe(
      '# 2026-05-01\n\n## 2026-05-01 14:32\n\nCalled the plumber.\n\n#home #todo\n\n## 2026-05-01 14:32\n\nPlumber came.\n',
    );
  });

  it('appends to a named note that does not end with a newline, without a heading when not dated', async () => {
    const result = await append({ note: 'shopping', text: '- eggs', dated: false });
    expect(result).toMatchObject({ ok: true, content: { path: 'notes/shopping.md', created: false } });
    expect(await readFile(join(workspace, 'notes', 'shopping.md'), 'utf8')).toBe(
      '# Shopping\n\n- milk\n\n- eggs\n',
    );
  });

  it('creates a note in a sub-folder and a configured notes folder, and refuses to create one twice', async () => {
    const created = await append(
      { note: 'work/Project Atlas', title: 'Atlas — kickoff', text: 'Goals for Q3.', mode: 'create' },
      { notes_folder: 'Journal' },
    );
    expect(created).toMatchObject({
      ok: true,
      content: { path: 'Journal/work/Project Atlas.md', created: true },
    });
    expect(await readFile(join(workspace, 'Journal', 'work', 'Project Atlas.md'), 'utf8')).toBe(
      '# Atlas — kickoff\n\n## 2026-05-01 12:32\n\nGoals for Q3.\n',
    );
    const again = await append(
      { note: 'work/Project Atlas', text: 'x', mode: 'create' },
      { notes_folder: 'Journal' },
    );
    expect(again).toMatchObject({ ok: false, error: { class: 'Exists' } });
  });

  it('refuses note names that climb, hide or are absolute, and folders outside the workspace', async () => {
    for (const note of ['../escape', '/etc/cron.d/x', 'a/../../b', '.hidden', 'work/.git/config', 'a\\b']) {
      const result = await append({ note, text: 'x' });
      expect(result, note).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(BadNoteName|PolicyViolation)$/) },
      });
    }
    for (const folder of ['..', '/tmp', 'notes/elsewhere', '.audit']) {
      const result = await append({ folder, text: 'x' });
      expect(result, folder).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    expect(await readFile(join(workspace, 'notes', 'shopping.md'), 'utf8')).not.toContain('x\n');
  });

  it('fails with typed errors on bad tags, time zones and hostile arguments', async () => {
    expect(await append({ text: 'x', tags: ['two words'] })).toMatchObject({
      ok: false,
      error: { class: 'BadTag' },
    });
    expect(await append({ text: 'x', timezone: 'Mars/Olympus' })).toMatchObject({
      ok: false,
      error: { class: 'UnknownTimezone' },
    });
    const hostile = JSON.parse('{"text": "x", "__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(await append(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    let deep: unknown = 'x';
    for (let level = 0; level < 200; level++) deep = [deep];
    expect(await append({ text: 'x', tags: deep })).toMatchObject({
      ok: false,
      error: { class: expect.stringMatching(/^(InvalidInput|PolicyViolation)$/) },
    });
    expect(await append({ text: 'y'.repeat(100_001) })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });
});
