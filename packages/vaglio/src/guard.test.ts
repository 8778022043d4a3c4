import { describe, expect, it } from 'vitest';
import { createGuard } from './guard.ts';
import { EXECUTORS, proposedCall } from './test/index.ts';
import type { EvaluationContext, ExecutorContract } from './types.ts';

const context: EvaluationContext = { home: '/home/ada', workspace: '/home/ada/metnos' };
const guard = createGuard();

function check(
  args: unknown,
  executor: ExecutorContract = EXECUTORS.fs_read,
  where: EvaluationContext = context,
) {
  return guard.check(proposedCall({ executor, args }), where);
}

function blockedRule(
  args: unknown,
  executor?: ExecutorContract,
  where?: EvaluationContext,
): string | undefined {
  const result = check(args, executor, where);
  return result.ok ? undefined : result.rule;
}

/** Each forbidden location with one path inside it, absolute, and its home-relative form when it has one. */
const FORBIDDEN: { rule: string; absolute: string; home?: string }[] = [
  { rule: '~/.ssh', absolute: '/home/ada/.ssh/id_rsa', home: '.ssh/id_rsa' },
  { rule: '~/.ssh', absolute: '/home/ada/.ssh', home: '.ssh' },
  { rule: '~/.gnupg', absolute: '/home/ada/.gnupg/private-keys-v1.d', home: '.gnupg/private-keys-v1.d' },
  { rule: '~/.aws', absolute: '/home/ada/.aws/credentials', home: '.aws/credentials' },
  { rule: '~/.aws', absolute: '/home/ada/.aws/config', home: '.aws/config' },
  {
    rule: '~/.config/metnos',
    absolute: '/home/ada/.config/metnos/keys/signing.key',
    home: '.config/metnos/keys/signing.key',
  },
  {
    rule: '~/.config/myclaw',
    absolute: '/home/ada/.config/myclaw/vault.json',
    home: '.config/myclaw/vault.json',
  },
  {
    rule: '~/.config/*/credentials.env',
    absolute: '/home/ada/.config/telegram/credentials.env',
    home: '.config/telegram/credentials.env',
  },
  {
    rule: '<workspace>/.audit',
    absolute: '/home/ada/metnos/.audit/2026-04.jsonl',
    home: 'metnos/.audit/2026-04.jsonl',
  },
  { rule: '/etc/passwd', absolute: '/etc/passwd' },
  { rule: '/etc/shadow', absolute: '/etc/shadow' },
  { rule: '/etc/shadow', absolute: '/etc/shadow-' },
  { rule: '/etc/gshadow', absolute: '/etc/gshadow' },
  { rule: '/etc/sudoers', absolute: '/etc/sudoers' },
  { rule: '/etc/sudoers', absolute: '/etc/sudoers.d/90-cloud-init-users' },
  { rule: '/root', absolute: '/root/.bash_history' },
  { rule: '/boot', absolute: '/boot/vmlinuz' },
  { rule: '/sys', absolute: '/sys/class/net' },
  { rule: '/proc', absolute: '/proc/self/environ' },
  { rule: '/dev block devices', absolute: '/dev/sda' },
  { rule: '/dev block devices', absolute: '/dev/sdb1' },
  { rule: '/dev block devices', absolute: '/dev/nvme0n1p2' },
  { rule: '/dev block devices', absolute: '/dev/hda' },
  { rule: '/dev block devices', absolute: '/dev/vda' },
  { rule: '/dev block devices', absolute: '/dev/mmcblk0' },
];

