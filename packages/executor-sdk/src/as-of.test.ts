import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { executorCode, sandboxToml, useTempDirs } from './__fixtures__/index.ts';
import { createBirthHarness } from './birth.ts';
import { type Catalog, createCatalog } from './catalog.ts';
import { runChild } from './child-process.ts';
import { expandProfile, invalidAsOf } from './context.ts';
import { createInvoker } from './invoke.ts';
import { generateSigningKey, readPublicKey } from './keys.ts';
import { createProcessRunner, HARNESS_PATH, harnessRequest } from './runner.ts';
import { writeSignedExecutor } from './test/index.ts';

// The turn's pinned instant reaches the executor's clock: a replay reads the time the first run read.
const temp = useTempDirs('metnos-as-of-');
const REPO = join(import.meta.dirname, '..', '..', '..');
const AS_OF = '2026-04-25T08:14:33.881Z';
const PINNED_MS = Date.parse(AS_OF);

// What the code can observe about time, at load and at run.
const CLOCK_PROBE = executorCode(
  `const now = Date.now();
  const spin = performance.now(); while (performance.now() - spin < 30) {}
  const spunMs = performance.now() - spin;
  class Later extends Date {}
  return ok({
    loadedAt, now, spunMs, nowAfterSpin: Date.now(),
    newDate: new Date().getTime(), called: Date(), expectedCalled: new Date(Date.now()).toString(),
    withValue: new Date(5).getTime(), fromParts: new Date(2000, 0, 1, 12).getFullYear(),
    utc: Date.UTC(2000, 0, 1), parse: Date.parse('2000-01-01T00:00:00Z'), length: Date.length, name: Date.name,
    instances: [new Date() instanceof Date, new Date(5) instanceof Date, statSync(ctx.tmpDir).mtime instanceof Date,
      Object.prototype.toString.call(new Date()) === '[object Date]', new Date().constructor === Date],
    subclass: { pinned: new Later().getTime(), own: new Later() instanceof Later, date: new Later() instanceof Date },
    asOf: ctx.asOf ?? null, remainingMs: ctx.remainingMs(),
  });`,
  `import { statSync } from 'node:fs';\nconst loadedAt = Date.now();`,
);

let catalog: Catalog;
let workspace: string;

beforeAll(async () => {
  const root = await temp.make('catalog-');
  workspace = await temp.make('workspace-');
  const key = await generateSigningKey();
  await writeSignedExecutor({
    root,
    name: 'clock_probe',
    key,
    code: CLOCK_PROBE,
    sandboxToml: sandboxToml(),
  });
  catalog = createCatalog({ root, trustedKeys: [key], stateDir: await temp.make('state-') });
  expect((await catalog.load()).quarantined).toEqual([]);
});

function invoker() {
  return createInvoker({ catalog, runner: createProcessRunner() });
}

describe('invalidAsOf', () => {
  it('takes ISO 8601 instants with Z or an offset', () => {
    for (const value of [
      AS_OF,
      '2026-04-25T10:14:33+02:00',
      '2026-04-25T08:14Z',
      '2024-02-29T23:59:59.123456789-05:30',
    ])
      expect(invalidAsOf(value)).toBeUndefined();
  });

  it('refuses local times, dates that do not exist, other shapes and non-strings, saying why', () => {
    expect(invalidAsOf('2026-04-25T08:14:33')).toMatch(/not an ISO 8601 instant/);
    expect(invalidAsOf('2026-04-25')).toMatch(/not an ISO 8601 instant/);
    expect(invalidAsOf('yesterday')).toMatch(/not an ISO 8601 instant/);
    expect(invalidAsOf('1777104873881')).toMatch(/not an ISO 8601 instant/);
    expect(invalidAsOf('2026-02-30T00:00:00Z')).toMatch(/not a real date and time/);
    expect(invalidAsOf('2026-04-25T24:00:00Z')).toMatch(/not a real date and time/);
    expect(invalidAsOf('2026-04-25T08:14:33+25:00')).toMatch(/not a real date and time/);
    expect(invalidAsOf(1777104873881)).toMatch(/not number/);
  });
});

