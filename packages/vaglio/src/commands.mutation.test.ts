import { describe, expect, it } from 'vitest';
import { inventory } from './arguments.ts';
import { DESTRUCTIVE_PATTERNS, destructiveCommand, looksLikeForkBomb, SYSTEM_FOLDERS } from './commands.ts';

const place = { home: '/home/ada', workspace: '/home/ada/metnos' };
const hit = (args: unknown) => destructiveCommand(inventory(args), place);
const line = (command: string) => hit({ command });

const RM = 'rm -r on /, ~ or a system folder';
const CHMOD = 'recursive chmod/chown on /, ~ or a system folder';
const FIND = 'find -delete on /, ~ or a system folder';
const CODE = 'recursive delete of /, ~ or a system folder in code';
const REDIRECT = 'output redirected to a device';

describe('the destructive patterns', () => {
  it('are named by their labels, and the system folders are listed', () => {
    expect(DESTRUCTIVE_PATTERNS).toEqual([
      RM,
      'rm --no-preserve-root',
      CODE,
      FIND,
      'mkfs (formats a file system)',
      'wipefs or blkdiscard (erases a device)',
      'dd writing to a device',
      REDIRECT,
      'shred on a device',
      'fork bomb',
      CHMOD,
    ]);
    expect(SYSTEM_FOLDERS).toEqual([
      '/',
      '/bin',
      '/boot',
      '/dev',
      '/etc',
      '/home',
      '/lib',
      '/lib32',
      '/lib64',
      '/opt',
      '/proc',
      '/root',
      '/sbin',
      '/srv',
      '/sys',
      '/usr',
      '/var',
    ]);
  });
});

describe('rm -r', () => {
  it('is refused on every system folder, the home, above the home, and the workspace itself', () => {
    for (const folder of SYSTEM_FOLDERS) expect([folder, line(`rm -rf ${folder}`)]).toEqual([folder, RM]);
    for (const target of [
      '~',
      '/home/ada',
      '/home/ada/',
      '~/..',
      '/home',
      '/home/ada/metnos',
      '.',
      '..',
      '/*',
      '~/.*',
      '.*',
      '/usr/../etc',
    ])
      expect([target, line(`rm -rf ${target}`)]).toEqual([target, RM]);
  });

  it('spares ordinary folders, the visible contents of the workspace, and single files', () => {
    for (const command of [
      'rm -rf build',
      'rm -rf ./*',
      'rm -rf *',
      'rm -rf /tmp/x',
      'rm -rf ~/old',
      'rm -rf /home/ada/metnos/sub',
      'rm -f /',
      'rm /etc',
    ])
      expect([command, line(command)]).toEqual([command, undefined]);
  });

  it('reads every recursive spelling and every wrapper', () => {
    for (const command of [
      'rm -R /',
      'rm -fr /',
      'rm --recursive /',
      'sudo rm -rf /',
      'sudo -u root rm -rf /',
      'env X=1 rm -rf /',
      'X=1 rm -rf /',
      'nice -n 5 rm -rf /',
      'timeout 10 rm -rf /',
      'timeout -s KILL 10s rm -rf /',
      '/bin/rm -rf /',
      'command rm -rf /',
      'exec rm -rf /',
      'busybox rm -rf /',
      'doas rm -rf /',
      'nohup rm -rf /',
      'time rm -rf /',
      'builtin rm -rf /',
      'stdbuf -o0 rm -rf /',
      'ionice -c 3 rm -rf /',
      'chrt -p 1 rm -rf /',
      'setsid rm -rf /',
      'unbuffer rm -rf /',
      'xargs -I x rm -rf /',
      'sudo -g wheel rm -rf /',
      'sudo -E rm -rf /',
      'sudo -n rm -rf /',
      'sudo -k -s rm -rf /',
      'sudo -g wheel -k rm -rf /',
      'env -u HOME -C /tmp rm -rf /',
      'sudo -C 3 -L -P -d -a x rm -rf /',
      'rm -rf -- /',
    ])
      expect([command, line(command)]).toEqual([command, RM]);
    expect(line(`sudo ${'-n '.repeat(41)}rm -rf /`)).toBe(RM);
    expect(line(`sudo ${'-n '.repeat(40)}rm -rf /tmp/x`)).toBeUndefined();
    expect(line('sudo -u rm ls /')).toBeUndefined();
    expect(line('sudo')).toBeUndefined();
    expect(line('X=1')).toBeUndefined();
    expect(line('timeout 10')).toBeUndefined();
  });

  it('refuses --no-preserve-root whatever the target', () => {
    expect(line('rm --no-preserve-root x')).toBe('rm --no-preserve-root');
  });

  it('reads targets hidden behind substitutions and pipes against the whole command line', () => {
    expect(line('rm -rf $(echo /)')).toBe(RM);
    expect(line('rm -rf `echo /etc`')).toBe(RM);
    expect(line('echo / | xargs rm -rf')).toBe(RM);
    expect(line('rm -rf $(cat list)')).toBeUndefined();
    expect(line("find . -name '*.o' | xargs rm -rf")).toBeUndefined();
    expect(line('rm -rf "$(pwd)"')).toBeUndefined();
  });
});

