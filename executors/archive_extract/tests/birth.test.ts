import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));
const PYTHON = '/usr/bin/python3';

/**
 * Builds the archives with Python's zipfile and tarfile (Debian's python3), so
 * the executor reads archives it did not write; the hostile ones are patched
 * byte by byte the way attackers make them.
 */
const MAKE_ARCHIVES = String.raw`
import io, os, struct, sys, tarfile, zipfile, zlib
out = sys.argv[1]
def path(name): return os.path.join(out, name)

def zip_with(name, members):
    with zipfile.ZipFile(path(name), 'w', zipfile.ZIP_DEFLATED) as archive:
        for member in members:
            archive.writestr(*member)

def info(name, mode=None, kind=0o100000):
    entry = zipfile.ZipInfo(name, date_time=(2026, 5, 1, 12, 30, 0))
    entry.create_system = 3
    entry.external_attr = ((kind | (mode or 0o644)) << 16)
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry

random = bytes((i * 7919 + 13) % 251 for i in range(100_000))
zip_with('good.zip', [
    (info('docs/readme.txt'), 'hello\n'),
    (info('docs/sub/', 0o755, 0o040000), ''),
    (info('docs/sub/data.bin'), random),
    (info('docs/run.sh', 0o755), '#!/bin/sh\necho hi\n'),
    (info('docs/link', 0o777, 0o120000), 'readme.txt'),
    (info('café/ünï.txt'), 'accents\n'),
])

def tar_with(name, mode, adds, fmt=tarfile.PAX_FORMAT):
    with tarfile.open(path(name), mode, format=fmt) as archive:
        for add in adds: add(archive)

def file_member(name, data, **extra):
    def add(archive):
        member = tarfile.TarInfo(name)
        member.size = len(data)
        member.mtime = 1777638600
        for key, value in extra.items(): setattr(member, key, value)
        archive.addfile(member, io.BytesIO(data))
    return add

def link_member(name, target, kind=tarfile.SYMTYPE):
    def add(archive):
        member = tarfile.TarInfo(name)
        member.type = kind
        member.linkname = target
        archive.addfile(member)
    return add

def dir_member(name):
    def add(archive):
        member = tarfile.TarInfo(name)
        member.type = tarfile.DIRTYPE
        member.mode = 0o755
        archive.addfile(member)
    return add

def fifo_member(name):
    def add(archive):
        member = tarfile.TarInfo(name)
        member.type = tarfile.FIFOTYPE
        archive.addfile(member)
    return add

long_name = 'deep/' + '/'.join(['folder%02d' % i for i in range(12)]) + '/file-with-a-long-name.txt'
tar_with('good.tar.gz', 'w:gz', [
    dir_member('project'),
    file_member('project/notes.md', b'# Notes\n'),
    link_member('project/same.md', 'project/notes.md', tarfile.LNKTYPE),
    link_member('project/latest', 'notes.md'),
    file_member(long_name, b'long\n'),
    fifo_member('project/pipe'),
])
tar_with('gnu.tar', 'w', [file_member('g/' + 'n' * 150 + '.txt', b'gnu long name\n')], tarfile.GNU_FORMAT)

zip_with('climb.zip', [('../evil.txt', 'x')])
zip_with('absolute.zip', [('/tmp/evil.txt', 'x')])
zip_with('backslash.zip', [('..\\evil.txt', 'x')])
tar_with('climb.tar', 'w', [file_member('a/../../evil.txt', b'x')])
tar_with('symlink-out.tar', 'w', [link_member('etc', '/etc')])
tar_with('symlink-climb.tar', 'w', [dir_member('a'), link_member('a/up', '../../outside')])
tar_with('symlink-chain.tar', 'w', [link_member('here', '.'), link_member('away', 'here/../x')])
tar_with('through-link.tar', 'w', [link_member('inside', 'real'), dir_member('real'), file_member('inside/evil.txt', b'x')])
tar_with('hardlink-out.tar', 'w', [link_member('passwd', '/etc/passwd', tarfile.LNKTYPE)])
tar_with('hardlink-climb.tar', 'w', [link_member('secret', '../secret.txt', tarfile.LNKTYPE)])

# One entry expands a thousand times; the archive as a whole only about twenty.
zip_with('bomb.zip', [('noise.bin', os.urandom(1024 * 1024)), ('zeros.bin', bytes(20 * 1024 * 1024))])
# A hundred entries of a mebibyte each, none large enough to be judged alone.
zip_with('small-bombs.zip', [('z/%03d' % index, bytes(1024 * 1024)) for index in range(100)])
tar_with('ratio.tar.gz', 'w:gz', [file_member('zeros.bin', bytes(20 * 1024 * 1024))])
with open(path('bomb.tar.gz'), 'wb') as raw:
    import gzip
    with gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=9) as gz:
        header = tarfile.TarInfo('zeros.bin'); header.size = 200 * 1024 * 1024
        gz.write(header.tobuf(tarfile.PAX_FORMAT))
        chunk = bytes(1024 * 1024)
        for _ in range(200): gz.write(chunk)
        gz.write(bytes(1024))

# Declares 1000 bytes, inflates to a megabyte.
zip_with('liar.zip', [('liar.bin', bytes(1024 * 1024))])
data = bytearray(open(path('liar.zip'), 'rb').read())
local = data.find(b'PK\x03\x04'); central = data.find(b'PK\x01\x02')
struct.pack_into('<I', data, local + 22, 1000); struct.pack_into('<I', data, central + 24, 1000)
open(path('liar.zip'), 'wb').write(bytes(data))

# Two directory entries sharing one local file: the overlap trick.
zip_with('overlap.zip', [('one.txt', 'a' * 5000)])
data = bytearray(open(path('overlap.zip'), 'rb').read())
central = data.find(b'PK\x01\x02'); end = data.find(b'PK\x05\x06')
entry = bytes(data[central:end]).replace(b'one.txt', b'two.txt')
rebuilt = data[:end] + entry + data[end:]
end = rebuilt.find(b'PK\x05\x06')
struct.pack_into('<HHI', rebuilt, end + 8, 2, 2, len(entry) * 2)
open(path('overlap.zip'), 'wb').write(bytes(rebuilt))

with zipfile.ZipFile(path('many.zip'), 'w') as archive:
    for index in range(10_001): archive.writestr('f/%05d' % index, '')

# The second file's CRC is wrong: found only after the first file is written.
zip_with('late-damage.zip', [('first.txt', 'first\n'), ('second.txt', 'second\n')])
data = bytearray(open(path('late-damage.zip'), 'rb').read())
central = data.find(b'PK\x01\x02', data.find(b'PK\x01\x02') + 4)
struct.pack_into('<I', data, central + 16, 12345)
open(path('late-damage.zip'), 'wb').write(bytes(data))

zip_with('encrypted.zip', [('secret.txt', 'x')])
data = bytearray(open(path('encrypted.zip'), 'rb').read())
central = data.find(b'PK\x01\x02')
struct.pack_into('<H', data, central + 8, data[central + 8] | 1)
open(path('encrypted.zip'), 'wb').write(bytes(data))

open(path('not-an-archive.zip'), 'wb').write(b'just some text, not a zip at all\n' * 4)
good = open(path('good.zip'), 'rb').read()
open(path('truncated.zip'), 'wb').write(good[: len(good) // 2])
`;

