// Catalog verification benchmark: generates N signed executors in a temp dir,
// then prints the time to load and verify the whole catalog, at the first load
// (nothing known) and at a restart (state and signature cache from the previous
// run), in this process and in fresh processes, and the cost of the
// re-verification done before every invocation. Beside the fresh first load it
// measures, in the same rounds, the floor of that load on this machine (see
// catalog-floor.mjs): what reading, hashing, signature checks and manifest
// parsing alone cost, with nothing else. Usage:
//   pnpm bench:catalog [--sizes 100,1000] [--runs 7]
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import {
  createCatalog,
  DEFAULT_SIGNATURE_BACKEND,
  generateSigningKey,
  openVerificationCache,
  type SignatureBackend,
  serializePublicKey,
  statementBytes,
  verifyExecutor,
  verifyStatementAsync,
} from '../src/index.ts';
import { writeSignedExecutor } from '../src/test/index.ts';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '100,1000' }, runs: { type: 'string', default: '7' } },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);
const TARGET_MS = 200;
const run = promisify(execFile);

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function format(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(1)} ms`;
}

function line(label: string, samples: number[], size: number): string {
  const median = quantile(samples, 0.5);
  return `  ${label.padEnd(44)} median ${format(median).padStart(9)}  p99 ${format(quantile(samples, 0.99)).padStart(9)}  (${format(median / size)} per executor)`;
}

async function dropCaches(): Promise<boolean> {
  try {
    await writeFile('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

const work = await mkdtemp(join(tmpdir(), 'metnos-bench-'));
const key = await generateSigningKey();
const keyFile = join(work, 'bench.pub');
await writeFile(keyFile, serializePublicKey(key));
const secretFile = join(work, 'verification-cache.secret');
console.log(`Metnos catalog benchmark — node ${process.version}, ${runs} runs per figure\n`);

// Signature backends on their own, same bytes.
// The default first; the others are compared with it.
const BACKENDS: SignatureBackend[] = [
  DEFAULT_SIGNATURE_BACKEND,
  ...(['node', 'webcrypto', 'noble'] as const).filter((backend) => backend !== DEFAULT_SIGNATURE_BACKEND),
];
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
    for (let index = 0; index < 5; index++) {
      const start = performance.now();
      await Promise.all(
        Array.from({ length: 1000 }, () => verifyStatementAsync(statement, signature, key, backend)),
      );
      samples.push((performance.now() - start) / 1000);
    }
    console.log(
      `ed25519 verify, 1,000 at once (${backend.padEnd(9)}): median ${format(quantile(samples, 0.5))} per signature (wall, both cores)`,
    );
  }
  console.log('');
}

/**
 * What a fresh process loads: the built package (`dist/`, what `metnos` and every project
 * that installs @metnos/executor-sdk run) or the TypeScript source, stripped by Node as it
 * loads (what this repository's tests run).
 */
type Build = 'dist' | 'source';
const DIST_ENTRY = join(import.meta.dirname, '..', 'dist', 'index.js');
if (!existsSync(DIST_ENTRY))
  throw new Error(`${DIST_ENTRY} is missing: run pnpm --filter @metnos/executor-sdk build`);

/** One load in a fresh process; returns its load time. */
async function loadInProcess(
  root: string,
  stateDir: string,
  cache: boolean,
  size: number,
  build: Build = 'dist',
): Promise<number> {
  const { stdout } = await run(process.execPath, [
    ...(build === 'source' ? ['--conditions=metnos-source'] : []),
    '--disable-warning=ExperimentalWarning',
    join(import.meta.dirname, 'catalog-process.ts'),
    root,
    stateDir,
    keyFile,
    cache ? 'cache' : 'nocache',
    secretFile,
    String(size),
    build === 'dist' ? DIST_ENTRY : '../src/index.ts',
  ]);
  return (JSON.parse(stdout) as { ms: number }).ms;
}

/** The parts of a cold load that the floor measures, from the least; see catalog-floor.mjs. */
const FLOORS = [
  ['sign', 'read every artefact + its Ed25519 check'],
  ['hash', '… + BLAKE3 of the four signed artefacts'],
  ['parse', '… + parse the manifest (TOML)'],
] as const;
type Floor = (typeof FLOORS)[number][0];

/** One floor in a fresh process; returns its time. */
async function floorInProcess(root: string, steps: Floor, size: number): Promise<number> {
  const { stdout } = await run(process.execPath, [
    join(import.meta.dirname, 'catalog-floor.mjs'),
    root,
    steps,
    keyFile,
    String(size),
  ]);
  return (JSON.parse(stdout) as { ms: number }).ms;
}

const verdicts: string[] = [];
for (const size of sizes) {
  const root = join(work, `catalog-${size}`);
  for (let index = 0; index < size; index++) {
    await writeSignedExecutor({ root, name: `bench_${String(index).padStart(5, '0')}`, key });
  }
  console.log(`${size} executors:`);

  // First load: no ledger, no lifecycle, no cached signature; every signature is checked.
  // Backends take turns within each round, so none profits from code the others warmed up.
  const first: Record<string, number[]> = Object.fromEntries(BACKENDS.map((backend) => [backend, []]));
  let coldMs: number | undefined;
  for (let round = 0; round < runs + 1; round++) {
    for (const backend of BACKENDS) {
      const cold = backend === BACKENDS[0] && round === 0 && (await dropCaches());
      const stateDir = await mkdtemp(join(work, 'state-'));
      const catalog = createCatalog({ root, trustedKeys: [key], stateDir, backend });
      const start = performance.now();
      const report = await catalog.load();
      const elapsed = performance.now() - start;
      if (report.loaded.length !== size)
        throw new Error(`expected ${size} executors, loaded ${report.loaded.length}`);
      if (cold) coldMs = elapsed;
      else if (round > 0) first[backend]!.push(elapsed);
      await rm(stateDir, { recursive: true, force: true });
    }
  }
  console.log(' first load (nothing known: every signature checked)');
  if (coldMs !== undefined)
    console.log(`  ${`page cache dropped first (${BACKENDS[0]})`.padEnd(44)} ${format(coldMs)}`);
  for (const backend of BACKENDS) console.log(line(`in this process, ${backend}`, first[backend]!, size));
  const base = quantile(first[DEFAULT_SIGNATURE_BACKEND]!, 0.5);
  console.log(
    `  ${`against ${DEFAULT_SIGNATURE_BACKEND} (the default)`.padEnd(44)} ${BACKENDS.slice(1)
      .map((backend) => `${backend} ${(quantile(first[backend]!, 0.5) / base).toFixed(2)}×`)
      .join(', ')}`,
  );
  const firstProcess: number[] = [];
  const firstSource: number[] = [];
  const floors: Record<Floor, number[]> = { sign: [], hash: [], parse: [] };
  for (let index = 0; index < runs; index++) {
    // the two builds and the floors take turns, so none profits from a quieter moment
    for (const build of ['dist', 'source'] as const) {
      const stateDir = await mkdtemp(join(work, 'state-'));
      (build === 'dist' ? firstProcess : firstSource).push(
        await loadInProcess(root, stateDir, false, size, build),
      );
      await rm(stateDir, { recursive: true, force: true });
    }
    for (const [steps] of FLOORS) floors[steps].push(await floorInProcess(root, steps, size));
  }
  console.log(line('in a fresh process each time (built, dist/)', firstProcess, size));
  console.log(line('in a fresh process each time (TS source)', firstSource, size));
  console.log(`  the floor, in a fresh process on all ${availableParallelism()} cores, nothing else:`);
  for (const [steps, label] of FLOORS) console.log(line(`  ${label}`, floors[steps], size));
  const floorMs = quantile(floors.parse, 0.5);
  console.log(
    `  ${'fresh first load (dist/) against the last floor'.padEnd(44)} ${(quantile(firstProcess, 0.5) / floorMs).toFixed(2)}×`,
  );

  // Restart: the ledger, lifecycle and signature cache the previous start wrote.
  // Every artefact is still read, hashed and compared; cached signatures skip Ed25519 only.
  const stateDir = await mkdtemp(join(work, 'state-'));
  {
    const cache = await openVerificationCache({
      file: join(stateDir, 'verification-cache.json'),
      secretFile,
    });
    await createCatalog({ root, trustedKeys: [key], stateDir, verificationCache: cache }).load();
  }
  const restart: number[] = [];
  for (let index = 0; index < runs + 1; index++) {
    const start = performance.now();
    const cache = await openVerificationCache({
      file: join(stateDir, 'verification-cache.json'),
      secretFile,
    });
    const catalog = createCatalog({ root, trustedKeys: [key], stateDir, verificationCache: cache });
    const report = await catalog.load();
    const elapsed = performance.now() - start;
    if (report.loaded.length !== size || cache.hits !== size) {
      throw new Error(`restart: loaded ${report.loaded.length}, ${cache.hits} cached of ${size}`);
    }
    if (index > 0) restart.push(elapsed);
  }
  const restartProcess: number[] = [];
  for (let index = 0; index < runs; index++)
    restartProcess.push(await loadInProcess(root, stateDir, true, size));
  console.log(
    ' restart (state and signature cache from the previous start; every artefact re-read and re-hashed)',
  );
  console.log(line('in this process', restart, size));
  console.log(line('in a fresh process each time (built, dist/)', restartProcess, size));

  // Re-verification before each invocation.
  const catalog = createCatalog({ root, trustedKeys: [key], stateDir });
  const loaded = await catalog.load();
  const executor = catalog.get('bench_00000');
  if (!executor)
    throw new Error(
      `bench_00000 not loaded: ${JSON.stringify(loaded.quarantined.slice(0, 2))}, ${loaded.loaded.length} loaded`,
    );
  const cheap: number[] = [];
  for (let index = 0; index < 2000; index++) {
    const start = performance.now();
    await catalog.reverify(executor);
    cheap.push(performance.now() - start);
  }
  const full: number[] = [];
  for (let index = 0; index < 200; index++) {
    const start = performance.now();
    await verifyExecutor(executor.dir, { trustedKeys: [key] });
    full.push(performance.now() - start);
  }
  console.log(' per invocation');
  console.log(
    `  re-verify, files unchanged: median ${format(quantile(cheap, 0.5))}  p99 ${format(quantile(cheap, 0.99))}`,
  );
  console.log(
    `  full re-check of one executor (files changed): median ${format(quantile(full, 0.5))}  p99 ${format(quantile(full, 0.99))}\n`,
  );
  if (size === 1000) {
    const verdict = (ms: number) => `${format(ms)} ${ms <= TARGET_MS ? 'met' : 'MISSED'}`;
    verdicts.push(
      `target 1,000 executors ≤ ${TARGET_MS} ms (medians): first load ${verdict(base)}, ` +
        `restart ${verdict(quantile(restart, 0.5))}; in fresh processes: first ${verdict(quantile(firstProcess, 0.5))}, ` +
        `restart ${verdict(quantile(restartProcess, 0.5))}; ` +
        `the floor on this machine (read + Ed25519 + BLAKE3 + TOML, nothing else) ${format(floorMs)}`,
    );
  }
  await rm(root, { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
}
for (const verdict of verdicts) console.log(verdict);
await rm(work, { recursive: true, force: true });
