// Per-call overhead of each isolation tier against a bare `node harness.mjs`
// child (the SDK's plain process runner), measured in the same run with the
// calls interleaved so background noise falls on every variant alike.
//   pnpm bench:sandbox [--iterations 60]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createProcessRunner,
  type ExecutorRunner,
  generateSigningKey,
  type InvocationContext,
  verifyExecutor,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createSandboxRunner, probeHost } from '../src/index.ts';

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
export default defineExecutor({ run(args, ctx) { return ok({ text: readFileSync(ctx.workspace + '/note.txt', 'utf8') }); } });
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

const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
for (let round = 0; round < warmup + iterations; round++) {
  for (const variant of variants) {
    const started = performance.now();
    const report = await variant.runner.run({ executor, args: {}, context });
    const elapsed = performance.now() - started;
    if (!report.result.ok)
      throw new Error(`${variant.name}: ${report.result.error.class}: ${report.result.error.message}`);
    if (round >= warmup) samples.get(variant.name)!.push(elapsed);
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
const full = samples.get('sandbox tier full');
if (full) {
  const ratio = quantile(full, 0.5) / baseline;
  console.log(
    `\ntarget: full tier ≤ 1.5× bare at the median: ${ratio <= 1.5 ? 'met' : `missed by ${((ratio - 1.5) * baseline).toFixed(1)} ms`} (${ratio.toFixed(2)}×)`,
  );
}
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
