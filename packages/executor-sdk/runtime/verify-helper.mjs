// The helper thread of a catalog verification (src/verify-worker.ts); node: built-ins and two
// small shared modules only, so it is running within a few milliseconds. It walks the version
// folders from the first, and for each folder it claims:
//
// - reads the fixed artefacts and the code file its manifest names (found with a pattern on
//   the text: the calling thread parses the manifest and reads the code itself when the name
//   differs), each with readArtefactFile, so every byte comes with the identity of its file;
// - checks the signature of manifest.sig over the statement its fields claim, with OpenSSL's
//   Ed25519 (RFC 8032 rules, the `node` backend) and the first trusted key of that id.
//
// The calling thread claims folders from the last one at the same time, with a compare-and-swap
// on a shared array, so no folder is done twice; they meet where their work balances. Other
// helpers, on other cores, walk from the first too: a folder another one claimed is skipped.
// Each batch goes on this helper's port, then the shared signal is bumped so a waiting caller
// wakes.
// Anything it cannot read it reports as `failed`, and a signature it cannot check it leaves
// unchecked: the calling thread then does that itself, so every error comes from one place.
import { verify } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { ed25519PublicKey } from './public-key.mjs';
import { entryFileOf, readArtefactFile } from './read-artefact.mjs';
import { claimedStatement, statementBytes } from './statement.mjs';

const { dirs, files, manifestFile, signatureFile, checkSignatures, claims, signal, port, keys, mark } =
  workerData;
const manifestAt = files.indexOf(manifestFile);
const signatureAt = files.indexOf(signatureFile);
const claimed = new Int32Array(claims);
const bumps = new Int32Array(signal);
const FREE = 0;
/** This helper's mark in the shared array: each helper has its own, so its claims are known as its. */
const HELPER = mark;

/** Key id → [its position in the trusted list, the key]: the first key of an id, as the caller picks it. */
const trusted = new Map();
keys.forEach((key, position) => {
  if (trusted.has(key.keyId)) return;
  try {
    trusted.set(key.keyId, [position, ed25519PublicKey(key.publicKey)]);
  } catch {
    // a key OpenSSL refuses: its signatures are left to the calling thread
  }
});

function read(path) {
  try {
    return readArtefactFile(path);
  } catch {
    return undefined;
  }
}

/** The signature check of one manifest.sig, or undefined when it cannot be made here. */
function checkSignature(artefact) {
  if (!artefact) return undefined;
  try {
    const file = JSON.parse(artefact.bytes.toString('utf8'));
    const key = trusted.get(file.key_id);
    if (!key || typeof file.signature !== 'string') return undefined;
    const statement = statementBytes(claimedStatement(file));
    const signature = Buffer.from(file.signature, 'base64');
    return { statement, signature, keyIndex: key[0], valid: verify(null, statement, key[1], signature) };
  } catch {
    return undefined;
  }
}

/**
 * The folders read since the last message. Their bytes leave together in one buffer that is
 * handed over, not copied: one allocation for the calling thread to take per batch, however
 * many files are in it. Each part is described by [offset, length] in that buffer.
 */
let batch = [];
function send(done) {
  let size = 0;
  for (const item of batch) for (const part of item.parts) size += part?.length ?? 0;
  const arena = new Uint8Array(size);
  let offset = 0;
  const place = (bytes) => {
    arena.set(bytes, offset);
    offset += bytes.length;
    return [offset - bytes.length, bytes.length];
  };
  const items = batch.map(({ index, artefacts, code, entry, check }) => ({
    index,
    artefacts: artefacts.map((artefact) => (artefact ? [...place(artefact.bytes), artefact.stamp] : null)),
    code: code ? [...place(code.bytes), code.stamp, entry] : null,
    check: check
      ? {
          statement: place(check.statement),
          signature: place(check.signature),
          keyIndex: check.keyIndex,
          valid: check.valid,
        }
      : null,
  }));
  port.postMessage({ arena: arena.buffer, items, done }, [arena.buffer]);
  batch = [];
  Atomics.add(bumps, 0, 1);
  Atomics.notify(bumps, 0);
}

for (let index = 0; index < dirs.length; index++) {
  if (Atomics.compareExchange(claimed, index, FREE, HELPER) !== FREE) continue;
  const dir = dirs[index];
  const artefacts = files.map((file) => read(`${dir}/${file}`));
  const manifest = artefacts[manifestAt];
  const entry = manifest ? entryFileOf(manifest.bytes.toString('utf8')) : 'main.ts';
  const code = read(`${dir}/${entry}`);
  const check = checkSignatures ? checkSignature(artefacts[signatureAt]) : undefined;
  const parts = [
    ...artefacts.map((artefact) => artefact?.bytes),
    code?.bytes,
    check?.statement,
    check?.signature,
  ];
  batch.push({ index, artefacts, code, entry, check, parts });
  // small batches: the calling thread starts on the first folders while the rest are read
  if (batch.length === 4) send(false);
}
send(true);