describe('chmod, chown and chgrp -R', () => {
  it('are refused recursively on critical folders, and only then', () => {
    for (const command of [
      'chmod -R 777 /',
      'chown -R me /etc',
      'chgrp -R staff ~',
      'chmod --recursive 700 /usr',
      'chmod -fR 777 /',
    ])
      expect([command, line(command)]).toEqual([command, CHMOD]);
    for (const command of ['chmod 777 /', 'chmod -r /', 'chmod -R 700 ./out', 'chmod -R 700 *'])
      expect([command, line(command)]).toEqual([command, undefined]);
  });
});

describe('find', () => {
  it('is refused when it deletes from a critical start', () => {
    for (const command of [
      'find / -delete',
      'find ~ -name x -delete',
      'find /etc -exec rm {} +',
      'find /usr -execdir shred {} ;',
      'find / /tmp -delete',
      'find /var -exec /bin/rm -f {} ;',
    ])
      expect([command, line(command)]).toEqual([command, FIND]);
  });

  it('passes when it only lists, or deletes from an ordinary start or the workspace', () => {
    for (const command of [
      'find / -name x',
      'find . -delete',
      'find ./cache -delete',
      'find /tmp -delete',
      'find -delete',
      'find ( / ) -delete',
      'find / -exec cat {} ;',
      'find ! / -delete',
    ])
      expect([command, line(command)]).toEqual([command, undefined]);
  });
});

describe('devices', () => {
  it('refuses formatting, erasing and writing devices', () => {
    expect(line('mkfs.ext4 /dev/sdb1')).toBe('mkfs (formats a file system)');
    expect(line('mke2fs disk.img')).toBe('mkfs (formats a file system)');
    expect(line('blkdiscard /dev/nvme0n1')).toBe('wipefs or blkdiscard (erases a device)');
    expect(line('wipefs -a x')).toBe('wipefs or blkdiscard (erases a device)');
    expect(line('dd if=x of=/dev/loop0')).toBe('dd writing to a device');
    expect(line('dd if=/dev/loop0 of=x')).toBeUndefined();
    expect(line('dd of=/dev/null if=/dev/zero')).toBeUndefined();
    expect(line('shred /dev/loop0')).toBe('shred on a device');
    expect(line('shred -u notes.md')).toBeUndefined();
    expect(line('echo x | tee /dev/loop0')).toBe(REDIRECT);
    expect(line('echo x | tee out.txt /dev/stdout')).toBeUndefined();
    expect(line('echo x > /dev/loop0')).toBe(REDIRECT);
    expect(line('cat x > ../../../../dev/loop0')).toBe(REDIRECT);
  });

  it('lets the harmless devices through', () => {
    for (const device of [
      '/dev/null',
      '/dev/zero',
      '/dev/full',
      '/dev/random',
      '/dev/urandom',
      '/dev/stdout',
      '/dev/stderr',
      '/dev/stdin',
      '/dev/tty',
      '/dev/fd/3',
      '/dev/pts/0',
    ])
      expect([
        device,
        line(`echo x > ${device}`),
        line(`dd if=x of=${device}`),
        line(`tee ${device}`),
      ]).toEqual([device, undefined, undefined, undefined]);
    expect(line('echo x > /dev/fd/x')).toBe(REDIRECT);
    expect(line('echo x > /dev/pts/')).toBe(REDIRECT);
    expect(line('echo x > /devices')).toBeUndefined();
  });
});