describe('a call pinned to asOf', () => {
  it("sets the code's Date to the instant, at load and at run; everything else about Date is the real one", async () => {
    const result = await invoker().invoke(
      'clock_probe',
      {},
      { workspace, caller: { kind: 'test' }, asOf: AS_OF },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        loadedAt: PINNED_MS,
        now: PINNED_MS,
        nowAfterSpin: PINNED_MS,
        newDate: PINNED_MS,
        called: new Date(PINNED_MS).toString(),
        withValue: 5,
        fromParts: 2000,
        utc: Date.UTC(2000, 0, 1),
        parse: Date.UTC(2000, 0, 1),
        length: 7,
        name: 'Date',
        instances: [true, true, true, true, true],
        subclass: { pinned: PINNED_MS, own: true, date: true },
        asOf: AS_OF,
      },
    });
    const content = (
      result as { content: { called: string; expectedCalled: string; spunMs: number; remainingMs: number } }
    ).content;
    expect(content.called).toBe(content.expectedCalled);
    // performance.now() kept running while Date.now() stood still
    expect(content.spunMs).toBeGreaterThanOrEqual(30);
    // the deadline is real time: remainingMs() measures it with the real clock
    expect(content.remainingMs).toBeGreaterThan(0);
    expect(content.remainingMs).toBeLessThanOrEqual(30_000);
  });

  it('leaves the clock alone without asOf', async () => {
    const before = Date.now();
    const result = await invoker().invoke('clock_probe', {}, { workspace, caller: { kind: 'test' } });
    expect(result.ok).toBe(true);
    const content = (result as { content: Record<string, unknown> }).content;
    expect(content.asOf).toBeNull();
    expect(content.now).toBeGreaterThanOrEqual(before);
    expect(content.now).toBeLessThanOrEqual(Date.now());
    expect(content.nowAfterSpin as number).toBeGreaterThan(content.now as number);
    expect(content.instances).toEqual([true, true, true, true, true]);
  });

  it('refuses an asOf that is not an instant as InvalidInput, from the invoker and from the runner, running nothing', async () => {
    // the invoker refuses before its runner is asked
    const unreachable = createInvoker({
      catalog,
      runner: {
        tier: 'none',
        run: () => {
          throw new Error('the runner was called');
        },
      },
    });
    for (const asOf of ['yesterday', '2026-04-25T08:14:33', '2026-02-30T00:00:00Z']) {
      const result = await unreachable.invoke(
        'clock_probe',
        {},
        { workspace, caller: { kind: 'test' }, asOf },
      );
      expect(result).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
      expect(!result.ok && result.error.message).toContain(asOf);
    }
    const executor = catalog.get('clock_probe')!;
    const report = await createProcessRunner().run({
      executor,
      args: {},
      context: { traceId: randomUUID(), workspace, caller: { kind: 'test' }, asOf: 42 as unknown as string },
    });
    expect(report).toMatchObject({
      exit: 'policy',
      stdout: '',
      result: { ok: false, error: { class: 'InvalidInput' } },
    });
  });

  it('is refused by the harness too when a request carries an unparsable asOf past the host checks', async () => {
    const executor = catalog.get('clock_probe')!;
    const tmpDir = await temp.make('call-');
    const context = {
      traceId: randomUUID(),
      workspace,
      caller: { kind: 'test' as const },
      asOf: 'not a time',
    };
    const report = await runChild({
      command: process.execPath,
      args: ['--disable-warning=ExperimentalWarning', HARNESS_PATH],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpDir },
      cwd: tmpDir,
      input: harnessRequest(
        executor,
        {},
        context,
        { tmpDir },
        expandProfile(executor.manifest.sandbox, { workspace, tmpDir }),
      ),
      timeoutMs: 10_000,
      maxStdoutBytes: 65_536,
      maxStderrBytes: 65_536,
      isolation: { tier: 'none', layers: ['process'] },
    });
    expect(report.result).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput', message: expect.stringContaining('not a time') },
    });
  });
});

describe('the seed time_now under a pinned clock', () => {
  // the real seed, verified with the release key; the plain runner stands in for the sandbox
  let seed: ReturnType<typeof createBirthHarness>;
  beforeAll(async () => {
    seed = createBirthHarness(join(REPO, 'executors', 'time_now'), {
      runner: createProcessRunner({ enforceMinimumTier: false }),
      trustedKeys: [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'))],
    });
  });

  it('answers "now" with exactly asOf, the same a second later', async () => {
    const first = await seed.invoke({}, { asOf: AS_OF });
    expect(first).toMatchObject({ ok: true, content: { utc: AS_OF, epoch_ms: PINNED_MS, timezone: 'UTC' } });
    await sleep(1100);
    const second = await seed.invoke({}, { asOf: AS_OF });
    expect(second.ok && second.content).toEqual(first.ok && first.content);
  });

  it('answers the real time without asOf', async () => {
    const before = Date.now();
    const result = await seed.invoke({});
    expect(result.ok).toBe(true);
    const epoch = (result as { content: { epoch_ms: number } }).content.epoch_ms;
    expect(epoch).toBeGreaterThanOrEqual(before);
    expect(epoch).toBeLessThanOrEqual(Date.now());
  });
});
