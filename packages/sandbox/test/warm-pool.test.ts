import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import {
  createCatalog,
  createInvoker,
  type ExecutorResult,
  type ExecutorRunner,
  type RunRequest,
  serializePublicKey,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy } from '../src/egress-proxy.ts';
import { type DomainRule, parseDomainRule } from '../src/index.ts';
import { createSandboxRunner, type SandboxRunner, type SandboxRunnerSettings } from '../src/runner.ts';
import { createLab, type Lab, sandboxToml } from './fixtures.ts';

// The warm pool for real: signed executors under the full tier, processes
// started ahead of their calls. Each case breaks one promise if the pool
// stops keeping it: one process per call, never a stale version, the
// sandbox's view as the call's rules are now, budgets, idleness.

const WARM_NOTE = 'started ahead of its call (warm pool); one process, one call';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function warm(result: ExecutorResult): boolean {
  return (result.isolation?.notes ?? []).includes(WARM_NOTE);
}

/** Waits until the runner's pool has `count` processes waiting (a real start takes a while). */
async function waitingCount(runner: SandboxRunner, count: number): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (runner.poolStats()!.waiting >= count) return;
    await sleep(50);
  }
  throw new Error(`the pool never had ${count} waiting: ${JSON.stringify(runner.poolStats())}`);
}

/** Warm trees alive on the host whose view includes `marker` (one outer helper each). */
function warmTrees(marker: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (command.includes('--write-quota-idle') && command.some((part) => part.includes(marker))) count++;
    } catch {
      // ended meanwhile
    }
  }
  return count;
}