describe('guard: forbidden paths', () => {
  for (const { rule, absolute, home } of FORBIDDEN) {
    describe(`${absolute} (${rule})`, () => {
      it('is refused written directly', () => {
        expect(blockedRule({ path: absolute })).toBe(rule);
      });
      it('is refused behind ".." segments and duplicate slashes', () => {
        const [, first, ...rest] = absolute.split('/');
        expect(blockedRule({ path: `/${first}/../${first}//${rest.join('///')}` })).toBe(rule);
        expect(blockedRule({ path: `/tmp/../..${absolute}` })).toBe(rule);
        expect(blockedRule({ path: `../../..${absolute}` })).toBe(rule);
      });
      it('is refused nested in arrays and objects, and as a key', () => {
        expect(blockedRule({ jobs: [{ options: { sources: ['notes.md', absolute] } }] })).toBe(rule);
        expect(blockedRule({ mapping: { [absolute]: 'copy' } })).toBe(rule);
        expect(blockedRule([[[absolute]]])).toBe(rule);
      });
      it('is refused inside a longer string', () => {
        expect(blockedRule({ command: `cat ${absolute} > x` })).toBe(rule);
        expect(blockedRule({ text: `please look at "${absolute}", thanks` })).toBe(rule);
        expect(blockedRule({ option: `--input=${absolute}` })).toBe(rule);
      });
      it('is refused percent-encoded and as a file:// URL', () => {
        expect(blockedRule({ url: `file://${absolute}` })).toBe(rule);
        expect(blockedRule({ url: `file://localhost${absolute}` })).toBe(rule);
        expect(blockedRule({ url: `file:${encodeURIComponent(absolute)}` })).toBe(rule);
        expect(blockedRule({ path: encodeURIComponent(absolute).replace(/%2F/g, '%252F') })).toBe(rule);
      });
      if (home !== undefined) {
        it('is refused in its ~, $HOME and ${HOME} forms', () => {
          expect(blockedRule({ path: `~/${home}` })).toBe(rule);
          expect(blockedRule({ path: `$HOME/${home}` })).toBe(rule);
          expect(blockedRule({ path: `\${HOME}/${home}` })).toBe(rule);
          expect(blockedRule({ path: `~/Documents/../${home}` })).toBe(rule);
          expect(blockedRule({ path: `%7E%2F${home}` })).toBe(rule);
          expect(blockedRule({ command: `cat ~/${home} > x` })).toBe(rule);
        });
      }
    });
  }

  it('refuses the example from the request in full: cat ~/.ssh/id_rsa > x', () => {
    expect(check({ command: 'cat ~/.ssh/id_rsa > x' })).toEqual({
      ok: false,
      rule: '~/.ssh',
      reason: 'argument "command" mentions a forbidden path (~/.ssh)',
    });
  });

  it('refuses relative paths that climb out of the workspace into a forbidden place', () => {
    expect(blockedRule({ path: '../.ssh/id_rsa' })).toBe('~/.ssh');
    expect(blockedRule({ path: '.audit/2026-04.jsonl' })).toBe('<workspace>/.audit');
    expect(blockedRule({ path: './notes/../.audit' })).toBe('<workspace>/.audit');
  });

  it('refuses quoted, escaped and brace-expanded spellings a shell would join back', () => {
    expect(blockedRule({ command: `cat ~/".ssh"/id_rsa` })).toBe('~/.ssh');
    expect(blockedRule({ command: "cat ~/'.gn'upg/x" })).toBe('~/.gnupg');
    expect(blockedRule({ command: 'cat ~/.\\ssh/id_rsa' })).toBe('~/.ssh');
    expect(blockedRule({ command: 'tar czf out.tgz ~/.{ssh,aws}' })).toBe('~/.ssh');
    expect(blockedRule({ command: 'cat /etc/{hosts,shadow}' })).toBe('/etc/shadow');
  });

  it('refuses wildcards that a shell would expand into a forbidden place', () => {
    expect(blockedRule({ command: 'cat ~/.ss?/id_rsa' })).toBe('~/.ssh');
    expect(blockedRule({ command: 'cat ~/.s*/id_rsa' })).toBe('~/.ssh');
    expect(blockedRule({ command: 'cat /e*/pass[w]d' })).toBe('/etc/passwd');
    expect(blockedRule({ command: 'dd if=/dev/sd? of=disk.img' })).toBe('/dev block devices');
    expect(blockedRule({ command: 'cat ~/**/credentials.env' })).toBeDefined();
  });

  it('refuses other letter cases, which name the same place on case-insensitive file systems', () => {
    expect(blockedRule({ path: '~/.SSH/id_rsa' })).toBe('~/.ssh');
    expect(blockedRule({ path: '/Home/Ada/.Gnupg' })).toBe('~/.gnupg');
    expect(blockedRule({ path: '/ETC/shadow' })).toBe('/etc/shadow');
  });

  it('refuses ~root as /root and the absolute home as ~', () => {
    expect(blockedRule({ path: '~root/.profile' })).toBe('/root');
    expect(blockedRule({ path: '/home/ada/.gnupg' })).toBe('~/.gnupg');
  });

  it('lets ordinary paths and look-alikes through', () => {
    const ordinary = [
      { path: 'notes.md' },
      { path: '~/Documents/report.pdf' },
      { path: '/home/ada/metnos/inbox/mail.txt' },
      { path: '/home/ada/.sshkeys-backup-notes.md' },
      { path: '/home/adam/.ssh-not-mine' },
      { path: '/etc/hosts' },
      { path: '/etc/passwords-list.txt' },
      { path: '/rootless/container' },
      { path: '/devices.txt' },
      { path: '/dev/null' },
      { url: 'https://example.com/etc/passwd-tips' },
      { text: 'I keep my keys in a safe place' },
      { path: '~/.config/nvim/init.lua' },
      { command: 'ls ~/*' },
      { path: '.ssh-notes/readme.md' },
    ];
    for (const args of ordinary) expect([args, check(args)]).toEqual([args, { ok: true }]);
  });

  it('does not treat the user home as /root when the user is root, but still guards its secrets', () => {
    const asRoot = { home: '/root', workspace: '/root/metnos' };
    expect(check({ path: '/root/metnos/notes.md' }, EXECUTORS.fs_read, asRoot)).toEqual({ ok: true });
    expect(check({ path: '~/Documents/a.txt' }, EXECUTORS.fs_read, asRoot)).toEqual({ ok: true });
    expect(blockedRule({ path: '/root/.ssh/id_ed25519' }, EXECUTORS.fs_read, asRoot)).toBe('~/.ssh');
  });

  it('never quotes the value in its reason, and names odd keys only generically', () => {
    const secret = 'cat /home/ada/.aws/credentials-Sup3rS3cret';
    const result = check({ command: secret });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).not.toContain('Sup3rS3cret');
    const byKey = check({ '~/.ssh/id_rsa': true });
    expect(byKey).toMatchObject({ ok: false, reason: 'an argument key mentions a forbidden path (~/.ssh)' });
    const nested = check({ options: { '/etc/shadow': 1 } });
    expect(nested).toMatchObject({
      ok: false,
      reason: 'a key inside argument "options" mentions a forbidden path (/etc/shadow)',
    });
  });

  it('fails closed on arguments too deep to read', () => {
    let deep: unknown = 'notes.md';
    for (let level = 0; level < 100; level++) deep = { next: deep };
    expect(check({ deep })).toMatchObject({ ok: false, rule: 'unreadable arguments' });
  });

  it('applies to every executor, not only code:exec', () => {
    for (const executor of Object.values(EXECUTORS))
      expect(blockedRule({ path: '~/.ssh/id_rsa' }, executor)).toBe('~/.ssh');
  });
});

