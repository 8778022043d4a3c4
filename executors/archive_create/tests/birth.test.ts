import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));
const PYTHON = '/usr/bin/python3';

/** Reads an archive with Python's zipfile or tarfile and prints name → content (or "<dir>") as JSON. */
const READ_ARCHIVE = `
import json, sys, tarfile, zipfile
path = sys.argv[1]
found = {}
if path.endswith('.zip'):
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        for info in archive.infolist():
            found[info.filename] = '<dir>' if info.is_dir() else archive.read(info).decode('utf-8', 'replace')
            found['mode:' + info.filename] = oct((info.external_attr >> 16) & 0o777)
else:
    with tarfile.open(path) as archive:
        for info in archive.getmembers():
            found[info.name] = '<dir>' if info.isdir() else archive.extractfile(info).read().decode('utf-8', 'replace')
            found['mode:' + info.name] = oct(info.mode)
            found['mtime:' + info.name] = info.mtime
print(json.dumps(found))
`;

const LONG = `photos/${Array.from({ length: 14 }, (_, index) => `album-${String(index).padStart(2, '0')}`).join('/')}/a-rather-long-picture-name.txt`;
const HUGE = `photos/${'x'.repeat(120)}/${'y'.repeat(120)}/${'z'.repeat(90)}.txt`;

let workspace: string;
let outside: string;

beforeAll(async () => {
  if (!existsSync(PYTHON))
    throw new Error(`${PYTHON} (Debian package python3) is needed to read the archives back`);
  workspace = await mkdtemp(join(tmpdir(), 'metnos-archive-create-'));
  outside = await mkdtemp(join(tmpdir(), 'metnos-archive-create-outside-'));
  const put = async (relative: string, content: string | Buffer, mode = 0o644) => {
    await mkdir(join(workspace, relative, '..'), { recursive: true });
    await writeFile(join(workspace, relative), content, { mode });
    const when = new Date('2026-05-01T12:30:00Z');
    await utimes(join(workspace, relative), when, when);
  };
  await put('photos/sea.txt', 'waves\n');
  await put('photos/run.sh', '#!/bin/sh\n', 0o755);
  await put('photos/sub/città.txt', 'accents\n');
  await put('photos/.hidden', 'dot\n');
  await put(LONG, 'long\n');
  await put(HUGE, 'huge\n');
  await put('notes.md', '# Notes\n');
  await writeFile(join(outside, 'secret.txt'), 'outside\n');
  await symlink(outside, join(workspace, 'photos', 'away'));
  await symlink(join(outside, 'secret.txt'), join(workspace, 'photos', 'secret-link.txt'));
  await put('shared/original.txt', 'twice\n');
  await link(join(workspace, 'shared/original.txt'), join(workspace, 'shared/second-name.txt'));
  await mkdir(join(workspace, 'many'));
  for (let index = 0; index <= 10_000; index++) await writeFile(join(workspace, 'many', String(index)), '');
}, 60_000);

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const create = (args: Record<string, unknown>) => executor.invoke(args, { workspace });
const readBack = (relative: string) =>
  JSON.parse(
    execFileSync(PYTHON, ['-c', READ_ARCHIVE, join(workspace, relative)], { encoding: 'utf8' }),
  ) as Record<string, unknown>;

