import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExpandedProfile } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forbiddenSet } from '../src/forbidden.ts';
import {
  type ArgumentCheckContext,
  checkArguments,
  type ResolvedProfile,
  resolveProfile,
  textKeysOf,
} from '../src/policy.ts';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'metnos-policy-mutation-')));
const home = join(scratch, 'home');
const workspace = join(home, 'ws');
const tmpRoot = join(scratch, 'tmp');
const calls = { root: join(tmpRoot, 'calls'), own: join(tmpRoot, 'calls', 'mine') };
mkdirSync(join(home, '.ssh'), { recursive: true });
mkdirSync(join(workspace, 'notes'), { recursive: true });
mkdirSync(calls.own, { recursive: true });
writeFileSync(join(workspace, 'notes', 'a.md'), 'hello');
writeFileSync(join(workspace, 'twice.txt'), 'x');
linkSync(join(workspace, 'twice.txt'), join(workspace, 'second-name.txt'));
symlinkSync(join(home, '.ssh'), join(workspace, 'keys'));
const socketPath = join(workspace, 'control.sock');
const server = createServer();
beforeAll(() => new Promise<void>((resolve) => server.listen(socketPath, resolve)));
afterAll(() => {
  server.close();
  rmSync(scratch, { recursive: true, force: true });
});

const forbidden = forbiddenSet({
  homes: [home],
  workspace,
  protect: [
    { path: join(scratch, 'executors'), why: 'the executors folder Metnos loads' },
    { path: join(scratch, 'plain'), why: '' },
  ],
  calls,
});

function profile(
  read: string[] = [],
  write: string[] = [],
  network: ExpandedProfile['network'] = { mode: 'none', domains: [] },
): ExpandedProfile {
  return { fs: { read, write }, network } as unknown as ExpandedProfile;
}

function resolved(read: string[], write: string[], domains: string[] = []): ResolvedProfile {
  const result = resolveProfile(profile(read, write, { mode: 'allowlist', domains }), forbidden);
  if ('rule' in result) throw new Error(result.message);
  return result;
}

