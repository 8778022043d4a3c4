// The signature thread's program (see src/signature-thread.ts). The calling thread checks every
// folder itself and writes, for each signature to check, the statement bytes and the signature
// into a slot of shared memory, with the position of the trusted key to use. This thread takes
// the checks in order and answers each in the shared `answers` array: 1 valid, 2 invalid. Before
// a check it claims it with a compare-and-swap, so the calling thread can take the last ones
// itself from the back and never waits for more than the one check in hand here.
// libsodium checks first where its addon loads (sodium-verify.mjs); a signature it refuses is
// checked again by OpenSSL, so what is accepted is exactly what OpenSSL accepts. A key OpenSSL
// refuses, or a check it cannot make, it leaves unanswered: the calling thread then makes it.
// Before the checks, it reads ahead of the calling thread the artefacts every folder has under
// fixed names (the read lane): it claims a folder, reads each file into shared memory with its
// identity, then the code file the manifest names (found with a pattern, see entryFileOf), and
// marks it read; a folder the calling thread reaches first is the calling thread's, and this
// thread skips it. The calling thread hashes whatever it is given, so bytes read wrong
// can only make a folder refused, never let unsigned bytes in.
// node: built-ins and one native addon only, so it starts in a few tens of milliseconds; OpenSSL
// (node:crypto) is loaded only when libsodium refuses a signature, which a good catalog never makes
// it do: loading it costs a fresh thread several milliseconds before its first read.
import { workerData } from 'node:worker_threads';
import { ed25519PublicKey } from './public-key.mjs';
import { artefactPath, entryFileOf, readInto } from './read-artefact.mjs';
import { loadSodiumVerify, sodiumAccepts } from './sodium-verify.mjs';

const { control, slots, slotSize, lengths, claims, answers, keys, mark, lane } = workerData;
const counters = new Int32Array(control);
const bytes = new Uint8Array(slots);
const sizes = new Int32Array(lengths);
const claimed = new Int32Array(claims);
const answered = new Int32Array(answers);
/**
 * Positions in `counters`: checks handed over, whether more can come, checks answered here, and
 * a signal the calling thread bumps after either of the first two changes.
 */
const SUBMITTED = 0;
const CLOSED = 1;
const ANSWERED = 2;
const SIGNAL = 3;
/** The folder of the read lane the calling thread has come to. */
const REACHED = 4;
/** Set once this thread has begun: its first folder read ahead, or its first wait. */
const STARTED = 5;
/** 1 while this thread waits for a signal: only then does the calling thread wake it. */
const WAITING = 6;
const FREE = 0;
/** A folder's state in the read lane: this thread reads it, has read it, or could not. */
const READING = 2;
const READ = 3;
const UNREAD = 4;
const SIGNATURE_BYTES = 64;

const sodiumVerify = loadSodiumVerify();
const rawKeys = keys.map((publicKey) => new Uint8Array(publicKey));
/** Per trusted key, OpenSSL's key object, made at its first use; null where OpenSSL refuses the key. */
const keyObjects = [];

/** OpenSSL's verdict, or undefined when it refuses the key (the check is then left unanswered). */
function opensslAccepts(message, signature, keyIndex) {
  if (keyObjects[keyIndex] === undefined) {
    try {
      keyObjects[keyIndex] = ed25519PublicKey(keys[keyIndex]);
    } catch {
      keyObjects[keyIndex] = null;
    }
  }
  const key = keyObjects[keyIndex];
  return key === null
    ? undefined
    : process.getBuiltinModule('node:crypto').verify(null, message, key, signature);
}

const states = lane && new Int32Array(lane.states);
const table = lane && new Int32Array(lane.table);
const data = lane && Buffer.from(lane.data);
/** Per folder, the code file read: its bytes, its identity and its name (a name length of 0: not read). */
const codes = lane?.codes && new Int32Array(lane.codes);
/** Bytes of `data` used so far; each region is written once and never again. */
let used = 0;
/** The next folder to read. */
let ahead = 0;

/**
 * Room kept in the lane for the fixed-name artefacts of each folder after the one being read: a
 * code file is read into the lane only when it leaves that much, so large code files never push
 * the smaller artefacts of later folders out (the calling thread reads a code file the lane has
 * no room for, as it reads any artefact the lane could not take).
 */