describe('archive_create birth', () => {
  for (const [file, format] of [
    ['out/photos.zip', 'zip'],
    ['out/photos.tar', 'tar'],
    ['out/photos.tgz', 'tar.gz'],
  ] as const) {
    it(`packs folders and files into ${format} that Python reads back: long and UTF-8 names, modes`, async () => {
      await mkdir(join(workspace, 'out'), { recursive: true });
      const result = await create({ path: file, sources: ['photos', 'notes.md'] });
      expect(result).toMatchObject({
        ok: true,
        content: {
          path: file,
          format,
          files: 7,
          bytes_in: 6 + 10 + 8 + 4 + 5 + 5 + 8,
          skipped: [
            { name: 'photos/away', reason: expect.stringContaining('symbolic link') },
            { name: 'photos/secret-link.txt', reason: expect.stringContaining('symbolic link') },
          ],
        },
      });
      const found = readBack(file);
      const dir = (name: string) => (format === 'zip' ? `${name}/` : name);
      expect(found).toMatchObject({
        [dir('photos')]: '<dir>',
        'photos/sea.txt': 'waves\n',
        'photos/.hidden': 'dot\n',
        'photos/sub/città.txt': 'accents\n',
        [LONG]: 'long\n',
        [HUGE]: 'huge\n',
        'notes.md': '# Notes\n',
        'mode:photos/run.sh': '0o755',
        'mode:photos/sea.txt': '0o644',
      });
      if (format !== 'zip') expect(found['mtime:photos/sea.txt']).toBe(1777638600);
      expect(JSON.stringify(found)).not.toContain('outside');
    });
  }

  it('is read by the Debian tar and unzip too', async () => {
    const listed = execFileSync('tar', ['-tzf', join(workspace, 'out/photos.tgz')], { encoding: 'utf8' });
    expect(listed.split('\n')).toContain(LONG);
    expect(listed.split('\n')).toContain(HUGE);
    if (existsSync('/usr/bin/unzip')) {
      expect(
        execFileSync('unzip', ['-t', join(workspace, 'out/photos.zip')], { encoding: 'utf8' }),
      ).toContain('No errors detected');
    }
  });

  it('never replaces an archive unless asked, and never packs itself', async () => {
    const again = await create({ path: 'out/photos.zip', sources: ['notes.md'] });
    expect(again).toMatchObject({ ok: false, error: { class: 'Exists' } });
    expect(readBack('out/photos.zip')).toHaveProperty(['photos/sea.txt']);
    expect(await create({ path: 'out/photos.zip', sources: ['notes.md'], overwrite: true })).toMatchObject({
      ok: true,
      content: { files: 1 },
    });
    expect(Object.keys(readBack('out/photos.zip'))).toEqual(['notes.md', 'mode:notes.md']);
    await create({ path: 'photos/inside.zip', sources: ['photos'], include_hidden: false });
    const inside = await create({
      path: 'photos/inside.zip',
      sources: ['photos'],
      overwrite: true,
      include_hidden: false,
    });
    expect(inside).toMatchObject({ ok: true });
    const found = Object.keys(readBack('photos/inside.zip'));
    expect(found).not.toContain('photos/inside.zip');
    expect(found).not.toContain('photos/.hidden');
    await writeFile(join(workspace, 'out/self.zip'), 'old');
    expect(await create({ path: 'out/self.zip', sources: ['out/self.zip'], overwrite: true })).toMatchObject({
      ok: false,
      error: { class: 'InvalidTarget' },
    });
  });

  it('skips files with a second name and keeps links out of the archive', async () => {
    const result = await create({ path: 'out/shared.tar', sources: ['shared'] });
    expect(result).toMatchObject({
      ok: true,
      content: {
        files: 0,
        skipped: expect.arrayContaining([
          { name: 'shared/original.txt', reason: expect.stringContaining('more than one name') },
        ]),
      },
    });
  });

  it('refuses too many entries, unknown formats, missing or outside sources and hostile arguments', async () => {
    expect(await create({ path: 'out/many.zip', sources: ['many'] })).toMatchObject({
      ok: false,
      error: { class: 'TooManyEntries' },
    });
    expect(await create({ path: 'out/photos.rar', sources: ['notes.md'] })).toMatchObject({
      ok: false,
      error: { class: 'Unsupported' },
    });
    expect(await create({ path: 'out/x.zip', sources: ['nowhere'] })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(await create({ path: 'missing/x.zip', sources: ['notes.md'] })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    for (const args of [
      { path: 'out/x.zip', sources: ['/etc'] },
      { path: 'out/x.zip', sources: ['../'] },
      { path: 'out/x.zip', sources: ['photos/away'] },
      { path: '../x.zip', sources: ['notes.md'] },
      { path: '.audit/x.zip', sources: ['notes.md'] },
    ]) {
      expect(await create(args), JSON.stringify(args)).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    const hostile = JSON.parse(
      '{"path": "out/h.zip", "sources": ["notes.md"], "__proto__": {"overwrite": true}}',
    ) as Record<string, unknown>;
    expect(await create(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect(
      await create({ path: 'out/h.zip', sources: Array.from({ length: 101 }, () => 'notes.md') }),
    ).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside\n');
  });
});
