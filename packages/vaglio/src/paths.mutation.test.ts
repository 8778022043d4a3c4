import { describe, expect, it } from 'vitest';
import {
  forbiddenRules,
  globReaches,
  isWithin,
  mentionedRule,
  pathsIn,
  percentDecode,
  protectedRules,
  readings,
} from './paths.ts';

const context = { home: '/home/ada', workspace: '/home/ada/metnos' };
const rules = forbiddenRules(context);
const label = (text: string, place = context, list = rules) => mentionedRule(text, list, place)?.label;

describe('isWithin', () => {
  it('holds a path in itself and below, and / holds only absolute paths', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/x', '/')).toBe(true);
    expect(isWithin('x', '/')).toBe(false);
  });
});

describe('forbiddenRules', () => {
  it('names every rule and its samples', () => {
    expect(rules.map((rule) => [rule.label, rule.samples])).toEqual([
      ['~/.ssh', ['/home/ada/.ssh']],
      ['~/.gnupg', ['/home/ada/.gnupg']],
      ['~/.aws', ['/home/ada/.aws']],
      ['~/.config/metnos', ['/home/ada/.config/metnos']],
      ['~/.config/myclaw', ['/home/ada/.config/myclaw']],
      ['~/.config/*/credentials.env', ['/home/ada/.config/x/credentials.env']],
      ['<workspace>/.audit', ['/home/ada/metnos/.audit']],
      ['/root', ['/root']],
      ['/boot', ['/boot']],
      ['/sys', ['/sys']],
      ['/proc', ['/proc']],
      ['/etc/passwd', ['/etc/passwd']],
      ['/etc/shadow', ['/etc/shadow']],
      ['/etc/gshadow', ['/etc/gshadow']],
      ['/etc/sudoers', ['/etc/sudoers']],
      [
        '/dev block devices',
        ['/dev/sda', '/dev/hda', '/dev/vda', '/dev/xvda', '/dev/nvme0n1', '/dev/mmcblk0', '/dev/disk/by-id'],
      ],
    ]);
  });

  it('forbids credentials.env one folder or more below ~/.config, not in it or elsewhere', () => {
    const credentials = rules.find((rule) => rule.label === '~/.config/*/credentials.env')!;
    expect(credentials.matches('/home/ada/.config/app/credentials.env')).toBe(true);
    expect(credentials.matches('/home/ada/.config/a/b/credentials.env')).toBe(true);
    expect(credentials.matches('/home/ada/.config/credentials.env')).toBe(false);
    expect(credentials.matches('/home/ada/.config')).toBe(false);
    expect(credentials.matches('/home/ada/.config/app/other.env')).toBe(false);
    expect(credentials.matches('/home/ada/other/app/credentials.env')).toBe(false);
    expect(label('cat ~/.config/*/credentials.env')).toBe('~/.config/*/credentials.env');
  });

  it('skips /root only when the home is inside it', () => {
    expect(forbiddenRules({ home: '/root', workspace: '/root/ws' }).map((rule) => rule.label)).not.toContain(
      '/root',
    );
    expect(forbiddenRules({ home: '/rooty', workspace: '/w' }).map((rule) => rule.label)).toContain('/root');
  });

  it('matches account files, their backups and drop-ins, not longer names', () => {
    for (const path of [
      '/etc/passwd',
      '/etc/passwd-',
      '/etc/shadow.bak',
      '/etc/sudoers.d/x',
      '/etc/gshadow~',
    ])
      expect([path, label(path)]).not.toEqual([path, undefined]);
    for (const path of ['/etc/passwdx', '/etc/shadow_copy', '/etc/sudoersd', '/etc/motd'])
      expect([path, label(path)]).toEqual([path, undefined]);
  });

  it('matches block devices by prefix', () => {
    for (const device of ['/dev/sdb1', '/dev/nvme1n1p2', '/dev/disk/by-uuid/x', '/dev/xvdb'])
      expect(label(device)).toBe('/dev block devices');
    for (const device of ['/dev/null', '/dev/tty', '/dev/loop0']) expect(label(device)).toBeUndefined();
  });
});

describe('protectedRules', () => {
  const list = protectedRules({ ...context, protect: ['/etc/metnos/metnos.toml', '/srv/keys/'] });

  it('names the home trees and the context paths by basename', () => {
    expect(list.map((rule) => [rule.label, rule.samples])).toEqual([
      ['~/.local/state/metnos', ['/home/ada/.local/state/metnos']],
      ['~/.local/share/metnos', ['/home/ada/.local/share/metnos']],
      ['~/.cache/metnos', ['/home/ada/.cache/metnos']],
      ['protected: metnos.toml', ['/etc/metnos/metnos.toml']],
      ['protected: keys', ['/srv/keys']],
    ]);
    expect(protectedRules(context)).toHaveLength(3);
  });

  it('matches the path, what is in it and the folders above it, but never / or the home', () => {
    const toml = list[3]!;
    expect(toml.matches('/etc/metnos/metnos.toml')).toBe(true);
    expect(toml.matches('/etc/metnos')).toBe(true);
    expect(toml.matches('/etc')).toBe(true);
    expect(toml.matches('/')).toBe(false);
    expect(toml.matches('/etc/other')).toBe(false);
    const state = list[0]!;
    expect(state.matches('/home/ada/.local')).toBe(true);
    expect(state.matches('/home/ada')).toBe(false);
    expect(state.matches('/home/ada/.local/state/metnos/ledger.json')).toBe(true);
  });
});