describe('fork bombs', () => {
  it('are recognised in their usual shapes', () => {
    for (const text of [
      ':(){ :|:& };:',
      'bomb(){ bomb|bomb& };bomb',
      'function f { f | f & }; f',
      'perl -e "fork while fork"',
      'while True: os.fork()',
      'while(1) fork()',
      'while (true) { fork() }',
      '%0|%0',
      '%0 | %0',
    ])
      expect([text, looksLikeForkBomb(text)]).toEqual([text, true]);
    expect(line(':(){ :|:& };:')).toBe('fork bomb');
  });

  it('are not seen in ordinary functions and text', () => {
    for (const text of [
      'f() { echo hi; }; f',
      'f() { f; }',
      'f() { g | g & }',
      'the forks of the road',
      'while true; do sleep 1; done',
      'a | b & c',
      '{ x }',
      'fork',
      'f() { f f }',
    ])
      expect([text, looksLikeForkBomb(text)]).toEqual([text, false]);
  });
});

describe('tree deletes in code', () => {
  it('are refused on critical folders, as literals or home expressions', () => {
    for (const code of [
      "shutil.rmtree('/')",
      'shutil.rmtree("/etc")',
      'shutil.rmtree(`~`)',
      "shutil.rmtree(os.path.expanduser('~'))",
      'shutil.rmtree(Path.home())',
      'shutil.rmtree(pathlib.Path.home())',
      'fs.rmSync(os.homedir(), { recursive: true })',
      'fs.rmSync(homedir())',
      'FileUtils.rm_rf(Dir.home)',
      'FileUtils.rm_r("/usr")',
      'fs::remove_dir_all("/home")',
      "rimraf.sync('/')",
      "rimraf('~/')",
      'fsp.rm(process.env.HOME, { recursive: true })',
      "promises.rm( os.environ['HOME'] )",
      "fs.rm('/var')",
    ])
      expect([code, hit({ code })]).toEqual([code, CODE]);
  });

  it('pass on ordinary folders and other calls', () => {
    for (const code of [
      "shutil.rmtree('build')",
      "fs.rmSync('./dist')",
      "shutil.copytree('/', 'x')",
      "rimraf('/tmp/x')",
      "os.remove('/')",
      'shutil.rmtree(target)',
    ])
      expect([code, hit({ code })]).toEqual([code, undefined]);
  });
});

describe('how arguments are read', () => {
  it('reads argv lists, split fields and nested shell lines', () => {
    expect(hit({ argv: ['rm', '-rf', '/'] })).toBe(RM);
    expect(hit({ argv: ['sh', '-c', 'rm -rf /'] })).toBe(RM);
    expect(hit({ command: 'rm', args: ['-rf', '~'] })).toBe(RM);
    expect(hit({ command: 'sh -c "rm -rf /"' })).toBe(RM);
    expect(hit({ command: 'ssh host "sudo rm -rf /etc"' })).toBe(RM);
    expect(hit({ command: 'bash -c "sh -c \\"eval \\\\\\"rm -rf /\\\\\\"\\""' })).toBe(RM);
    expect(hit({ '/': 'rm -rf' })).toBeUndefined();
    expect(hit({ command: 'echo safe' })).toBeUndefined();
  });

  it('reads $HOME as the home and other variables as empty', () => {
    expect(line('rm -rf $HOME')).toBe(RM);
    expect(line('rm -rf ${HOME}/')).toBe(RM);
    expect(line('rm -rf $OTHER/')).toBe(RM);
  });

  it('stops nesting at three levels', () => {
    const nested = (depth: number) => {
      let text = 'rm -rf /';
      for (let level = 0; level < depth; level++) text = `sh -c '${text.replaceAll("'", "'\\''")}'`;
      return text;
    };
    expect(line(nested(3))).toBe(RM);
  });
});

