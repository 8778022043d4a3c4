// Per-call overhead of each isolation tier against a bare `node harness.mjs`
// child (the SDK's plain process runner), measured in the same run with the
// calls interleaved so background noise falls on every variant alike; the
// full tier through the warm pool (a process started ahead of each call); and
// where a cold start's time goes.
//   pnpm bench:sandbox [--iterations 60]
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createProcessRunner,
  type ExecutorRunner,
  expandProfile,
  generateSigningKey,
  HARNESS_PATH,
  harnessCall,
  harnessPreload,
  type InvocationContext,
  verifyExecutor,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createSandboxRunner, probeHost, type SandboxRunner } from '../src/index.ts';

const flag = process.argv.indexOf('--iterations');
const iterations = flag > 0 ? Number(process.argv[flag + 1]) : 60;
const warmup = 5;

const root = await mkdtemp(join(tmpdir(), 'metnos-sandbox-bench-'));
const workspace = join(root, 'workspace');
await mkdir(workspace);
await writeFile(join(workspace, 'note.txt'), 'hello');
const key = await generateSigningKey();
const { dir } = await writeSignedExecutor({
  root,
  name: 'bench_read',
  key,
  code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import { readFileSync } from 'node:fs';
export default defineExecutor({ run(args: Record<string, unknown>, ctx: { workspace: string }) { return ok({ text: readFileSync(ctx.workspace + '/note.txt', 'utf8') }); } });
`,
  sandboxToml: `[sandbox]
profile = "bench"
min_tier = "none"
max_duration_ms = 10000
max_memory_mb = 128
max_output_bytes = 65536

[sandbox.fs]
read = ["$WORKSPACE"]
write = []
`,
});
const executor = await verifyExecutor(dir, { trustedKeys: [key] });
const context: InvocationContext = { traceId: 'bench', workspace, caller: { kind: 'test' } };

const host = probeHost();
const variants: Array<{ name: string; runner: ExecutorRunner }> = [
  { name: 'bare node (SDK plain runner)', runner: createProcessRunner({ enforceMinimumTier: false }) },
];
for (const tier of ['basic', 'standard', 'full'] as const) {
  if (!host.tiers[tier].available) {
    console.log(`tier ${tier}: unavailable on this host (${host.tiers[tier].missing.join('; ')})`);
    continue;
  }
  variants.push({ name: `sandbox tier ${tier}`, runner: createSandboxRunner({ tier, audit: false }) });
}

/** Waits until the pool has a process waiting, so the next call is handed one and none is starting. */
async function poolReady(runner: SandboxRunner): Promise<void> {
  for (let tries = 0; tries < 2000; tries++) {
    const stats = runner.poolStats()!;
    if (stats.waiting >= 1 && stats.starting === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the pool never got ready: ${JSON.stringify(runner.poolStats())}`);
}
const pooled = host.tiers.full.available
  ? createSandboxRunner({ tier: 'full', audit: false, pool: { size: 1 } })
  : undefined;
const POOLED = 'full tier, warm pool';
if (pooled) variants.push({ name: POOLED, runner: pooled });

// the pool starts an executor's processes once it has been called
await pooled?.run({ executor, args: {}, context });
const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
for (let round = 0; round < warmup + iterations; round++) {
  for (const variant of variants) {
    // the pool's next process starts after each call: it is ready, and nothing else runs, before timing
    if (variant.runner === pooled) await poolReady(pooled);
    const started = performance.now();
    const report = await variant.runner.run({ executor, args: {}, context });
    const elapsed = performance.now() - started;
    if (!report.result.ok)
      throw new Error(`${variant.name}: ${report.result.error.class}: ${report.result.error.message}`);
    if (
      variant.runner === pooled &&
      !report.result.isolation?.notes?.some((note) => note.includes('warm pool'))
    )
      throw new Error('the pooled call did not get a warm process');
    if (round >= warmup) samples.get(variant.name)!.push(elapsed);
    if (variant.runner === pooled) await poolReady(pooled);
  }
}
// back to back: each call starts right after the last, while the pool's next process is still starting
const backToBack: number[] = [];
if (pooled) {
  await poolReady(pooled);
  for (let call = 0; call < iterations; call++) {
    const started = performance.now();
    const report = await pooled.run({ executor, args: {}, context });
    backToBack.push(performance.now() - started);
    if (!report.result.ok) throw new Error(`back to back: ${report.result.error.class}`);
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};
const baseline = quantile(samples.get(variants[0]!.name)!, 0.5);
console.log(
  `\n${iterations} calls per variant (after ${warmup} warm-up), node ${process.version}, uid ${process.getuid?.()}, cgroups: ${host.cgroups ? `v${host.cgroups.version}` : 'none'}`,
);
console.log(
  `${'variant'.padEnd(32)} ${'median ms'.padStart(10)} ${'p99 ms'.padStart(10)} ${'× bare'.padStart(8)}`,
);
for (const variant of variants) {
  const values = samples.get(variant.name)!;
  const median = quantile(values, 0.5);
  console.log(
    `${variant.name.padEnd(32)} ${median.toFixed(1).padStart(10)} ${quantile(values, 0.99).toFixed(1).padStart(10)} ${(median / baseline).toFixed(2).padStart(8)}`,
  );
}
if (backToBack.length > 0) {
  const median = quantile(backToBack, 0.5);
  console.log(
    `${'full tier, pool, back to back'.padEnd(32)} ${median.toFixed(1).padStart(10)} ${quantile(backToBack, 0.99).toFixed(1).padStart(10)} ${(median / baseline).toFixed(2).padStart(8)}`,
  );
  console.log(
    '  (no pause between calls: each takes the process started after the call before, often still starting)',
  );
}
const full = samples.get('sandbox tier full');
if (full) {
  const ratio = quantile(full, 0.5) / baseline;
  console.log(
    `\ntarget: full tier ≤ 1.5× bare at the median: ${ratio <= 1.5 ? 'met' : `missed by ${((ratio - 1.5) * baseline).toFixed(1)} ms`} (${ratio.toFixed(2)}×)`,
  );
}
const warmFull = samples.get(POOLED);
if (warmFull) {
  const median = quantile(warmFull, 0.5);
  console.log(
    `target: full tier with the warm pool ≤ 10 ms at the median: ${median <= 10 ? 'met' : 'MISSED'} (${median.toFixed(1)} ms, ${(median / baseline).toFixed(2)}× bare cold)`,
  );
}
pooled?.close();
await coldStartBreakdown();
// the policy path alone: a refused call (no process starts)
const refusing = createSandboxRunner({ audit: false });
const refusals: number[] = [];
for (let round = 0; round < 200; round++) {
  const started = performance.now();
  const report = await refusing.run({ executor, args: { path: '/etc/passwd' }, context });
  refusals.push(performance.now() - started);
  if (report.result.ok || report.result.error.class !== 'PolicyViolation')
    throw new Error('expected a PolicyViolation');
}
console.log(
  `policy refusal before start (no process): median ${quantile(refusals, 0.5).toFixed(2)} ms, p99 ${quantile(refusals, 0.99).toFixed(2)} ms`,
);
await rm(root, { recursive: true, force: true });

/** Wall time of one process from spawn to exit, with `input` on stdin. */
function timeProcess(args: string[], input: string, env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { PATH: '/usr/bin:/bin', HOME: root, ...env },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - started));
    child.stdin.end(input);
  });
}