describe('resolveProfile', () => {
  it('resolves read and write lists to real paths and parses the domains', () => {
    expect(
      resolveProfile(
        profile([join(workspace, 'notes')], [workspace], {
          mode: 'allowlist',
          domains: ['api.example.com', '*.example.org:8443'],
        }),
        forbidden,
      ),
    ).toEqual({
      read: [join(workspace, 'notes')],
      write: [workspace],
      domains: [
        { host: 'api.example.com', wildcard: false, port: undefined },
        { host: 'example.org', wildcard: true, port: 8443 },
      ],
    });
  });

  it('ignores the domain list when the network mode is none', () => {
    expect(resolveProfile(profile([], [], { mode: 'none', domains: ['*.com'] }), forbidden)).toEqual({
      read: [],
      write: [],
      domains: [],
    });
  });

  it('refuses a bad domain with its reason', () => {
    expect(
      resolveProfile(profile([], [], { mode: 'allowlist', domains: ['ok.example.com', '*.com'] }), forbidden),
    ).toEqual({
      rule: 'profile-bad-domain',
      where: 'profile',
      value: '*.com',
      message: 'network allow-list: the wildcard "*.com" covers a whole public suffix',
    });
  });

  it('refuses a read grant inside a core forbidden tree, by its real path', () => {
    expect(resolveProfile(profile([join(workspace, 'keys')]), forbidden)).toEqual({
      rule: 'profile-forbidden-path',
      where: 'profile',
      value: join(workspace, 'keys'),
      real: join(home, '.ssh'),
      message: `the profile grants ${join(workspace, 'keys')}, inside the core forbidden path ${join(home, '.ssh')}; no profile can grant it`,
    });
  });

  it('refuses an entry that is forbidden only as written', () => {
    const result = resolveProfile(profile([`${workspace}/../.ssh/../.ssh`]), forbidden);
    expect(result).toMatchObject({ rule: 'profile-forbidden-path', real: join(home, '.ssh') });
  });

  it("refuses a grant into other calls' temp folders, naming why", () => {
    expect(resolveProfile(profile([join(calls.root, 'other')]), forbidden)).toMatchObject({
      rule: 'profile-forbidden-path',
      message: `the profile grants write on ${join(calls.root, 'other')}, inside ${calls.root} (other calls' private temp folders); no executor may write there`,
    });
  });

  it('refuses a write grant on a protected path, with its reason', () => {
    expect(resolveProfile(profile([], [join(scratch, 'executors', 'x')]), forbidden)).toMatchObject({
      rule: 'profile-forbidden-path',
      value: join(scratch, 'executors', 'x'),
      message: `the profile grants write on ${join(scratch, 'executors', 'x')}, inside ${join(scratch, 'executors')} (the executors folder Metnos loads); no executor may write there`,
    });
    expect(resolveProfile(profile([join(scratch, 'executors', 'x')]), forbidden)).toMatchObject({
      read: [join(scratch, 'executors', 'x')],
    });
  });

  it('refuses a write grant on the whole home or shared temp folder', () => {
    expect(resolveProfile(profile([], [home]), forbidden, { home })).toMatchObject({
      rule: 'profile-too-broad',
      value: home,
      real: home,
    });
    const temp = resolveProfile(profile([], [join(scratch, 'tmp-shared')]), forbidden, {
      tmpRoot: join(scratch, 'tmp-shared'),
    });
    expect(temp).toEqual({
      rule: 'profile-too-broad',
      where: 'profile',
      value: join(scratch, 'tmp-shared'),
      real: join(scratch, 'tmp-shared'),
      message: `the profile grants write on ${join(scratch, 'tmp-shared')}, the shared temp folder (every call has its own $TMP): an executor could move that aside and put its own in its place; grant a narrower folder`,
    });
    expect(resolveProfile(profile([home]), forbidden, { home })).toMatchObject({ read: [home] });
  });

  it('refuses a write grant on / as the whole filesystem', () => {
    expect(resolveProfile(profile([], ['/']), forbidden)).toMatchObject({
      rule: 'profile-too-broad',
      message: expect.stringContaining('/, the whole filesystem, which contains'),
    });
  });

  it('refuses a write grant that contains a secret, a protected path or the calls folder', () => {
    expect(resolveProfile(profile([], [join(scratch, 'home')]), forbidden)).toEqual({
      rule: 'profile-too-broad',
      where: 'profile',
      value: home,
      real: home,
      message: `the profile grants write on ${home}, which contains ${join(home, '.ssh')} (a core forbidden path): an executor could move that aside and put its own in its place; grant a narrower folder`,
    });
    expect(resolveProfile(profile([], [tmpRoot]), forbidden)).toMatchObject({
      message: `the profile grants write on ${tmpRoot}, which contains ${calls.root} (every call's private temp folder): an executor could move that aside and put its own in its place; grant a narrower folder`,
    });
    const protectedInside = resolveProfile(
      profile([], [scratch]),
      forbiddenSet({
        homes: [],
        protect: [{ path: join(scratch, 'executors'), why: 'the executors folder' }],
      }),
    );
    expect(protectedInside).toMatchObject({
      message: `the profile grants write on ${scratch}, which contains ${join(scratch, 'executors')} (the executors folder): an executor could move that aside and put its own in its place; grant a narrower folder`,
    });
  });

  it('lets a write grant on the workspace contain its own .audit, and no folder above it', () => {
    expect(resolveProfile(profile([], [workspace]), forbidden)).toMatchObject({ write: [workspace] });
    const above = forbiddenSet({ homes: [], workspace });
    expect(resolveProfile(profile([], [home]), above)).toMatchObject({
      rule: 'profile-too-broad',
      message: expect.stringContaining(`which contains ${join(workspace, '.audit')}`),
    });
  });

  it('refuses a read grant that contains system trees', () => {
    expect(resolveProfile(profile(['/var']), forbidden)).toEqual({
      rule: 'profile-too-broad',
      where: 'profile',
      value: '/var',
      real: '/var',
      message:
        'the profile grants /var, which contains system trees (/etc, /proc, /root …); name narrower folders',
    });
    expect(resolveProfile(profile(['/usr']), forbidden)).toMatchObject({ read: ['/usr'] });
  });

  it('cuts a long entry to 200 characters in the refusal', () => {
    const long = `/etc/${'x'.repeat(300)}`;
    const result = resolveProfile(profile([long]), forbidden);
    expect(result).toMatchObject({ rule: 'profile-forbidden-path', value: `${long.slice(0, 200)}…` });
    const exact = `/etc/${'y'.repeat(195)}`;
    expect(resolveProfile(profile([exact]), forbidden)).toMatchObject({ value: exact });
  });

  it('stops at the read list before looking at the write list', () => {
    expect(resolveProfile(profile(['/etc'], ['/']), forbidden)).toMatchObject({
      rule: 'profile-forbidden-path',
    });
  });
});