describe('percentDecode and readings', () => {
  it('decodes up to three rounds of percent-encoding', () => {
    expect(percentDecode('%2e%2E%2f')).toBe('../');
    expect(percentDecode('%252e')).toBe('.');
    expect(percentDecode('%25252e')).toBe('.');
    expect(percentDecode('%2525252e')).toBe('%2e');
    expect(percentDecode('100%')).toBe('100%');
    expect(percentDecode('%zz')).toBe('%zz');
  });

  it('reads a string as written, decoded, without file: prefixes, unquoted and brace-expanded', () => {
    expect(readings('file://localhost/etc/%70asswd')).toEqual([
      'file://localhost/etc/%70asswd',
      '/etc/%70asswd',
      'file://localhost/etc/passwd',
      '/etc/passwd',
    ]);
    expect(readings('FILE:/x')).toEqual(['FILE:/x', '/x']);
    expect(readings('file:///y')).toEqual(['file:///y', '/y']);
    expect(readings('"~/.s"s\\h')).toEqual(['"~/.s"s\\h', '~/.ssh']);
    expect(readings('~/.{ssh,aws}')).toEqual(['~/.{ssh,aws}', '~/.ssh', '~/.aws']);
    expect(readings('{a}')).toEqual(['{a}']);
  });

  it('expands at most 64 brace variants', () => {
    const many = readings('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}');
    expect(many).toHaveLength(65);
  });
});

describe('pathsIn', () => {
  it('reads every token as a path against the workspace, with the home forms expanded', () => {
    expect(pathsIn('cat ~/.ssh/id_rsa > x', context)).toEqual([
      '/home/ada/metnos/cat',
      '/home/ada/.ssh/id_rsa',
      '/home/ada/metnos/x',
    ]);
    expect(pathsIn('$HOME/a ${HOME}/b $HOMEx ~ ~root ~root/c //~/d ~other', context)).toEqual([
      '/home/ada/a',
      '/home/ada/b',
      '/home/ada/metnos/$HOMEx',
      '/home/ada',
      '/root',
      '/root/c',
      '/home/ada/d',
      '/home/ada/metnos/~other',
    ]);
  });

  it('replaces the longer of home and workspace first, and leaves a / home alone', () => {
    expect(pathsIn('/home/ada/metnos/x', context)).toEqual(['/home/ada/metnos/x']);
    expect(pathsIn('/x', { home: '/', workspace: '/w' })).toEqual(['/x']);
  });

  it('keeps bracket wildcards whole as well as split', () => {
    expect(pathsIn('~/.[s]sh', context)).toEqual([
      '/home/ada',
      '/home/ada/metnos/s',
      '/home/ada/metnos/sh',
      '/home/ada/.[s]sh',
    ]);
    expect(pathsIn('a,b', context)).toEqual(['/home/ada/metnos/a', '/home/ada/metnos/b']);
  });
});

describe('globReaches and mentionedRule', () => {
  it('expands *, ? and bracket classes one segment at a time, hidden names only for dotted patterns', () => {
    expect(globReaches('/home/ada/.s*', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/ada/*', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.??h', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/ada/.?h', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.[s]sh', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/ada/.[!s]sh', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.[!x]sh', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/ada/.[a\\]sh', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.[]s]sh', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/ada/.[ssh', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.[ssh', '/home/ada/.[ssh')).toBe(true);
    expect(globReaches('/e*c/pass.d', '/etc/passwd')).toBe(false);
    expect(globReaches('/e*c/pass+d', '/etc/pass+d')).toBe(true);
    expect(globReaches('/h*/**', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/h*', '/home/ada/.ssh')).toBe(false);
    expect(globReaches('/home/ada/.ssh/*', '/home/ada/.ssh')).toBe(true);
    expect(globReaches('/home/bob/*', '/home/ada/.ssh')).toBe(false);
  });

  it('finds the first rule a path or a wildcard reaches', () => {
    expect(label('ls /b??t')).toBe('/boot');
    expect(label('cat /etc/pass*')).toBe('/etc/passwd');
    expect(label('ls /dev/sd*')).toBe('/dev block devices');
    expect(label('ls /dev/n*')).toBe('/dev block devices');
    expect(label('ls ~/notes/*.md')).toBeUndefined();
    expect(label('rm ~/metnos/.au*')).toBe('<workspace>/.audit');
    expect(label('ls /proc')).toBe('/proc');
    expect(label('cat ~/.[]s]sh/id_rsa')).toBe('~/.ssh');
  });
});
