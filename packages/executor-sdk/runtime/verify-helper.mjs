// The helper thread of a catalog verification (src/verify-worker.ts); node: built-ins and
// the shared artefact reader only, so it is running within a few milliseconds. Two jobs:
//
// - Read ahead. It walks the version folders in order and reads the fixed artefacts of each
//   folder it claims, with readArtefactFile, as the calling thread reads the rest. A folder
//   is claimed with a compare-and-swap on a shared array, so the calling thread and this one
//   never read the same folder: the calling thread reads the folders it reaches first itself.
// - Check signatures. Each batch is checked with OpenSSL's Ed25519 (RFC 8032 rules, the
//   `node` backend) and answered with one byte per signature: 1 valid, 0 not.
//
// Anything it cannot read it reports as `failed`; the calling thread then reads that file
// itself, so every error a user sees comes from one place.
import { createPublicKey, verify } from 'node:crypto';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { readArtefactFile } from './read-artefact.mjs';

const keys = new Map();
function keyOf(raw) {
  const x = Buffer.from(raw).toString('base64url');
  let key = keys.get(x);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    keys.set(x, key);
  }
  return key;
}

parentPort.on('message', ({ first, items }) => {
  const valid = new Uint8Array(items.length);
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    try {
      valid[index] = verify(null, item.bytes, keyOf(item.key), item.signature) ? 1 : 0;
    } catch {
      valid[index] = 0;
    }
  }
  parentPort.postMessage({ kind: 'signatures', first, valid });
});

function read(path, transfer) {
  try {
    const artefact = readArtefactFile(path);
    transfer.push(artefact.bytes.buffer);
    return artefact;
  } catch {
    return { failed: true };
  }
}

const { dirs, files, claims } = workerData;
const claimed = new Int32Array(claims);
let batch = [];
let transfer = [];
for (let index = 0; index < dirs.length; index++) {
  if (Atomics.compareExchange(claimed, index, 0, 2) !== 0) continue;
  batch.push({ index, artefacts: files.map((file) => read(join(dirs[index], file), transfer)) });
  if (batch.length === 8) {
    parentPort.postMessage({ kind: 'artefacts', batch }, transfer);
    batch = [];
    transfer = [];
  }
}
parentPort.postMessage({ kind: 'artefacts', batch, done: true }, transfer);
