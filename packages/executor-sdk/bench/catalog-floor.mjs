// The floor of a cold catalog load, measured in a process of its own: parts of the work no
// verifier of signed executors can skip, done as cheaply as this machine allows, and nothing
// else. Which parts is the second argument:
//
// - `sign`: every artefact of every version folder is read with the identity of its file (the
//   five files, as the catalog reads them), and one Ed25519 signature per folder is checked
//   over the statement its manifest.sig claims, as the catalog checks it (libsodium, then
//   OpenSSL for what libsodium refuses);
// - `hash`: that, and the BLAKE3 digest of the four signed artefacts (what binds the bytes to
//   the signature);
// - `parse`: that, and each manifest parsed from TOML (what says what the executor may do), by
//   the catalog's own plain reader, smol-toml where that declines.
//
// Nothing is compared, no schema or profile is checked, no ledger is read or written: this
// is a lower bound, not a verifier.
//
// This thread and one helper thread per other core take the folders in turn from one shared
// counter (an atomic add per folder, nothing else), so the threads end together.
// Prints {"ms": …, "checked": …, "threads": …} as JSON; the clock starts after the imports, as
// in catalog-process.ts.
// Usage: node catalog-floor.mjs <root> <sign|hash|parse> <public key file> <expected count>
import { createPublicKey, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createBLAKE3 } from 'hash-wasm';
import { parse as parseToml } from 'smol-toml';
import { readPlainToml } from '../runtime/plain-toml.mjs';
import { entryFileOf, readArtefactFile } from '../runtime/read-artefact.mjs';
import { loadSodiumVerify, sodiumAccepts } from '../runtime/sodium-verify.mjs';
import { claimedStatement, statementBytes } from '../runtime/statement.mjs';

const FIXED = ['manifest.toml', 'schema.json', 'profile.lock', 'manifest.sig'];

/** Reads and checks folders until none is left; returns how many signatures verified. */
async function checkShare({ dirs, steps, publicKey, next }) {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
  const rawKey = Buffer.from(publicKey, 'base64url');
  const sodium = loadSodiumVerify();
  const hasher = steps === 'sign' ? undefined : await createBLAKE3();
  const digest = (bytes) => {
    hasher.init();
    hasher.update(bytes);
    return hasher.digest('hex');
  };
  const cursor = new Int32Array(next);
  let valid = 0;
  for (let index = Atomics.add(cursor, 0, 1); index < dirs.length; index = Atomics.add(cursor, 0, 1)) {
    const dir = dirs[index];
    const [manifest, schema, lock, signature] = FIXED.map((file) => readArtefactFile(`${dir}/${file}`));
    const text = manifest.bytes.toString('utf8');
    const code = readArtefactFile(`${dir}/${entryFileOf(text)}`);
    if (hasher) for (const artefact of [manifest, code, schema, lock]) digest(artefact.bytes);
    if (steps === 'parse') readPlainToml(text) ?? parseToml(text);
    const file = JSON.parse(signature.bytes.toString('utf8'));
    const statement = statementBytes(claimedStatement(file));
    const bytes = Buffer.from(file.signature, 'base64');
    if (sodiumAccepts(sodium, bytes, statement, rawKey) || verify(null, statement, key, bytes)) valid++;
  }
  return valid;
}

if (!isMainThread) {
  parentPort.postMessage(await checkShare(workerData));
} else {
  const [root, steps, keyFile, expected] = process.argv.slice(2);
  if (!['sign', 'hash', 'parse'].includes(steps)) throw new Error(`unknown steps "${steps}"`);
  const publicKey = Buffer.from(JSON.parse(readFileSync(keyFile, 'utf8')).public_key, 'base64').toString(
    'base64url',
  );
  const start = performance.now();
  const dirs = readdirSync(root)
    .filter((name) => !name.startsWith('.'))
    .map((name) => `${root}/${name}`);
  const threads = Math.max(1, availableParallelism());
  const next = new SharedArrayBuffer(4);
  const helpers = [];
  for (let thread = 1; thread < threads; thread++) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { dirs, steps, publicKey, next } });
    helpers.push(new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject)));
  }
  const here = await checkShare({ dirs, steps, publicKey, next });
  const checked = here + (await Promise.all(helpers)).reduce((sum, count) => sum + count, 0);
  const ms = performance.now() - start;
  if (checked !== Number(expected)) throw new Error(`checked ${checked} of ${expected} signatures`);
  console.log(JSON.stringify({ ms, checked, threads }));
  process.exit(0);
}