describe('the warm pool', () => {
  let lab: Lab;
  const runners: SandboxRunner[] = [];
  const runnerWith = (pool: SandboxRunnerSettings['pool']) => {
    const runner = createSandboxRunner({ home: join(lab.root, 'home'), audit: false, pool });
    runners.push(runner);
    expect(runner.tier).toBe('full');
    return runner;
  };

  beforeAll(async () => {
    lab = await createLab('metnos-warm-pool-');
  });

  afterAll(async () => {
    for (const runner of runners) runner.close();
    await rm(lab.root, { recursive: true, force: true });
  });

  it('hands each warm process one call; nothing of one call is there for the next', async () => {
    const runner = runnerWith({ size: 1 });
    const workspace = join(lab.root, 'ws-one-call');
    const harness = await lab.executor(
      'one_call',
      {
        code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import { existsSync, writeFileSync } from 'node:fs';
export default defineExecutor({ run(args, ctx) {
  const marker = ctx.tmpDir + '/marker';
  const seen = { tmpDir: ctx.tmpDir, marker: existsSync(marker), global: globalThis.__metnosSeen ?? null };
  writeFileSync(marker, 'first');
  globalThis.__metnosSeen = 'set by an earlier call';
  return ok(seen);
} });`,
        profile: { write: ['$TMP'] },
      },
      runner,
    );
    const first = await harness.invoke({}, { workspace });
    expect(first).toMatchObject({ ok: true, content: { marker: false, global: null } });
    expect(warm(first)).toBe(false);
    const tmpDirs = [(first as { content: { tmpDir: string } }).content.tmpDir];
    for (let index = 0; index < 2; index++) {
      await waitingCount(runner, 1);
      const later = await harness.invoke({}, { workspace });
      expect(warm(later)).toBe(true);
      expect(later).toMatchObject({ ok: true, content: { marker: false, global: null } });
      tmpDirs.push((later as { content: { tmpDir: string } }).content.tmpDir);
    }
    expect(new Set(tmpDirs).size).toBe(3);
    // the calls' temp folders are gone from the host once their calls are done
    for (const tmpDir of tmpDirs) expect(() => readdirSync(tmpDir)).toThrow();
    expect(runner.poolStats()).toMatchObject({ hits: 2 });
  });

  it('never hands out a process of a version that stopped being CURRENT, with calls under way', async () => {
    const root = join(lab.root, 'catalog');
    const workspace = join(lab.root, 'ws-swap');
    for (const version of ['1.0.0', '2.0.0']) {
      await writeSignedExecutor({
        root,
        name: 'swap_probe',
        version,
        versioned: true,
        key: lab.key,
        sandboxToml: sandboxToml(),
        code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return ok({ version: '${version}' }); } });`,
      });
    }
    await writeFile(join(root, 'swap_probe', 'CURRENT'), '1.0.0\n');
    const catalog = createCatalog({ root, trustedKeys: [lab.key], stateDir: join(lab.root, 'state') });
    expect((await catalog.load()).quarantined).toEqual([]);
    const runner = runnerWith({ size: 2, max: 4 });
    const mismatches: string[] = [];
    const served: Array<{ version: string; warm: boolean; afterSwap: boolean }> = [];
    let swapped = false;
    // every call: the version the process answered with is the version the invoker resolved
    const checking: ExecutorRunner = {
      tier: runner.tier,
      async run(request: RunRequest) {
        const afterSwap = swapped;
        const report = await runner.run(request);
        const answered = report.result.ok ? (report.result.content as { version: string }).version : 'failed';
        if (answered !== request.executor.version)
          mismatches.push(`resolved ${request.executor.version}, the process answered ${answered}`);
        served.push({ version: answered, warm: warm(report.result), afterSwap });
        return report;
      },
    };
    const invoker = createInvoker({ catalog, runner: checking });
    let stop = false;
    const caller = async () => {
      while (!stop) {
        const result = await invoker.invoke('swap_probe', {}, { workspace, caller: { kind: 'test' } });
        expect(result.ok, JSON.stringify(result)).toBe(true);
        await sleep(50);
      }
    };
    const until = async (what: string, condition: () => boolean) => {
      for (let tries = 0; tries < 1200 && !condition(); tries++) await sleep(50);
      expect(condition(), what).toBe(true);
    };
    const load = Promise.all([caller(), caller(), caller()]);
    try {
      // the load goes through the pool on both sides of the move
      await until(
        'a warm 1.0.0 served, among a dozen calls',
        () => served.length >= 12 && served.some((call) => call.warm && call.version === '1.0.0'),
      );
      await catalog.promote('swap_probe', '2.0.0');
      swapped = true;
      await until(
        'a warm 2.0.0 served after the move, among a dozen calls',
        () =>
          served.filter((call) => call.afterSwap).length >= 12 &&
          served.some((call) => call.afterSwap && call.warm && call.version === '2.0.0'),
      );
    } finally {
      stop = true;
      await load;
    }
    expect(mismatches).toEqual([]);
    expect(served.filter((call) => call.afterSwap && call.version !== '2.0.0')).toEqual([]);
  }, 120_000);

  it('gives up a warm process whose view was built from a folder that has since been replaced', async () => {
    const runner = runnerWith({ size: 1 });
    const workspace = join(lab.root, 'ws-replaced');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'note.txt'), 'old');
    const harness = await lab.executor(
      'read_note',
      {
        code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import { readFileSync } from 'node:fs';
export default defineExecutor({ run(args, ctx) { return ok({ note: readFileSync(ctx.workspace + '/note.txt', 'utf8') }); } });`,
        profile: { read: ['$WORKSPACE'] },
      },
      runner,
    );
    expect(await harness.invoke({}, { workspace })).toMatchObject({ ok: true, content: { note: 'old' } });
    await waitingCount(runner, 1);
    // the waiting process has the old folder bound at the workspace's path
    renameSync(workspace, `${workspace}-old`);
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'note.txt'), 'new');
    const after = await harness.invoke({}, { workspace });
    expect(after).toMatchObject({ ok: true, content: { note: 'new' } });
    expect(warm(after)).toBe(false);
  });

  it('masks a secret folder that appeared in a granted tree after the waiting process was started', async () => {
    const runner = runnerWith({ size: 1 });
    const home = join(lab.root, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'notes.txt'), 'plain');
    const harness = await lab.executor(
      'read_home',
      {
        code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import { readFileSync } from 'node:fs';
const attempt = (path) => { try { return readFileSync(path, 'utf8'); } catch (error) { return 'refused: ' + error.code; } };
export default defineExecutor({ run(args, ctx) { return ok({ notes: attempt('${home}/notes.txt'), key: attempt('${home}/.ssh/id_ed25519') }); } });`,
        profile: { read: ['$HOME'] },
      },
      runner,
    );
    const workspace = join(lab.root, 'ws-home');
    expect(await harness.invoke({}, { workspace })).toMatchObject({ ok: true, content: { notes: 'plain' } });
    await waitingCount(runner, 1);
    // the waiting process's view of the home was built when it had no .ssh
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'CANARY-KEY');
    const after = await harness.invoke({}, { workspace });
    expect(after).toMatchObject({ ok: true, content: { notes: 'plain' } });
    expect((after as { content: { key: string } }).content.key).toMatch(/^refused/);
  });

  it('keeps within its budgets: processes in all and the memory the waiting ones may take', async () => {
    const byCount = runnerWith({ size: 1, max: 2 });
    const byMemory = runnerWith({ size: 1, max: 8, memoryMb: 200 });
    for (const [label, runner, limit] of [
      ['count', byCount, 2],
      ['memory', byMemory, 1],
    ] as const) {
      const workspace = join(lab.root, `ws-budget-${label}`);
      for (const name of ['a', 'b', 'c']) {
        const harness = await lab.executor(
          `budget_${label}_${name}`,
          { profile: { memoryMb: 128, read: ['$WORKSPACE'] } },
          runner,
        );
        expect(await harness.invoke({}, { workspace })).toMatchObject({ ok: true });
        const stats = runner.poolStats()!;
        expect(stats.waiting + stats.starting, label).toBeLessThanOrEqual(limit);
      }
      await waitingCount(runner, limit);
      await sleep(500);
      expect(runner.poolStats()!.waiting + runner.poolStats()!.starting).toBe(limit);
      expect(runner.poolStats()!.memoryMb).toBeLessThanOrEqual(limit * 128);
      expect(warmTrees(workspace)).toBe(limit);
    }
  });

  it('lets an idle executor lose its warm processes', async () => {
    const runner = runnerWith({ size: 1, idleMs: 1000 });
    const workspace = join(lab.root, 'ws-idle');
    const harness = await lab.executor('idle_one', { profile: { read: ['$WORKSPACE'] } }, runner);
    expect(await harness.invoke({}, { workspace })).toMatchObject({ ok: true });
    await waitingCount(runner, 1);
    expect(warmTrees(workspace)).toBe(1);
    await sleep(3000);
    expect(runner.poolStats()).toMatchObject({ waiting: 0, starting: 0 });
    await sleep(200);
    expect(warmTrees(workspace)).toBe(0);
  });

  it('keeps the host alive while a call waits for a process still starting, and lets it exit after', async () => {
    await lab.executor('host_alive', {}, runnerWith(undefined));
    const keyFile = join(lab.root, 'lab.pub');
    writeFileSync(keyFile, serializePublicKey(lab.key));
    const run = spawnSync(
      process.execPath,
      [
        '--conditions=metnos-source',
        '--disable-warning=ExperimentalWarning',
        join(import.meta.dirname, '__fixtures__', 'pool-host.ts'),
        join(lab.root, 'host_alive', 'host_alive'),
        keyFile,
        join(lab.root, 'ws-alive'),
        join(lab.root, 'home'),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const calls = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ok: boolean; notes: string[] });
    expect(calls.map((call) => call.ok)).toEqual([true, true]);
    expect(calls[1]!.notes).toContain(WARM_NOTE);
  });

  it('starts cold when the pool is empty, and without a pool', async () => {
    const workspace = join(lab.root, 'ws-cold');
    for (const runner of [runnerWith({ max: 0 }), runnerWith(undefined)]) {
      const harness = await lab.executor(`cold_${runners.length}`, {}, runner);
      for (let index = 0; index < 2; index++) {
        const result = await harness.invoke({}, { workspace });
        expect(result).toMatchObject({ ok: true });
        expect(warm(result)).toBe(false);
      }
    }
  });
});

describe("a warm process's egress proxy", () => {
  it('refuses every connection until its call attaches, then serves the call', async () => {
    const server = createServer((_request, response) => response.end('upstream'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const lab = await createLab('metnos-warm-proxy-');
    const proxy = await startEgressProxy({
      socketPath: join(lab.root, 'proxy.sock'),
      rules: [parseDomainRule('api.example.test') as DomainRule],
      hostOverrides: { 'api.example.test': `127.0.0.1:${port}` },
      waitForCall: true,
    });
    const ask = () =>
      new Promise<string>((resolve, reject) => {
        const socket = createConnection(proxy.socketPath);
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString('latin1');
        });
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
        socket.write('GET http://api.example.test/ HTTP/1.1\r\nhost: api.example.test\r\n\r\n');
      });
    try {
      expect(await ask()).toMatch(/^HTTP\/1\.1 403[\s\S]*no call has been handed to this process yet/);
      proxy.attach({});
      expect(await ask()).toMatch(/^HTTP\/1\.1 200[\s\S]*upstream$/);
    } finally {
      await proxy.close();
      server.close();
      await rm(lab.root, { recursive: true, force: true });
    }
  });
});
