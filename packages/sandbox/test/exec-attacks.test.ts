import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOADER_NAME } from '../src/exec-rules.ts';
import { findBinary } from '../src/host-probe.ts';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode, type ProfileSpec } from './fixtures.ts';

// Code an executor wrote (or found in a granted folder) must never run: not directly, not
// through the dynamic loader, a shell, a shebang, a memfd or an executable mapping. And only
// the socket families the sandbox needs exist inside. Each case checks what the code observed
// and, after it, the host: no payload left its marker, the canary files are unchanged.

type Observed = Record<string, { ok: boolean; code?: string; value?: unknown }>;

/** Runs a file inside and reports its exit, so a case can tell "refused" from "ran". */
const RUN = `const run = (command, args = []) => { const r = cp.spawnSync(command, args, { encoding: 'utf8', env: { PATH: process.env.PATH, METNOS_MARKER: MARK } }); if (r.error) return { ok: false, code: r.error.code }; return { ok: r.status === 0, code: 'exit ' + r.status + ' ' + (r.stdout + r.stderr).trim().slice(0, 200) }; };`;
const PROBE = `const probe = (...args) => { const r = cp.spawnSync('exec-probe', args, { encoding: 'utf8' }); if (r.status !== 0) throw new Error(r.stderr || 'exit ' + r.status); return JSON.parse(r.stdout); };`;