let workspace: string;
let outside: string;

beforeAll(async () => {
  if (!existsSync(PYTHON))
    throw new Error(`${PYTHON} (Debian package python3) is needed to build the test archives`);
  workspace = await mkdtemp(join(tmpdir(), 'metnos-archive-extract-'));
  outside = await mkdtemp(join(tmpdir(), 'metnos-archive-extract-outside-'));
  await mkdir(join(workspace, 'in'));
  execFileSync(PYTHON, ['-c', MAKE_ARCHIVES, join(workspace, 'in')]);
  await writeFile(join(outside, 'keep.txt'), 'outside\n');
}, 60_000);

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const extract = (args: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  executor.invoke(args, { workspace, config });
const text = (relative: string) => readFile(join(workspace, relative), 'utf8');
const gone = async (relative: string) => !(await lstat(join(workspace, relative)).catch(() => undefined));

describe('archive_extract birth', () => {
  it('extracts a zip beside itself: folders, files, modes, a link inside as a copy, UTF-8 names', async () => {
    const result = await extract({ path: 'in/good.zip' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        archive: 'in/good.zip',
        destination: 'in/good',
        format: 'zip',
        extracted: true,
        files: 4,
        directories: 1,
        links: 1,
        bytes: 6 + 100_000 + 18 + 8 + 6,
      },
    });
    expect(await text('in/good/docs/readme.txt')).toBe('hello\n');
    expect((await readFile(join(workspace, 'in/good/docs/sub/data.bin'))).length).toBe(100_000);
    expect(await text('in/good/café/ünï.txt')).toBe('accents\n');
    // The sandbox lets no executor create links: a link to a file of the archive is written as a copy.
    expect((await lstat(join(workspace, 'in/good/docs/link'))).isFile()).toBe(true);
    expect(await text('in/good/docs/link')).toBe('hello\n');
    expect((await stat(join(workspace, 'in/good/docs/run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(workspace, 'in/good/docs/readme.txt'))).mtime.toISOString()).toBe(
      '2026-05-01T12:30:00.000Z',
    );
  });

  it('extracts tar.gz and GNU tar: pax long names, hard links as copies, pipes skipped', async () => {
    const result = await extract({ path: 'in/good.tar.gz', destination: 'out/tgz' });
    expect(result).toMatchObject({
      ok: true,
      content: { format: 'tar.gz', files: 3, directories: 1, links: 1, skipped: [{ name: 'project/pipe' }] },
    });
    expect(await text('out/tgz/project/same.md')).toBe('# Notes\n');
    expect((await stat(join(workspace, 'out/tgz/project/same.md'))).nlink).toBe(1);
    expect(await text('out/tgz/project/latest')).toBe('# Notes\n');
    const long = `out/tgz/deep/${Array.from({ length: 12 }, (_, i) => `folder${String(i).padStart(2, '0')}`).join('/')}/file-with-a-long-name.txt`;
    expect(await text(long)).toBe('long\n');
    expect(await gone('out/tgz/project/pipe')).toBe(true);
    expect(await extract({ path: 'in/gnu.tar', destination: 'out/gnu' })).toMatchObject({
      ok: true,
      content: { format: 'tar' },
    });
    expect(await text(`out/gnu/g/${'n'.repeat(150)}.txt`)).toBe('gnu long name\n');
  });

  it('lists without writing anything', async () => {
    const result = await extract({ path: 'in/good.tar.gz', destination: 'out/listed', list_only: true });
    expect(result).toMatchObject({ ok: true, content: { extracted: false } });
    expect(
      (result as { content: { entries: Array<{ name: string; type: string }> } }).content.entries,
    ).toContainEqual({
      name: 'project/same.md',
      type: 'hardlink',
      size: 8,
      link: 'project/notes.md',
    });
    expect(await gone('out/listed')).toBe(true);
  });

  it('never overwrites unless asked, and checks every entry before writing the first', async () => {
    await mkdir(join(workspace, 'out/again/docs'), { recursive: true });
    await writeFile(join(workspace, 'out/again/docs/readme.txt'), 'mine\n');
    const refused = await extract({ path: 'in/good.zip', destination: 'out/again' });
    expect(refused).toMatchObject({
      ok: false,
      error: { class: 'Exists', message: expect.stringContaining('readme.txt') },
    });
    expect(await readdir(join(workspace, 'out/again/docs'))).toEqual(['readme.txt']);
    expect(await text('out/again/docs/readme.txt')).toBe('mine\n');
    expect(await extract({ path: 'in/good.zip', destination: 'out/again', overwrite: true })).toMatchObject({
      ok: true,
    });
    expect(await text('out/again/docs/readme.txt')).toBe('hello\n');
  });

  it('refuses names that climb or are absolute, and links that leave the destination', async () => {
    const cases = [
      'climb.zip',
      'absolute.zip',
      'backslash.zip',
      'climb.tar',
      'symlink-out.tar',
      'symlink-climb.tar',
      'symlink-chain.tar',
      'through-link.tar',
      'hardlink-out.tar',
      'hardlink-climb.tar',
    ];
    for (const name of cases) {
      const destination = `out/unsafe-${name.replace(/\W/g, '-')}`;
      const result = await extract({ path: `in/${name}`, destination });
      expect(result, name).toMatchObject({ ok: false, error: { class: 'UnsafeEntry' } });
      expect(await gone(destination), name).toBe(true);
    }
    expect(await gone('evil.txt')).toBe(true);
    expect(await gone('out/evil.txt')).toBe(true);
    expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');
  });

  it('refuses to extract through a symbolic link already in the destination', async () => {
    await mkdir(join(workspace, 'out/linked'), { recursive: true });
    await symlink(outside, join(workspace, 'out/linked/docs'));
    const result = await extract({ path: 'in/good.zip', destination: 'out/linked' });
    expect(result).toMatchObject({ ok: false, error: { class: 'UnsafeEntry' } });
    expect(await readdir(outside)).toEqual(['keep.txt']);
  });

  it('refuses zip bombs: ratio, declared size, a lying header, overlapping entries, too many entries', async () => {
    expect(await extract({ path: 'in/bomb.zip', destination: 'out/bomb' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringMatching(/entry "zeros.bin" expands \d+ times/) },
    });
    expect(await extract({ path: 'in/small-bombs.zip', destination: 'out/small' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringMatching(/the archive expands \d+ times/) },
    });
    expect(await extract({ path: 'in/ratio.tar.gz', destination: 'out/ratio' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringMatching(/ratio.tar.gz expands \d+ times/) },
    });
    expect(await extract({ path: 'in/bomb.tar.gz', destination: 'out/bomb2' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge' },
    });
    expect(
      await extract({ path: 'in/good.zip', destination: 'out/capped' }, { max_bytes: 50_000 }),
    ).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringContaining('at most 50000') },
    });
    expect(await extract({ path: 'in/liar.zip', destination: 'out/liar' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringContaining('declares') },
    });
    expect(await extract({ path: 'in/overlap.zip', destination: 'out/overlap' })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge', message: expect.stringContaining('overlap') },
    });
    expect(await extract({ path: 'in/many.zip', destination: 'out/many' })).toMatchObject({
      ok: false,
      error: { class: 'TooManyEntries' },
    });
    expect(
      await extract({ path: 'in/good.tar.gz', destination: 'out/few' }, { max_entries: 3 }),
    ).toMatchObject({
      ok: false,
      error: { class: 'TooManyEntries' },
    });
    for (const destination of [
      'out/bomb',
      'out/bomb2',
      'out/capped',
      'out/liar',
      'out/overlap',
      'out/many',
      'out/few',
    ]) {
      expect(await gone(destination), destination).toBe(true);
    }
  });

  it('takes back what it wrote when a later entry turns out damaged', async () => {
    const result = await extract({ path: 'in/late-damage.zip', destination: 'out/late' });
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'Corrupt', message: expect.stringContaining('second.txt') },
    });
    expect(await gone('out/late')).toBe(true);
  });

  it('fails with typed errors on damaged, encrypted or unknown files and on hostile arguments', async () => {
    expect(await extract({ path: 'in/truncated.zip' })).toMatchObject({
      ok: false,
      error: { class: 'Corrupt' },
    });
    expect(await extract({ path: 'in/not-an-archive.zip' })).toMatchObject({
      ok: false,
      error: { class: 'Unsupported' },
    });
    expect(await extract({ path: 'in/encrypted.zip' })).toMatchObject({
      ok: false,
      error: { class: 'Unsupported' },
    });
    expect(await extract({ path: 'in/missing.zip' })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    for (const args of [
      { path: '/etc/passwd' },
      { path: 'in/good.zip', destination: '../escape' },
      { path: 'in/good.zip', destination: '.audit' },
    ]) {
      expect(await extract(args), JSON.stringify(args)).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    const hostile = JSON.parse('{"path": "in/good.zip", "__proto__": {"overwrite": true}}') as Record<
      string,
      unknown
    >;
    expect(await extract(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
  });
});