/**
 * Where a cold start's time goes, each step measured as its own process
 * (interleaved, medians): Node alone; Node with the harness loaded and
 * prepared (a warm process that is told nothing more); a whole call with the
 * code as the host now sends it (JavaScript stripped on the host); the same
 * call with the TypeScript source for Node to strip in the process (as before);
 * the call with Node's compile cache warm.
 */
async function coldStartBreakdown(): Promise<void> {
  const tmpDir = join(root, 'tmp');
  await mkdir(tmpDir, { recursive: true });
  const profile = expandProfile(executor.manifest.sandbox, { workspace, tmpDir });
  const callPart = harnessCall(executor, {}, context, { tmpDir, workspace }, profile);
  const stripped = JSON.stringify({ ...harnessPreload(executor), ...callPart });
  const source = JSON.stringify({
    ...harnessPreload(executor),
    code: executor.code.toString('utf8'),
    format: 'module-typescript',
    ...callPart,
  });
  const warmOnly = `${JSON.stringify(harnessPreload(executor, { warm: true }))}\n`;
  const cache = join(root, 'compile-cache');
  const flags = ['--disable-warning=ExperimentalWarning', '--max-old-space-size=128'];
  const steps: Array<[string, () => Promise<number>]> = [
    ['node -e 0', () => timeProcess([...flags, '-e', '0'], '')],
    ['harness loaded and prepared, no call', () => timeProcess([...flags, HARNESS_PATH], warmOnly)],
    ['whole call, JavaScript from the host', () => timeProcess([...flags, HARNESS_PATH], stripped)],
    ['whole call, TypeScript stripped in process', () => timeProcess([...flags, HARNESS_PATH], source)],
    [
      'whole call, JavaScript, compile cache',
      () => timeProcess([...flags, HARNESS_PATH], stripped, { NODE_COMPILE_CACHE: cache }),
    ],
  ];
  const times = new Map<string, number[]>(steps.map(([name]) => [name, []]));
  for (let round = 0; round < warmup + iterations; round++) {
    for (const [name, step] of steps) {
      const elapsed = await step();
      if (round >= warmup) times.get(name)!.push(elapsed);
    }
  }
  const median = (name: string) => quantile(times.get(name)!, 0.5);
  const node = median('node -e 0');
  const prepared = median('harness loaded and prepared, no call');
  const call = median('whole call, JavaScript from the host');
  const typescript = median('whole call, TypeScript stripped in process');
  const cached = median('whole call, JavaScript, compile cache');
  const fullCold = samples.get('sandbox tier full');
  console.log(`\nwhere a cold start goes (${iterations} processes each, medians, no sandbox unless named):`);
  console.log(`  Node starting and exiting (node -e 0)              ${node.toFixed(1).padStart(7)} ms`);
  console.log(
    `  + the harness's modules, hooks and preparation      ${(prepared - node).toFixed(1).padStart(7)} ms`,
  );
  console.log(
    `  + the call: request, code import, run, result       ${(call - prepared).toFixed(1).padStart(7)} ms`,
  );
  console.log(`  = a whole call, bare                                ${call.toFixed(1).padStart(7)} ms`);
  console.log(
    `  type stripping inside the process (saved: done on the host now) ${(typescript - call).toFixed(1).padStart(7)} ms`,
  );
  console.log(
    `  Node's compile cache for the harness (saves)       ${(call - cached).toFixed(1).padStart(7)} ms`,
  );
  if (fullCold)
    console.log(
      `  the full tier's layers around it (cold full − bare call) ${(quantile(fullCold, 0.5) - call).toFixed(1).padStart(7)} ms`,
    );
}