describe.concurrent('running written code, and socket families, at the full tier', () => {
  let lab: Lab;
  let runner: SandboxRunner;
  let workspace: string;
  let shelf: string;
  let binDir: string;
  let toolsDir: string;
  let loader: string;
  let shell: string;
  let httpPort = 0;
  const seen: string[] = [];
  let server: Server;

  async function call(name: string, body: string, profile: ProfileSpec = {}, use: SandboxRunner = runner) {
    // whatever must not run would leave RAN-<name> in the workspace, which every case may write
    const mark = `const MARK = ctx.workspace + '/RAN-${name}';`;
    const code = observingCode(`${mark}\n${RUN}\n${PROBE}\n${body}`);
    const harness = await lab.executor(name, { code, profile }, use);
    const result = await harness.invoke({}, { workspace });
    expect(existsSync(join(workspace, `RAN-${name}`)), 'code that must not run left its marker').toBe(false);
    return { result, observed: (result.ok ? result.content : {}) as Observed };
  }

  const refused = (observed: Observed, key: string) => {
    expect(observed[key], key).toBeDefined();
    expect(observed[key]!.ok, `${key} should be refused: ${JSON.stringify(observed[key])}`).toBe(false);
  };

  function compile(source: string, output: string): void {
    const build = spawnSync('gcc', ['-O1', '-o', output, join(import.meta.dirname, '__fixtures__', source)], {
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`${source} did not build: ${build.stderr}`);
  }

  beforeAll(async () => {
    lab = await createLab('metnos-sandbox-exec-');
    workspace = join(lab.root, 'workspace');
    shelf = join(lab.root, 'shelf');
    binDir = join(lab.root, 'bin');
    toolsDir = join(workspace, 'tools');
    for (const dir of [workspace, shelf, binDir, toolsDir, join(workspace, 'built')])
      mkdirSync(dir, { recursive: true });
    writeFileSync(join(workspace, 'data.txt'), 'original');
    writeFileSync(join(shelf, 'canary.txt'), 'shelf canary');
    compile('exec-probe.c', join(binDir, 'exec-probe'));
    compile('payload.c', join(workspace, 'built', 'payload'));
    compile('payload.c', join(shelf, 'payload'));
    compile('payload.c', join(toolsDir, 'tool'));

    server = createHttpServer((request, response) => {
      seen.push(`${request.headers.host}${request.url}`);
      response.end('hello from the host');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    httpPort = (server.address() as { port: number }).port;

    runner = createSandboxRunner({
      home: join(lab.root, 'home'),
      audit: false,
      binarySearchPath: ['/usr/local/bin', '/usr/bin', '/bin', binDir, toolsDir],
      hostOverrides: { 'api.example.test': `127.0.0.1:${httpPort}` },
    });
    expect(runner.tier).toBe('full');
    loader = runner.host.nodeLibraries.find((file) => LOADER_NAME.test(basename(file)))!;
    expect(loader).toBeDefined();
    shell = findBinary('sh')!;
  });

  afterEach(() => {
    expect(readFileSync(join(workspace, 'data.txt'), 'utf8')).toBe('original');
    expect(readFileSync(join(shelf, 'canary.txt'), 'utf8')).toBe('shelf canary');
    expect(readdirSync(shelf).sort()).toEqual(['canary.txt', 'payload']);
  });

  afterAll(async () => {
    server?.close();
    await rm(lab.root, { recursive: true, force: true });
  });

  describe('written files', () => {
    // the executor copies an allow-listed binary (with an allow-listed cat) and checks the original runs
    const withTrue = (body: string) =>
      `fs.writeFileSync(ctx.workspace + '/true-copy', cp.spawnSync('cat', [${JSON.stringify(findBinary('true'))}]).stdout, { mode: 0o755 });
       out.control = run('true');
       ${body}`;

    it('a copy of an allow-listed binary written into the workspace does not run directly', async () => {
      const { observed } = await call(
        'copy_direct',
        withTrue(`out.direct = run(ctx.workspace + '/true-copy');`),
        { write: ['$WORKSPACE'], exec: ['true', 'cat'] },
      );
      expect(observed.control?.ok, 'the allow-listed original runs').toBe(true);
      refused(observed, 'direct');
    });

    it('a copy of an allow-listed binary does not run through the dynamic loader', async () => {
      const { observed } = await call(
        'copy_loader',
        withTrue(`out.loader = run(${JSON.stringify(loader)}, [ctx.workspace + '/true-copy']);`),
        { write: ['$WORKSPACE'], exec: ['true', 'cat'] },
      );
      expect(observed.control?.ok).toBe(true);
      refused(observed, 'loader');
      expect(String(observed.loader?.code)).toMatch(/failed to map segment|Permission denied/);
    });

    it('a copy of an allow-listed binary does not run through sh -c', async () => {
      const { observed } = await call(
        'copy_shell',
        withTrue(`out.shell = run('sh', ['-c', ctx.workspace + '/true-copy']);`),
        { write: ['$WORKSPACE'], exec: ['true', 'cat', 'sh'] },
      );
      expect(observed.control?.ok).toBe(true);
      refused(observed, 'shell');
    });

    it('a program compiled on the host into a write-granted folder runs neither directly nor through the loader', async () => {
      const { observed } = await call(
        'compiled',
        `const file = ctx.workspace + '/built/payload';
         out.present = { ok: fs.existsSync(file) };
         out.direct = run(file);
         out.loader = run(${JSON.stringify(loader)}, [file]);
         out.shell = run('sh', ['-c', file]);`,
        { write: ['$WORKSPACE'], exec: ['sh'] },
      );
      expect(observed.present?.ok).toBe(true);
      for (const key of ['direct', 'loader', 'shell']) refused(observed, key);
    });

    it('a shebang script written into a granted folder does not run', async () => {
      const { observed } = await call(
        'shebang',
        `const script = ctx.workspace + '/script.sh';
         fs.writeFileSync(script, '#!${shell}\\necho ran > "$METNOS_MARKER"\\n', { mode: 0o755 });
         out.direct = run(script);
         out.shell = run('sh', ['-c', script]);`,
        { write: ['$WORKSPACE'], exec: ['sh'] },
      );
      refused(observed, 'direct');
      refused(observed, 'shell');
    });

    it("a file written to the call's $TMP does not run", async () => {
      const { observed } = await call(
        'tmp_copy',
        `fs.copyFileSync(ctx.workspace + '/built/payload', ctx.tmpDir + '/payload');
         fs.chmodSync(ctx.tmpDir + '/payload', 0o755);
         out.direct = run(ctx.tmpDir + '/payload');
         out.loader = run(${JSON.stringify(loader)}, [ctx.tmpDir + '/payload']);`,
        { read: ['$WORKSPACE'], write: ['$TMP'], exec: ['sh'] },
      );
      refused(observed, 'direct');
      refused(observed, 'loader');
    });

    it('has no /proc, so a descriptor cannot be executed by its /proc/self/fd path', async () => {
      const { result, observed } = await call(
        'proc_fd',
        `const fd = fs.openSync(ctx.workspace + '/built/payload', 'r');
         out.proc = run('sh', ['-c', 'test -e /proc/self/fd']);
         out.devFd = run('sh', ['-c', 'test -e /dev/fd/0']);
         out.shellExec = run('sh', ['-c', 'exec /proc/self/fd/3 3<' + ctx.workspace + '/built/payload']);
         out.exec = run('/proc/self/fd/' + fd);`,
        { write: ['$WORKSPACE'], exec: ['sh'] },
      );
      expect(result.ok, JSON.stringify(result)).toBe(true);
      refused(observed, 'proc');
      refused(observed, 'devFd');
      refused(observed, 'shellExec');
      expect(observed.exec).toEqual({ ok: false, code: 'ENOENT' });
    });

    it('cannot create a memfd or exec by descriptor (seccomp), even for an allow-listed binary', async () => {
      const { observed } = await call(
        'memfd',
        `out.probe = await attempt(() => probe('memfd', ${JSON.stringify(join(binDir, 'exec-probe'))}));`,
        { exec: ['exec-probe'] },
      );
      expect(observed.probe?.ok, JSON.stringify(observed.probe)).toBe(true);
      expect(observed.probe?.value).toEqual({
        memfd_create: 'EPERM',
        memfd_secret: 'EPERM',
        open_self: 'ok',
        execveat_fd: 'EPERM',
        execveat_path: 'EPERM',
      });
    });

    it('cannot map a written file executable (mmap PROT_EXEC, mprotect)', async () => {
      const { observed } = await call(
        'mmap_exec',
        `fs.copyFileSync(ctx.workspace + '/built/payload', ctx.workspace + '/mapped');
         out.probe = await attempt(() => probe('mmap', ctx.workspace + '/mapped'));`,
        { write: ['$WORKSPACE'], exec: ['exec-probe'] },
      );
      expect(observed.probe?.value).toEqual({
        open: 'ok',
        mmap_read: 'ok',
        mmap_exec: 'EPERM',
        mprotect_exec: 'EACCES',
      });
    });

    it('mounts every profile folder noexec, nosuid and nodev, and leaves the runtime executable', async () => {
      const { observed } = await call(
        'mount_flags',
        `out.probe = await attempt(() => probe('flags', ctx.workspace, ctx.tmpDir, ${JSON.stringify(shelf)}, process.execPath));`,
        { read: [shelf], write: ['$WORKSPACE', '$TMP'], exec: ['exec-probe'] },
      );
      const flags = observed.probe?.value as Record<string, string>;
      expect(flags, JSON.stringify(observed.probe)).toBeDefined();
      const values = Object.values(flags);
      expect(values.slice(0, 3)).toEqual([
        'noexec,nosuid,nodev,',
        'noexec,nosuid,nodev,',
        'noexec,nosuid,nodev,',
      ]);
      expect(values[3]).not.toMatch(/noexec/);
    });
  });

  describe('read-only profile folders', () => {
    it('a binary placed in a read-only folder runs neither directly nor through the loader, nor maps executable', async () => {
      const file = join(shelf, 'payload');
      const { observed } = await call(
        'readonly_folder',
        `out.direct = run(${JSON.stringify(file)});
         out.loader = run(${JSON.stringify(loader)}, [${JSON.stringify(file)}]);
         out.probe = await attempt(() => probe('mmap', ${JSON.stringify(file)}));`,
        { read: [shelf], write: ['$WORKSPACE'], exec: ['exec-probe'] },
      );
      refused(observed, 'direct');
      refused(observed, 'loader');
      expect(observed.probe?.value).toMatchObject({ mmap_read: 'ok', mmap_exec: 'EPERM' });
    });

    // the same settings twice share one host probe
    const standardRunner = () =>
      createSandboxRunner({
        home: join(lab.root, 'home'),
        audit: false,
        tier: 'standard',
        binarySearchPath: ['/usr/local/bin', '/usr/bin', '/bin', binDir],
      });

    it('the standard tier (no Landlock) keeps written and granted files from running too', async () => {
      const standard = standardRunner();
      expect(standard.tier).toBe('standard');
      const { result, observed } = await call(
        'standard_tier',
        `out.written = run(ctx.workspace + '/built/payload');
         out.shelf = run(${JSON.stringify(join(shelf, 'payload'))});
         out.loader = run(${JSON.stringify(loader)}, [ctx.workspace + '/built/payload']);
         out.shell = run('sh', ['-c', ctx.workspace + '/built/payload']);`,
        { read: [shelf], write: ['$WORKSPACE'], exec: ['sh'], tier: 'standard' },
        standard,
      );
      expect(result.isolation?.layers).not.toContain('landlock');
      for (const key of ['written', 'shelf', 'loader', 'shell']) refused(observed, key);
    });

    it('the standard tier has no other place to write a program to: /dev and /dev/shm are read-only', async () => {
      const { observed } = await call(
        'standard_dev',
        `const payload = ctx.workspace + '/built/payload';
         for (const place of ['/dev/shm/p', '/dev/p']) {
           out[place] = run('sh', ['-c', 'cat ' + payload + ' > ' + place + ' && chmod +x ' + place + ' && ' + place]);
         }
         out.null = run('sh', ['-c', 'echo still usable > /dev/null']);`,
        { write: ['$WORKSPACE'], exec: ['sh', 'cat', 'chmod'], tier: 'standard' },
        standardRunner(),
      );
      refused(observed, '/dev/shm/p');
      refused(observed, '/dev/p');
      expect(String(observed['/dev/shm/p']?.code)).toMatch(/Read-only file system/);
      expect(observed.null?.ok).toBe(true);
    });

    it('a runtime inside a read-granted folder still runs, while a file beside it does not', async () => {
      const runtimeDir = join(lab.root, 'runtime');
      mkdirSync(runtimeDir, { recursive: true });
      const node = join(runtimeDir, 'node');
      try {
        linkSync(process.execPath, node);
      } catch {
        copyFileSync(process.execPath, node);
      }
      copyFileSync(join(shelf, 'payload'), join(runtimeDir, 'payload'));
      const inner = createSandboxRunner({
        home: join(lab.root, 'home'),
        audit: false,
        nodePath: node,
        binarySearchPath: ['/usr/local/bin', '/usr/bin', '/bin', binDir],
      });
      const { result, observed } = await call(
        'runtime_inside',
        `out.node = { ok: process.execPath === ${JSON.stringify(node)} };
         out.payload = run(${JSON.stringify(loader)}, [${JSON.stringify(join(runtimeDir, 'payload'))}]);
         out.probe = await attempt(() => probe('flags', ${JSON.stringify(runtimeDir)}, process.execPath));`,
        { read: [runtimeDir], write: ['$WORKSPACE'], exec: ['exec-probe'] },
        inner,
      );
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(observed.node?.ok).toBe(true);
      refused(observed, 'payload');
      expect(Object.values(observed.probe?.value as Record<string, string>)).toEqual([
        'noexec,nosuid,nodev,',
        expect.not.stringMatching(/noexec/),
      ]);
    });
  });

  describe('exec allow-list', () => {
    const wouldRun = `fs.writeFileSync(MARK, 'ran');`;

    it('refuses a profile that allow-lists the dynamic loader by its file name, before start', async () => {
      const { result } = await call('loader_listed', wouldRun, {
        write: ['$WORKSPACE'],
        exec: [basename(loader)],
      });
      expect(result).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation' },
        metadata: { rule: 'profile-bad-exec' },
      });
      expect(result.isolation?.layers).toEqual([]);
    });

    it('refuses a profile that allow-lists ld.so, whatever it links to', async () => {
      const { result } = await call('ldso_listed', wouldRun, {
        write: ['$WORKSPACE'],
        exec: ['cat', 'ld.so'],
      });
      expect(result).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation' },
        metadata: { rule: 'profile-bad-exec' },
      });
      if (!result.ok) expect(result.error.message).toMatch(/dynamic loader/);
    });

    it('refuses a profile that allow-lists a binary inside its own folders', async () => {
      const { result } = await call('tool_inside', wouldRun, { write: ['$WORKSPACE'], exec: ['tool'] });
      expect(result).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation' },
        metadata: { rule: 'profile-bad-exec' },
      });
      if (!result.ok) expect(result.error.message).toContain(join(toolsDir, 'tool'));
    });
  });

  describe('socket address families', () => {
    let sockets: Record<string, string>;
    beforeAll(async () => {
      const { observed } = await call('sockets', `out.probe = await attempt(() => probe('sockets'));`, {
        exec: ['exec-probe'],
      });
      expect(observed.probe?.ok, JSON.stringify(observed.probe)).toBe(true);
      sockets = observed.probe!.value as Record<string, string>;
    });

    // EACCES is the filter's answer; the kernel itself says EAFNOSUPPORT or EPERM
    for (const family of ['vsock', 'packet', 'alg', 'netlink', 'bluetooth', 'key']) {
      it(`refuses socket(AF_${family.toUpperCase()})`, () => {
        expect(sockets[family]).toBe('EACCES');
      });
    }

    it('refuses a family hidden in the high bits of the argument, and unknown families', () => {
      expect(sockets.vsock_high_bits).toBe('EACCES');
      expect(sockets.family_200).toBe('EACCES');
    });

    it('refuses socketpair() for every family but AF_UNIX, which child processes need', () => {
      expect(sockets.pair_unix).toBe('ok');
      expect(sockets.pair_vsock).toBe('EACCES');
      expect(sockets.pair_99).toBe('EACCES');
      expect(sockets.pair_inet).toBe('EACCES');
    });

    it('still refuses socket(AF_UNIX) and allows AF_INET and AF_INET6', () => {
      expect(sockets.unix).toBe('EACCES');
      expect(sockets.inet).toBe('ok');
      expect(sockets.inet6).toBe('ok');
    });

    it('reaches a loopback server over AF_INET through the relay when the profile has the network', async () => {
      const { result, observed } = await call(
        'inet_ok',
        `out.fetch = await attempt(async () => (await fetch('http://api.example.test/hello')).text());`,
        { domains: ['api.example.test'] },
      );
      expect(result.ok).toBe(true);
      expect(observed.fetch).toEqual({ ok: true, value: 'hello from the host' });
      expect(seen).toContain('api.example.test/hello');
    });
  });
});
