// Catalog verification benchmark: generates N signed executors in a temp dir,
// then prints the time to load and verify the whole catalog and the cost of the
// re-verification done before every invocation. Usage:
//   pnpm bench:catalog [--sizes 100,1000] [--runs 7]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createCatalog,
  generateSigningKey,
  type SignatureBackend,
  statementBytes,
  verifyStatementAsync,
} from '../src/index.ts';
import { writeSignedExecutor } from '../src/test/index.ts';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '100,1000' }, runs: { type: 'string', default: '7' } },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function format(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(1)} ms`;
}

async function dropCaches(): Promise<boolean> {
  try {
    await writeFile('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

const BACKENDS: SignatureBackend[] = ['node', 'webcrypto', 'noble'];
const key = await generateSigningKey();
console.log(`Metnos catalog benchmark — node ${process.version}, ${runs} runs per figure\n`);

// Signature backends on their own, same bytes.
{
  const statement = {
    keyId: key.keyId,
    name: 'bench',
    version: '1.0.0',
    manifest: `blake3:${'a'.repeat(64)}`,
    code: `blake3:${'b'.repeat(64)}`,
    schema: `blake3:${'c'.repeat(64)}`,
    profileLock: `blake3:${'d'.repeat(64)}`,
  };
  const { ed25519 } = await import('@noble/curves/ed25519.js');
  const signature = ed25519.sign(statementBytes(statement), key.secretKey);
  for (const backend of BACKENDS) {
    await verifyStatementAsync(statement, signature, key, backend);
    const samples: number[] = [];
    for (let run = 0; run < 5; run++) {
      const start = performance.now();
      await Promise.all(
        Array.from({ length: 1000 }, () => verifyStatementAsync(statement, signature, key, backend)),
      );
      samples.push((performance.now() - start) / 1000);
    }
    console.log(
      `ed25519 verify, 1,000 at once (${backend.padEnd(9)}): median ${format(quantile(samples, 0.5))} per signature`,
    );
  }
  console.log('');
}

for (const size of sizes) {
  const root = await mkdtemp(join(tmpdir(), `metnos-bench-${size}-`));
  for (let index = 0; index < size; index++) {
    await writeSignedExecutor({ root, name: `bench_${String(index).padStart(5, '0')}`, key });
  }
  const results: Record<string, number[]> = {};
  let coldMs: number | undefined;
  const variants: Array<{ label: string; backend: SignatureBackend }> = [
    { label: 'webcrypto', backend: 'webcrypto' },
    { label: 'node', backend: 'node' },
    { label: 'noble', backend: 'noble' },
  ];
  for (const { label, backend } of variants) {
    const samples: number[] = [];
    for (let run = 0; run < runs + 1; run++) {
      const cold = label === 'webcrypto' && run === 0 && (await dropCaches());
      const stateDir = await mkdtemp(join(tmpdir(), 'metnos-bench-state-'));
      const catalog = createCatalog({ root, trustedKeys: [key], stateDir, backend });
      const start = performance.now();
      const report = await catalog.load();
      const elapsed = performance.now() - start;
      if (report.loaded.length !== size)
        throw new Error(`expected ${size} executors, loaded ${report.loaded.length}`);
      if (cold) coldMs = elapsed;
      else if (run > 0) samples.push(elapsed);
      await rm(stateDir, { recursive: true, force: true });
    }
    results[label] = samples;
  }
  console.log(`${size} executors:`);
  if (coldMs !== undefined) console.log(`  load + verify, page cache dropped first: ${format(coldMs)}`);
  for (const [backend, samples] of Object.entries(results)) {
    console.log(
      `  load + verify (${backend.padEnd(9)}): median ${format(quantile(samples, 0.5))}  p99 ${format(quantile(samples, 0.99))}  (${format(quantile(samples, 0.5) / size)} per executor)`,
    );
  }
  const base = quantile(results.webcrypto!, 0.5);
  console.log(
    `  against webcrypto (the default): node ${(quantile(results.node!, 0.5) / base).toFixed(2)}×, noble ${(quantile(results.noble!, 0.5) / base).toFixed(2)}×`,
  );

  // Re-verification before each invocation.
  const stateDir = await mkdtemp(join(tmpdir(), 'metnos-bench-state-'));
  const catalog = createCatalog({ root, trustedKeys: [key], stateDir });
  await catalog.load();
  const executor = catalog.get('bench_00000')!;
  const cheap: number[] = [];
  for (let index = 0; index < 2000; index++) {
    const start = performance.now();
    await catalog.reverify(executor);
    cheap.push(performance.now() - start);
  }
  const { verifyExecutor } = await import('../src/verify.ts');
  const full: number[] = [];
  for (let index = 0; index < 200; index++) {
    const start = performance.now();
    await verifyExecutor(executor.dir, { trustedKeys: [key] });
    full.push(performance.now() - start);
  }
  console.log(
    `  re-verify per invocation, files unchanged: median ${format(quantile(cheap, 0.5))}  p99 ${format(quantile(cheap, 0.99))}`,
  );
  console.log(
    `  full re-check of one executor (files changed): median ${format(quantile(full, 0.5))}  p99 ${format(quantile(full, 0.99))}`,
  );
  console.log(
    `  target 1,000 executors ≤ 200 ms: ${size === 1000 ? (base <= 200 ? 'met' : 'MISSED') : 'n/a'}\n`,
  );
  await rm(stateDir, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
}