describe('each pattern belongs to its own program', () => {
  it('does not read other programs as rm, chmod, find, dd, shred or tee', () => {
    for (const command of [
      'ls -R /',
      'grep -r x /',
      'cp -R / /tmp/x',
      'echo / -delete',
      'echo /etc -exec rm {} ;',
      'cat of=/dev/sda',
      'cat /dev/sda',
      'ls -la /',
      'echo rm -rf /',
    ])
      expect([command, line(command)]).toEqual([command, undefined]);
  });

  it('reads short flags only from single-dash words of letters', () => {
    expect(line('rm -f -r /')).toBe(RM);
    expect(line('rm -1r /')).toBeUndefined();
    expect(line('rm x-r /')).toBeUndefined();
    expect(line('rm --r /')).toBeUndefined();
    expect(line('rm -r- /')).toBeUndefined();
    expect(line('chmod -fR 700 /')).toBe(CHMOD);
    expect(line('chmod -r 700 /')).toBeUndefined();
  });

  it('reads operands after -- and a lone - as targets, and options before -- as options', () => {
    expect(line('rm -rf -- -x /')).toBe(RM);
    expect(line('rm -rf - /')).toBe(RM);
    expect(line('rm -rf -/')).toBeUndefined();
    expect(line('rm -r -- --')).toBeUndefined();
  });

  it('skips assignments only when they are NAME=value', () => {
    expect(line('A_1=x B=y rm -rf /')).toBe(RM);
    expect(line('1A=x rm -rf /')).toBeUndefined();
    expect(line('A-B=x rm -rf /')).toBeUndefined();
    expect(line('xA=1 rm -rf /')).toBe(RM);
  });

  it('skips a timeout duration only after timeout', () => {
    expect(line('timeout 5 rm -rf /')).toBe(RM);
    expect(line('sudo 5 rm -rf /')).toBeUndefined();
    expect(line('timeout x5 rm -rf /')).toBeUndefined();
  });

  it('reads the start folders of find up to the first option, ( or !', () => {
    expect(line('find /tmp / -delete')).toBe(FIND);
    expect(line('find /tmp ( / ) -delete')).toBeUndefined();
    expect(line('find /tmp ! / -delete')).toBeUndefined();
    expect(line('find /tmp -name / -delete')).toBeUndefined();
    expect(line('find / -exec echo rm ;')).toBeUndefined();
    expect(line('find / -execx rm ;')).toBeUndefined();
    expect(line('find / -exec')).toBeUndefined();
  });

  it('reads a hidden target from substitutions only, or from the words around an rm with none', () => {
    expect(line('rm -rf x$(echo /)')).toBe(RM);
    expect(line('rm -rf x `echo /`')).toBe(RM);
    expect(line('rm -rf build; ls /')).toBeUndefined();
    expect(line('ls /; rm -rf')).toBe(RM);
    expect(line('rm -rf $(ls) build')).toBeUndefined();
    expect(line('rm -rf build $(echo /)')).toBe(RM);
    expect(line('echo $(date); rm -rf ./x')).toBeUndefined();
  });
});

