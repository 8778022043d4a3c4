import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BWRAP_ISOLATION_FLAGS } from '../src/bwrap-flags.ts';
import { isWithin, resolveReal } from '../src/resolve-path.ts';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'metnos-resolve-mutation-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
mkdirSync(join(scratch, 'dir', 'sub'), { recursive: true });
writeFileSync(join(scratch, 'dir', 'file.txt'), 'x');
symlinkSync('sub', join(scratch, 'dir', 'relative-link'));
symlinkSync(join(scratch, 'dir', 'sub'), join(scratch, 'absolute-link'));
symlinkSync('../dir/sub', join(scratch, 'dir', 'climbing-link'));

describe('resolveReal', () => {
  it('reads a path without a leading slash from the root', () => {
    expect(resolveReal(`${scratch.slice(1)}/dir/file.txt`)).toEqual({
      real: `${scratch}/dir/file.txt`,
      exists: true,
    });
  });

  it('ignores empty and `.` components and applies `..` to what it has resolved', () => {
    expect(resolveReal(`${scratch}//dir/./sub/../file.txt`)).toEqual({
      real: `${scratch}/dir/file.txt`,
      exists: true,
    });
    expect(resolveReal('/')).toEqual({ real: '/', exists: true });
    expect(resolveReal('/..')).toEqual({ real: '/', exists: true });
  });

  it('follows a relative symlink from the folder that holds it', () => {
    expect(resolveReal(`${scratch}/dir/relative-link`)).toEqual({ real: `${scratch}/dir/sub`, exists: true });
    expect(resolveReal(`${scratch}/dir/climbing-link`)).toEqual({ real: `${scratch}/dir/sub`, exists: true });
  });

  it('follows an absolute symlink from the root, then applies the `..` after it', () => {
    expect(resolveReal(`${scratch}/absolute-link/../file.txt`)).toEqual({
      real: `${scratch}/dir/file.txt`,
      exists: true,
    });
  });

  it('keeps a missing tail as written, normalised, and says it does not exist', () => {
    expect(resolveReal(`${scratch}/dir/missing/a/../b`)).toEqual({
      real: `${scratch}/dir/missing/b`,
      exists: false,
    });
    expect(resolveReal(`${scratch}/absolute-link/new.txt`)).toEqual({
      real: `${scratch}/dir/sub/new.txt`,
      exists: false,
    });
  });

  it('gives up after 40 symlinks, keeping the rest of the path', () => {
    let previous = join(scratch, 'dir');
    for (let index = 0; index < 41; index++) {
      const link = join(scratch, `chain-${index}`);
      symlinkSync(previous, link);
      previous = link;
    }
    expect(resolveReal(`${scratch}/chain-39/file.txt`)).toEqual({
      real: `${scratch}/dir/file.txt`,
      exists: true,
    });
    expect(resolveReal(`${scratch}/chain-40/file.txt`)).toEqual({
      real: `${scratch}/chain-0/file.txt`,
      exists: false,
    });
  });
});

describe('isWithin', () => {
  it('is true for the root itself and anything below it, never for a sibling with the same prefix', () => {
    expect(isWithin('/home/ada', '/home/ada')).toBe(true);
    expect(isWithin('/home/ada/notes', '/home/ada')).toBe(true);
    expect(isWithin('/home/adam', '/home/ada')).toBe(false);
    expect(isWithin('/home', '/home/ada')).toBe(false);
    expect(isWithin('/home/ada/x', '/home/ada/')).toBe(true);
    expect(isWithin('/home/adax', '/home/ada/')).toBe(false);
  });

  it('treats / as holding every path', () => {
    expect(isWithin('/etc/passwd', '/')).toBe(true);
    expect(isWithin('relative', '/')).toBe(true);
  });
});

describe('the bubblewrap isolation flags', () => {
  it('unshare every namespace, map to nobody, drop every capability and start from an empty environment', () => {
    expect(BWRAP_ISOLATION_FLAGS).toEqual([
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-net',
      '--unshare-cgroup-try',
      '--uid',
      '65534',
      '--gid',
      '65534',
      '--hostname',
      'metnos',
      '--disable-userns',
      '--cap-drop',
      'ALL',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
      '--dev',
      '/dev',
      '--remount-ro',
      '/dev',
    ]);
  });
});