describe('guard: destructive commands (code:exec only)', () => {
  const shell = EXECUTORS.shell_exec;
  const DESTRUCTIVE: [string, unknown][] = [
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf /' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -fr /' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -r -f /' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm --recursive --force /' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf /*' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf //' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf ~' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf ~/' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf ~/*' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf $HOME' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf "${HOME}"/*' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf /home/ada' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf ~/..' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf /usr' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf "$STEAMROOT/"*' }],
    ['rm -r on /, ~ or a system folder', { command: 'sudo rm -rf /' }],
    ['rm -r on /, ~ or a system folder', { command: 'cd /tmp && /bin/rm -rf /' }],
    ['rm -r on /, ~ or a system folder', { command: 'bash -c "rm -rf ~"' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf /home/ada/metnos' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf .' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf .*' }],
    ['rm --no-preserve-root', { command: 'rm -rf --no-preserve-root /' }],
    ['rm --no-preserve-root', { command: 'rm --no-preserve-root -r /tmp/x' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm', args: ['-rf', '/'] }],
    ['rm -r on /, ~ or a system folder', { args: ['-rf', '~'], command: 'rm' }],
    ['rm -r on /, ~ or a system folder', { argv: ['rm', '-rf', '/'] }],
    ['rm -r on /, ~ or a system folder', { argv: ['sh', '-c', 'rm -rf $HOME'] }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf $(echo /)' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf `echo ~`' }],
    ['rm -r on /, ~ or a system folder', { command: 'rm -rf "$(printf /)"' }],
    ['rm -r on /, ~ or a system folder', { command: 'echo / | xargs rm -rf' }],
    ['recursive delete of /, ~ or a system folder in code', { code: 'import shutil\nshutil.rmtree("/")' }],
    [
      'recursive delete of /, ~ or a system folder in code',
      { code: "shutil.rmtree(os.path.expanduser('~'))" },
    ],
    [
      'recursive delete of /, ~ or a system folder in code',
      { code: "fs.rmSync('/usr', { recursive: true })" },
    ],
    [
      'recursive delete of /, ~ or a system folder in code',
      { code: 'await fs.rm(os.homedir(), { recursive: true })' },
    ],
    ['mkfs (formats a file system)', { command: 'mkfs.ext4 /tmp/disk.img' }],
    ['mkfs (formats a file system)', { command: 'mkfs -t xfs /tmp/x' }],
    ['mkfs (formats a file system)', { command: 'sudo mke2fs image' }],
    ['dd writing to a device', { command: 'dd if=image.iso of=/dev/sdb bs=4M' }],
    ['dd writing to a device', { command: 'dd', args: ['if=/dev/zero', 'of=/dev/nvme0n1'] }],
    ['fork bomb', { command: ':(){ :|:& };:' }],
    ['fork bomb', { command: ':(){ :|: & };:' }],
    ['fork bomb', { command: 'bomb() { bomb | bomb & }; bomb' }],
    ['fork bomb', { command: 'function f { f|f& }; f' }],
    ['fork bomb', { command: 'perl -e "fork while fork"' }],
    ['fork bomb', { code: 'import os\nwhile True: os.fork()' }],
    ['recursive chmod/chown on /, ~ or a system folder', { command: 'chmod -R 777 /' }],
    ['recursive chmod/chown on /, ~ or a system folder', { command: 'chmod --recursive 000 ~' }],
    ['recursive chmod/chown on /, ~ or a system folder', { command: 'chown -R nobody /' }],
    ['output redirected to a device', { command: 'echo x > /dev/sda' }],
    ['output redirected to a device', { command: 'cat image >>/dev/vda' }],
    ['output redirected to a device', { command: 'cat image 1>/dev/mmcblk0' }],
    ['shred on a device', { command: 'shred -n 1 /dev/sda' }],
    ['find -delete on /, ~ or a system folder', { command: 'find / -delete' }],
    ['find -delete on /, ~ or a system folder', { command: 'find ~ -name "*" -exec rm -rf {} +' }],
    ['wipefs or blkdiscard (erases a device)', { command: 'wipefs -a disk.img' }],
  ];

  it.each(DESTRUCTIVE)('refuses %s: %j', (pattern, args) => {
    expect(check(args, shell)).toEqual({
      ok: false,
      rule: pattern,
      reason: `destructive command for a code:exec executor (${pattern})`,
    });
  });

  it('refuses destructive commands on devices that are not forbidden mentions', () => {
    expect(check({ command: 'dd if=/dev/zero of=/dev/loop0' }, shell)).toMatchObject({
      ok: false,
      rule: 'dd writing to a device',
    });
    expect(check({ command: 'echo hi > /dev/tcp/10.0.0.1/80' }, shell)).toMatchObject({
      ok: false,
      rule: 'output redirected to a device',
    });
  });

  it('applies the patterns only to code:exec executors', () => {
    const harmlessText = [
      { content: 'Note to self: never run rm -rf / or :(){ :|:& };: on the server' },
      { content: 'chmod -R 777 / is a bad idea' },
      { text: 'mkfs.ext4 formats' },
    ];
    for (const args of harmlessText) {
      expect(check(args, EXECUTORS.fs_write)).toEqual({ ok: true });
      expect(check(args, shell).ok).toBe(false);
    }
    const scoped = { ...EXECUTORS.fs_read, capabilities: ['code:exec:python'] };
    expect(check({ code: 'rm -rf /' }, scoped).ok).toBe(false);
  });

  it('lets ordinary commands through', () => {
    const benign = [
      { command: 'rm -rf ./build' },
      { command: 'rm -rf build dist node_modules' },
      { command: 'rm -rf *' },
      { command: 'rm -rf /tmp/metnos-cache' },
      { command: 'rm -rf ~/Downloads/old' },
      { command: 'rm notes.md' },
      { command: 'rm /' },
      { command: 'chmod 755 script.sh' },
      { command: 'chmod -R u+w ./out' },
      { command: 'dd if=/dev/zero of=blank.img bs=1M count=10' },
      { command: 'dd if=/dev/urandom of=/dev/null count=1' },
      { command: 'echo done > /dev/null 2>&1' },
      { command: 'find . -name "*.tmp" -delete' },
      { command: "find . -name '*.o' | xargs rm -rf" },
      { command: 'rm -rf $(cat dirs-to-clean.txt)' },
      { code: "shutil.rmtree('build')" },
      { code: "fs.rmSync('./dist', { recursive: true, force: true })" },
      { command: 'find ./cache -delete' },
      { command: 'ls', args: ['-la', 'notes'] },
      { command: 'grep', args: ['-r', 'TODO', '.'] },
      { command: 'echo', args: ['the', 'forks', 'of', 'the', 'road'] },
      { command: 'sort data.csv | uniq -c > counts.txt' },
      { script: 'f() { echo hi; }; f' },
    ];
    for (const args of benign) expect([args, check(args, shell)]).toEqual([args, { ok: true }]);
  });
});

describe('what decides trust may be read, never changed', () => {
  const protect = ['/srv/metnos/metnos.toml', '/srv/metnos/keys/release.pub', '/srv/metnos/executors'];
  const where: EvaluationContext = { ...context, protect };
  const writes: [string, unknown][] = [
    ['the workspace config', { path: '/srv/metnos/metnos.toml', content: 'x' }],
    ['a trusted key file', { path: '/srv/metnos/keys/release.pub', content: 'x' }],
    ['a file in the executors folder', { path: '/srv/metnos/executors/evil/manifest.toml', content: 'x' }],
    ['a folder holding a protected path', { from: '/tmp/staging', to: '/srv/metnos/keys' }],
    ['the version ledger in the state dir', { path: '/home/ada/.local/state/metnos/catalogs/x/ledger.json' }],
    ['the memory stores', { path: '~/.local/share/metnos/autopath.sqlite' }],
    ['the sandbox helper cache', { path: '$HOME/.cache/metnos/sandbox/metnos-jail-x' }],
  ];
  for (const [what, args] of writes) {
    it(`refuses a side-effecting call that names ${what}`, () => {
      expect(blockedRule(args, EXECUTORS.fs_write, where)).toMatch(/^(protected: |~\/\.(local|cache)\/)/);
    });
  }

  it('lets a read-only call read them', () => {
    expect(check({ path: '/srv/metnos/metnos.toml' }, EXECUTORS.fs_read, where)).toEqual({ ok: true });
    expect(check({ path: '~/.local/state/metnos/catalogs/x/ledger.json' }, EXECUTORS.fs_read, where)).toEqual(
      {
        ok: true,
      },
    );
  });

  it('does not refuse a side-effecting call elsewhere in the workspace', () => {
    expect(check({ path: 'notes/today.md', content: 'x' }, EXECUTORS.fs_write, where)).toEqual({ ok: true });
  });
});