describe('what a target covers', () => {
  it('reads . and .. and empty segments, and wildcards that are only wildcards', () => {
    expect(line('rm -rf /usr/./')).toBe(RM);
    expect(line('rm -rf //usr')).toBe(RM);
    expect(line('rm -rf /usr/lib/..')).toBe(RM);
    expect(line('rm -rf /home/ada/*')).toBe(RM);
    expect(line('rm -rf /home/ada/a*')).toBeUndefined();
    expect(line('rm -rf /home/ada/metnos/.[!.]*')).toBe(RM);
    expect(line('rm -rf /home/ada/metnos/?')).toBeUndefined();
    expect(line('rm -rf /home/ada/metnos/*.tmp')).toBeUndefined();
    expect(line('rm -rf /home/ada/metnos/..')).toBe(RM);
    expect(line('rm -rf /home/ada/metnos/!')).toBeUndefined();
  });

  it('takes the home itself, whether or not the workspace is inside it', () => {
    const apart = { home: '/home/ada', workspace: '/srv/ws' };
    expect(destructiveCommand(inventory({ command: 'rm -rf /home/ada' }), apart)).toBe(RM);
    expect(destructiveCommand(inventory({ command: 'rm -rf /srv' }), apart)).toBe(RM);
    expect(destructiveCommand(inventory({ command: 'rm -rf /srv/other' }), apart)).toBeUndefined();
  });
});

describe('devices and harmless devices', () => {
  it('takes /dev/fd and /dev/pts numbers only', () => {
    expect(line('echo x > /dev/fd/12')).toBeUndefined();
    expect(line('echo x > /dev/fd/1x')).toBe(REDIRECT);
    expect(line('echo x > /x/dev/fd/1')).toBeUndefined();
    expect(line('echo x > /dev/pts/1/x')).toBe(REDIRECT);
  });
});

describe('fork bombs and tree deletes, spelled loosely', () => {
  it('allows any spacing the shell or the language allows', () => {
    for (const text of [
      'fork  while  fork',
      'forkwhilefork',
      'while ( 1 ) : fork ( )',
      'while(True):os.fork()',
      'while  true  {  fork(  )  }',
      'function  b { b|b& }',
      'b ( ) { b|b& }',
      'b(  ){ b & b }',
    ])
      expect([text, looksLikeForkBomb(text)]).toEqual([text, true]);
    for (const text of [
      'forkXwhileXfork',
      'while 2: fork()',
      'f() { f && g | h }',
      'f() { f }; g | g &',
      'f(){ f f }|',
    ])
      expect([text, looksLikeForkBomb(text)]).toEqual([text, false]);
  });

  it('reads home expressions and literals with spaces, and only as the first argument', () => {
    for (const code of [
      "shutil.rmtree( os.path.expanduser( '~/' ) )",
      'shutil.rmtree(Path.home(  ))',
      'fs.rmSync( homedir( ) )',
      'rimraf.sync("/")',
      'fs.rm ("/etc")',
    ])
      expect([code, hit({ code })]).toEqual([code, CODE]);
    for (const code of [
      "shutil.rmtree(x, '/')",
      "shutil.rmtree(path.join(os.homedir(), 'x'))",
      "foo_rmtree('/')",
      "fs.rm2('/')",
      "shutil.rmtree('~x')",
      'shutil.rmtree(Path.homes())',
    ])
      expect([code, hit({ code })]).toEqual([code, undefined]);
  });
});

describe('nesting', () => {
  it('reads command lines inside words to three levels, not four', () => {
    const nested = (depth: number) => {
      let text = 'rm -rf /';
      for (let level = 0; level < depth; level++) text = `sh -c '${text.replaceAll("'", "'\\''")}'`;
      return text;
    };
    expect(hit({ argv: ['sh', '-c', 'rm -rf /'] })).toBe(RM);
    expect(hit({ argv: ['sh', '-c', 'a;rm -rf /'] })).toBe(RM);
    expect(hit({ argv: ['sh', '-c', 'a|rm -rf /'] })).toBe(RM);
    expect(hit({ argv: ['sh', '-c', 'a&rm -rf /'] })).toBe(RM);
    expect(line(nested(2))).toBe(RM);
  });
});