const FIXED_ROOM = 4096;

/**
 * Reads `path` into the lane's free room, leaving `keep` bytes of it; returns where its bytes and
 * its identity are.
 */
function readIntoLane(path, keep = 0) {
  const { bytes, stamp } = readInto(path, (size) =>
    size <= data.length - used - keep ? data.subarray(used, used + size) : undefined,
  );
  const at = used;
  used += bytes.length;
  const written = data.write(stamp, used, 'latin1');
  if (written !== stamp.length) throw new Error('no room for the identity');
  const entry = [at, bytes.length, used, written];
  used += written;
  return entry;
}

/**
 * Reads the code file the manifest read at `entry` names into the lane, with that name. A code
 * file that cannot be read is left to the calling thread; the folder stays read.
 */
function readCode(dir, index, entry) {
  try {
    const name = entryFileOf(data.toString('latin1', entry[0], entry[0] + entry[1]));
    const code = readIntoLane(artefactPath(dir, name), (states.length - index - 1) * FIXED_ROOM);
    const written = data.write(name, used, 'latin1');
    if (written !== name.length) return;
    codes.set([...code, used, written], index * 6);
    used += written;
  } catch {
    // the calling thread reads it, and says what is wrong with it
  }
}

/** Reads folder `index`'s fixed-name artefacts and its code into the lane, unless the calling thread has it. */
function readFolder(index) {
  if (Atomics.compareExchange(states, index, FREE, READING) !== FREE) return;
  const dir = lane.dirs[index];
  const base = index * lane.files.length * 4;
  let state = READ;
  for (let file = 0; file < lane.files.length && state === READ; file++) {
    try {
      const entry = readIntoLane(artefactPath(dir, lane.files[file]));
      table.set(entry, base + file * 4);
      if (file === lane.manifestAt && codes) readCode(dir, index, entry);
    } catch {
      state = UNREAD;
    }
  }
  Atomics.store(states, index, state);
  Atomics.notify(states, index);
}

/** Says this thread has begun, once. */
function started() {
  if (Atomics.load(counters, STARTED) === 1) return;
  Atomics.store(counters, STARTED, 1);
  Atomics.notify(counters, STARTED);
}

let next = 0;
for (;;) {
  // the read lane first, from just past the calling thread's folder: each folder read here is
  // reads the calling thread does not make
  if (states && ahead < states.length) {
    const reached = Atomics.load(counters, REACHED);
    if (ahead <= reached) ahead = reached + 1;
    if (ahead < states.length) {
      readFolder(ahead++);
      started();
      continue;
    }
  }
  // read before the rest, so a change made after it ends the wait below at once
  const signal = Atomics.load(counters, SIGNAL);
  const submitted = Atomics.load(counters, SUBMITTED);
  if (next < submitted) {
    const ticket = next++;
    if (Atomics.compareExchange(claimed, ticket, FREE, mark) !== FREE) continue;
    const keyIndex = sizes[ticket * 2 + 1];
    const rawKey = rawKeys[keyIndex];
    const length = sizes[ticket * 2];
    if (rawKey) {
      const at = ticket * slotSize;
      try {
        const message = bytes.subarray(at, at + length);
        const signature = bytes.subarray(at + length, at + length + SIGNATURE_BYTES);
        const valid =
          sodiumAccepts(sodiumVerify, signature, message, rawKey) ||
          opensslAccepts(message, signature, keyIndex);
        if (valid !== undefined) Atomics.store(answered, ticket, valid ? 1 : 2);
      } catch {
        // left unanswered: the calling thread checks it
      }
    }
    Atomics.add(counters, ANSWERED, 1);
    Atomics.notify(counters, ANSWERED);
    continue;
  }
  if (Atomics.load(counters, CLOSED) === 1) break;
  started();
  // said before the wait: a signal bumped after `signal` was read either ends the wait at once or
  // sees this and wakes it
  Atomics.store(counters, WAITING, 1);
  Atomics.wait(counters, SIGNAL, signal);
  Atomics.store(counters, WAITING, 0);
}