describe('textKeysOf', () => {
  it('lists the top-level properties marked as free text', () => {
    expect(
      textKeysOf({
        properties: {
          query: { type: 'string', format: 'text' },
          path: { type: 'string' },
          other: { format: 'date' },
          nothing: null,
        },
      }),
    ).toEqual(new Set(['query']));
    expect(textKeysOf(undefined)).toEqual(new Set());
    expect(textKeysOf({ properties: null })).toEqual(new Set());
    expect(textKeysOf({ properties: 'x' })).toEqual(new Set());
  });
});

describe('checkArguments', () => {
  const base: ArgumentCheckContext = {
    profile: resolved([workspace], [join(workspace, 'notes')], ['api.example.com', 'ftp.example.com:21']),
    forbidden,
    workspace,
    home,
  };

  it('accepts paths inside the allow-lists, relative ones under the workspace', () => {
    expect(checkArguments({ path: 'notes/a.md' }, base)).toBeUndefined();
    expect(checkArguments({ path: join(workspace, 'notes', 'new.md') }, base)).toBeUndefined();
    expect(checkArguments({ file: `file://${workspace}/notes/a.md` }, base)).toBeUndefined();
    expect(checkArguments({ path: '~/ws/notes/a.md' }, base)).toBeUndefined();
    expect(checkArguments(['notes/a.md'], base)).toBeUndefined();
    expect(checkArguments('plain words', base)).toBeUndefined();
    expect(checkArguments({ count: 3, flag: true, none: null }, base)).toBeUndefined();
  });

  it('refuses a path outside the allow-lists, naming the pointer, the real path and the lists', () => {
    expect(checkArguments({ dest: join(scratch, 'elsewhere') }, base)).toEqual({
      rule: 'outside-allow-list',
      where: '/dest',
      value: join(scratch, 'elsewhere'),
      real: join(scratch, 'elsewhere'),
      message: `/dest: "${join(scratch, 'elsewhere')}" leads to ${join(scratch, 'elsewhere')}, outside the profile's file allow-lists (${workspace}, ${join(workspace, 'notes')})`,
    });
    const none = { ...base, profile: { read: [], write: [], domains: [] } };
    expect(checkArguments({ path: 'x' }, none)).toMatchObject({
      message: `/path: "x" leads to ${join(workspace, 'x')}, outside the profile's file allow-lists (none)`,
    });
  });

  it('reads ~ and ~/ from the home, and only them', () => {
    expect(checkArguments({ path: '~' }, base)).toMatchObject({ rule: 'outside-allow-list', real: home });
    expect(checkArguments({ path: '~/.ssh/id_rsa' }, base)).toMatchObject({
      rule: 'forbidden-path',
      real: join(home, '.ssh', 'id_rsa'),
    });
    expect(checkArguments({ path: '~notes' }, { ...base, profile: resolved([], []) })).toMatchObject({
      real: join(workspace, '~notes'),
    });
  });

  it('refuses a forbidden path by its lexical or its real form, naming the tree', () => {
    expect(checkArguments({ path: 'keys/id_rsa' }, base)).toEqual({
      rule: 'forbidden-path',
      where: '/path',
      value: 'keys/id_rsa',
      real: join(home, '.ssh', 'id_rsa'),
      message: `/path: "keys/id_rsa" leads to ${join(home, '.ssh', 'id_rsa')}, inside the core forbidden path ${join(home, '.ssh')}`,
    });
    expect(checkArguments({ note: '/etc/passwd' }, base)).toMatchObject({
      rule: 'forbidden-path',
      where: '/note',
    });
    expect(checkArguments({ name: '../.ssh/x' }, base)).toMatchObject({
      rule: 'forbidden-path',
      where: '/name',
    });
    expect(checkArguments({ name: 'a/../..' }, base)).toMatchObject({
      rule: 'outside-allow-list',
      real: home,
    });
    expect(checkArguments({ name: '..' }, base)).toMatchObject({ rule: 'outside-allow-list' });
  });

  it('refuses a file URL that is not usable', () => {
    expect(checkArguments({ file: 'file://remote-host/x' }, base)).toEqual({
      rule: 'outside-allow-list',
      where: '/file',
      value: 'file://remote-host/x',
      message: '/file: "file://remote-host/x" is not a usable file URL',
    });
  });

  it('refuses sockets and devices, and files with a second name unless the profile opts in', () => {
    expect(checkArguments({ path: 'control.sock' }, base)).toEqual({
      rule: 'special-file',
      where: '/path',
      value: 'control.sock',
      real: socketPath,
      message: `/path: ${socketPath} is a device or socket`,
    });
    expect(checkArguments({ path: 'twice.txt' }, base)).toMatchObject({
      rule: 'hardlink',
      where: '/path',
      real: join(workspace, 'twice.txt'),
      message: expect.stringContaining(`${join(workspace, 'twice.txt')} has 2 hard links`),
    });
    expect(checkArguments({ path: 'twice.txt' }, { ...base, hardlinks: true })).toBeUndefined();
    expect(checkArguments({ path: 'notes' }, base)).toBeUndefined();
  });

  it('checks only path keys for relative strings, in any case, and skips empty and multi-line values', () => {
    expect(
      checkArguments({ PATH: 'x.md', title: 'x.md' }, { ...base, profile: resolved([], []) }),
    ).toMatchObject({
      where: '/PATH',
    });
    expect(checkArguments({ title: 'x.md' }, { ...base, profile: resolved([], []) })).toBeUndefined();
    expect(checkArguments({ path: '' }, { ...base, profile: resolved([], []) })).toBeUndefined();
    expect(checkArguments({ path: 'a\nb' }, { ...base, profile: resolved([], []) })).toBeUndefined();
    expect(checkArguments({ path: 'a\0b' }, { ...base, profile: resolved([], []) })).toBeUndefined();
    for (const key of [
      'paths',
      'files',
      'filename',
      'filepath',
      'dir',
      'dirs',
      'directory',
      'folder',
      'src',
      'source',
      'sources',
      'destination',
      'target',
      'cwd',
      'root',
      'from',
      'to',
      'output',
      'input_path',
      'output_path',
    ]) {
      expect(checkArguments({ [key]: 'x.md' }, { ...base, profile: resolved([], []) })).toMatchObject({
        where: `/${key}`,
      });
    }
  });

  it('takes strings with whitespace as text unless they sit under a path key', () => {
    const empty = { ...base, profile: resolved([], []) };
    expect(checkArguments({ note: '/etc passwd' }, empty)).toBeUndefined();
    expect(checkArguments({ note: 'see ../x' }, empty)).toBeUndefined();
    expect(checkArguments({ note: 'x..y' }, empty)).toBeUndefined();
    expect(checkArguments({ note: '~/a b' }, empty)).toBeUndefined();
    expect(checkArguments({ note: 'a/..b' }, empty)).toBeUndefined();
  });

  it('walks arrays under a key with the key, nested objects with escaped pointers', () => {
    expect(checkArguments({ paths: ['notes/a.md', '/etc/shadow'] }, base)).toMatchObject({
      rule: 'forbidden-path',
      where: '/paths/1',
    });
    expect(checkArguments({ 'a/b': { '~c': { path: '/etc/x' } } }, base)).toMatchObject({
      where: '/a~1b/~0c/path',
    });
    expect(checkArguments('/etc/passwd', base)).toMatchObject({ where: '/' });
  });

  it('skips top-level free-text arguments only', () => {
    const textKeys = new Set(['query']);
    expect(checkArguments({ query: '/etc/passwd' }, { ...base, textKeys })).toBeUndefined();
    expect(checkArguments({ wrap: { query: '/etc/passwd' } }, { ...base, textKeys })).toMatchObject({
      where: '/wrap/query',
    });
    expect(checkArguments({ query: 'x', path: '/etc/passwd' }, { ...base, textKeys })).toMatchObject({
      where: '/path',
    });
  });

  it('checks URLs against the domain allow-list with the scheme default port', () => {
    expect(checkArguments({ url: 'https://api.example.com/x' }, base)).toBeUndefined();
    expect(checkArguments({ url: 'http://api.example.com/x' }, base)).toBeUndefined();
    expect(checkArguments({ url: 'ws://api.example.com/x' }, base)).toBeUndefined();
    expect(checkArguments({ url: 'wss://api.example.com/x' }, base)).toBeUndefined();
    expect(checkArguments({ url: 'ftp://ftp.example.com/x' }, base)).toBeUndefined();
    expect(checkArguments({ url: 'ftp://api.example.com/x' }, base)).toEqual({
      rule: 'domain-not-allowed',
      where: '/url',
      value: 'ftp://api.example.com/x',
      message: "/url: api.example.com:21 is not on the profile's network allow-list",
    });
    expect(checkArguments({ url: 'https://api.example.com:8443/x' }, base)).toMatchObject({
      message: "/url: api.example.com:8443 is not on the profile's network allow-list",
    });
    expect(checkArguments({ url: 'https://evil.example.net/x' }, base)).toMatchObject({
      rule: 'domain-not-allowed',
    });
    expect(checkArguments({ url: 'HTTPS://API.EXAMPLE.COM/' }, base)).toBeUndefined();
  });

  it('refuses IP literals in URLs, v4 and v6', () => {
    expect(checkArguments({ url: 'http://169.254.169.254/latest' }, base)).toEqual({
      rule: 'ip-literal',
      where: '/url',
      value: 'http://169.254.169.254/latest',
      message:
        '/url: "http://169.254.169.254/latest" names an IP address; only allow-listed domains are reachable',
    });
    expect(checkArguments({ url: 'http://[::1]:8080/' }, base)).toMatchObject({ rule: 'ip-literal' });
    expect(checkArguments({ url: 'http://0x7f.1/' }, base)).toMatchObject({ rule: 'ip-literal' });
  });

  it('passes over text that only looks like a URL', () => {
    expect(checkArguments({ note: 'https://' }, base)).toBeUndefined();
    expect(checkArguments({ note: 'see https://api.example.com' }, base)).toBeUndefined();
    expect(checkArguments({ note: 'https://a b' }, base)).toBeUndefined();
    expect(checkArguments({ note: 'mailto://x' }, base)).toBeUndefined();
    expect(checkArguments({ note: 'http://exa mple.com' }, base)).toBeUndefined();
  });

  it('refuses arguments nested deeper than the limit, wherever they are', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 70; level++) deep = [deep];
    expect(checkArguments({ a: deep }, base)).toMatchObject({
      rule: 'argument-too-deep',
      value: '',
      message: expect.stringMatching(/^\/a(\/0)+: arguments nest deeper than \d+ levels/),
    });
    let fine: unknown = 'x';
    for (let level = 0; level < 20; level++) fine = [fine];
    expect(checkArguments({ a: fine }, base)).toBeUndefined();
  });
});
