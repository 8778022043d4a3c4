import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEVICES_ALLOWED,
  ETC_READABLE,
  forbiddenInside,
  forbiddenSet,
  forbiddenTreeOf,
  HOME_SECRETS,
  SYSTEM_FORBIDDEN,
} from '../src/forbidden.ts';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'metnos-forbidden-mutation-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const home = join(scratch, 'home');
const linkedHome = join(scratch, 'linked-home');
const workspace = join(scratch, 'ws');
mkdirSync(home);
mkdirSync(workspace);
symlinkSync(home, linkedHome);

describe('the lists in code', () => {
  it('name every secret folder under a home', () => {
    expect(HOME_SECRETS).toEqual([
      '.ssh',
      '.gnupg',
      '.aws',
      '.azure',
      '.kube',
      '.docker',
      '.netrc',
      '.git-credentials',
      '.npmrc',
      '.pypirc',
      '.password-store',
      '.pki',
      '.config/metnos',
      '.config/myclaw',
      '.config/gcloud',
      '.config/gh',
      '.local/share/keyrings',
    ]);
  });

  it('name the system trees, the readable /etc files and the usable devices', () => {
    expect(SYSTEM_FORBIDDEN).toEqual([
      '/root',
      '/boot',
      '/proc',
      '/sys',
      '/dev',
      '/etc',
      '/run',
      '/var/run',
      '/var/lib/sss',
    ]);
    expect(ETC_READABLE).toEqual([
      '/etc/ld.so.cache',
      '/etc/localtime',
      '/etc/timezone',
      '/etc/mime.types',
      '/etc/ssl/certs/ca-certificates.crt',
    ]);
    expect(DEVICES_ALLOWED).toEqual(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/full']);
  });
});

describe('forbiddenSet', () => {
  it('masks every home secret in its written and its real form, and forbids the system trees', () => {
    const set = forbiddenSet({ homes: [linkedHome] });
    for (const secret of HOME_SECRETS) {
      expect(set.masks).toContain(join(linkedHome, secret));
      expect(set.masks).toContain(join(home, secret));
      expect(set.trees).toContain(join(home, secret));
    }
    for (const tree of SYSTEM_FORBIDDEN) expect(set.trees).toContain(tree);
    expect(set.masks).not.toContain('/etc');
    expect(set.readable).toEqual([...ETC_READABLE, ...DEVICES_ALLOWED]);
    expect(set.audit).toEqual([]);
    expect(set.protect).toEqual([]);
    expect(set.calls).toBeUndefined();
    expect('calls' in set).toBe(false);
  });

  it("masks extra secrets and the workspace's .audit, which is also a forbidden tree", () => {
    const secret = join(scratch, 'config-metnos');
    const set = forbiddenSet({ homes: [], workspace, secrets: [secret] });
    expect(set.masks).toEqual([secret, join(workspace, '.audit')]);
    expect(set.audit).toEqual([join(workspace, '.audit'), join(workspace, '.audit')]);
    expect(set.trees).toEqual(expect.arrayContaining([secret, join(workspace, '.audit')]));
  });

  it('keeps the first reason given for a protected path, in both forms', () => {
    const set = forbiddenSet({
      homes: [],
      protect: [
        { path: join(linkedHome, 'metnos.toml'), why: 'the configuration' },
        { path: join(home, 'metnos.toml'), why: 'a second reason' },
      ],
      calls: { root: '/tmp/calls', own: '/tmp/calls/mine' },
    });
    expect(set.protect).toEqual([join(linkedHome, 'metnos.toml'), join(home, 'metnos.toml')]);
    expect(set.reasons.get(join(home, 'metnos.toml'))).toBe('the configuration');
    expect(set.calls).toEqual({ root: '/tmp/calls', own: '/tmp/calls/mine' });
  });
});

describe('forbiddenTreeOf', () => {
  const set = forbiddenSet({
    homes: [home],
    workspace,
    protect: [{ path: join(scratch, 'executors'), why: 'the executors folder' }],
    calls: { root: join(scratch, 'calls'), own: join(scratch, 'calls', 'mine') },
  });

  it('lets a read through the /etc and /dev exceptions, never a write', () => {
    expect(forbiddenTreeOf('/etc/localtime', set, false)).toBeUndefined();
    expect(forbiddenTreeOf('/dev/null', set, false)).toBeUndefined();
    expect(forbiddenTreeOf('/etc/localtime', set, true)).toBe('/etc');
    expect(forbiddenTreeOf('/etc/passwd', set, false)).toBe('/etc');
    expect(forbiddenTreeOf('/dev/sda', set, false)).toBe('/dev');
  });

  it("refuses other calls' temp folders and lets the call reach its own", () => {
    expect(forbiddenTreeOf(join(scratch, 'calls', 'other', 'f'), set, false)).toBe(join(scratch, 'calls'));
    expect(forbiddenTreeOf(join(scratch, 'calls'), set, false)).toBe(join(scratch, 'calls'));
    expect(forbiddenTreeOf(join(scratch, 'calls', 'mine', 'f'), set, true)).toBeUndefined();
  });

  it('names the secret tree that holds a path', () => {
    expect(forbiddenTreeOf(join(home, '.ssh', 'id_rsa'), set, false)).toBe(join(home, '.ssh'));
    expect(forbiddenTreeOf(join(home, 'notes'), set, false)).toBeUndefined();
  });

  it('counts protected paths for writes only', () => {
    expect(forbiddenTreeOf(join(scratch, 'executors', 'x'), set, false)).toBeUndefined();
    expect(forbiddenTreeOf(join(scratch, 'executors', 'x'), set, true)).toBe(join(scratch, 'executors'));
    expect(forbiddenTreeOf(join(scratch, 'elsewhere'), set, true)).toBeUndefined();
  });
});

describe('forbiddenInside', () => {
  const set = forbiddenSet({
    homes: [home],
    workspace,
    protect: [{ path: join(scratch, 'keys', 'trusted'), why: 'trusted keys' }],
    calls: { root: join(scratch, 'calls'), own: join(scratch, 'calls', 'mine') },
  });

  it('finds a forbidden, protected or calls tree strictly inside a root', () => {
    expect(forbiddenInside(home, set)).toBe(join(home, '.ssh'));
    expect(forbiddenInside(join(scratch, 'keys'), set)).toBe(join(scratch, 'keys', 'trusted'));
    expect(forbiddenInside(scratch, set, [])).toBeDefined();
    expect(forbiddenInside(join(scratch, 'calls', 'x'), set)).toBeUndefined();
    expect(
      forbiddenInside(join(scratch, 'only-calls'), {
        ...set,
        calls: { root: join(scratch, 'only-calls', 'c'), own: '' },
      }),
    ).toBe(join(scratch, 'only-calls', 'c'));
  });

  it('does not count the root itself, nor an allowed path', () => {
    expect(forbiddenInside(join(home, '.ssh'), set)).toBeUndefined();
    expect(forbiddenInside(workspace, set)).toBe(join(workspace, '.audit'));
    expect(forbiddenInside(workspace, set, [join(workspace, '.audit')])).toBeUndefined();
  });
});
