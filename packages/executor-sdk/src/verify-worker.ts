import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PublicKey } from './keys.ts';
import { verifySignedBytesAsync } from './signature.ts';

/** The helper thread's program (see runtime/verify-helper.mjs); beside `dist/` and `src/` alike. */
const HELPER_PROGRAM = new URL('../runtime/verify-helper.mjs', import.meta.url);

/** How many signatures go in one message: small enough that the helper starts on them early. */
const BATCH = 16;

/** Below this many folders a helper thread costs more than it saves. */
export const VERIFY_WORKER_MIN = 64;

/** One artefact as the helper read it: its bytes and the identity of the file they came from. */
export interface ReadArtefact {
  bytes: Buffer;
  stamp: string;
}

interface PendingCheck {
  bytes: Uint8Array;
  signature: Uint8Array;
  key: PublicKey;
  resolve: (valid: boolean) => void;
}

/** What the helper did and what fell back to the calling thread; see {@link VerifyWorker.stats}. */
export interface VerifyWorkerStats {
  /** Folders whose artefacts the helper read and delivered. */
  read: number;
  /** Signatures the helper checked. */
  checked: number;
  /** Signatures checked on the calling thread because the helper had stopped. */
  checkedHere: number;
  /** Whether the helper stopped before it was closed (it crashed or broke the protocol). */
  failed: boolean;
}

/** The helper thread of one {@link verifyExecutors} run; see {@link createVerifyWorker}. */
export interface VerifyWorker {
  /**
   * The fixed artefacts of folder `index` (file name → artefact) when the helper read them,
   * or undefined when the calling thread is to read them itself. An artefact the helper
   * could not read is left out, so the caller reads it and reports the error.
   */
  artefacts(index: number): Promise<Map<string, ReadArtefact> | undefined> | undefined;
  /** Resolves to whether `signature` over `bytes` verifies with `key`. Never rejects. */
  check(bytes: Uint8Array, signature: Uint8Array, key: PublicKey): Promise<boolean>;
  /** Stops the helper once every check asked so far has its answer. */
  close(): Promise<void>;
  stats(): VerifyWorkerStats;
}

/** A claim in the shared array: nobody yet, the calling thread, the helper. */
const FREE = 0;
const MINE = 1;
const HELPER = 2;

/**
 * Starts a helper thread for verifying `dirs`: it reads the fixed artefacts `files` of the
 * folders ahead of the calling thread and checks signatures, each on a core of its own,
 * while the calling thread parses and hashes. On a machine with few cores this beats
 * libuv's pool (four threads, one job each, all competing with the calling thread for
 * the same cores). Returns undefined where there is only one core.
 *
 * Fails closed: when the helper cannot start, stops early or answers out of turn, whatever
 * it did not deliver is read or checked on the calling thread; a signature is never taken
 * as valid without a check, and bytes are only ever the ones read from the file with their
 * own identity. `options.program` replaces the helper's program (tests use it to make one
 * that crashes or misbehaves).
 *
 * @example
 * const worker = createVerifyWorker(dirs, ['manifest.toml', 'manifest.sig']);
 * const artefacts = await worker?.artefacts(0); // undefined: read them here
 * await worker?.close();
 */
export function createVerifyWorker(
  dirs: readonly string[],
  files: readonly string[],
  options: { program?: string; cores?: number } = {},
): VerifyWorker | undefined {
  if ((options.cores ?? availableParallelism()) < 2) return undefined;
  const claims = new Int32Array(new SharedArrayBuffer(4 * dirs.length));
  let worker: Worker;
  try {
    worker = new Worker(options.program ?? HELPER_PROGRAM, {
      eval: options.program !== undefined,
      workerData: { dirs, files, claims: claims.buffer },
    });
  } catch {
    return undefined;
  }
  const delivered = new Map<number, Map<string, ReadArtefact>>();
  /** Folders whose artefacts were handed out (or promised) once. */
  const taken = new Set<number>();
  const waiting = new Map<number, (artefacts: Map<string, ReadArtefact> | undefined) => void>();
  const sent = new Map<number, PendingCheck[]>();
  const counts: VerifyWorkerStats = { read: 0, checked: 0, checkedHere: 0, failed: false };
  let batch: PendingCheck[] = [];
  let next = 0;
  let flushQueued = false;
  let readingDone = false;
  let stopped = false;
  let idle: (() => void) | undefined;

  function checkHere(item: Omit<PendingCheck, 'resolve'>): Promise<boolean> {
    counts.checkedHere++;
    // Stryker disable next-line StringLiteral: 'node' is also the default backend
    return verifySignedBytesAsync(item.bytes, item.signature, item.key, 'node');
  }

  /** Takes over whatever the helper owed: unread folders are read here, unchecked signatures checked here. */
  function fallBack(): void {
    if (stopped) return;
    stopped = true;
    counts.failed = true;
    for (const resolve of waiting.values()) resolve(undefined);
    // Stryker disable next-line CallExpression: once stopped, nothing reads `waiting` again
    waiting.clear();
    checkOwedHere();
    idle?.();
  }

  /** Checks here every signature asked and not answered yet. */
  function checkOwedHere(): void {
    const left = [...sent.values()].flat().concat(batch);
    // Stryker disable next-line CallExpression: once stopped, nothing reads `sent` again
    sent.clear();
    // Stryker disable next-line ArrayDeclaration: once stopped, nothing reads `batch` again
    batch = [];
    for (const item of left) void checkHere(item).then(item.resolve);
  }

  function flush(): void {
    flushQueued = false;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: an empty batch is answered empty; a stopped helper's batch is checked here when it stops
    if (batch.length === 0 || stopped) return;
    const items = batch;
    batch = [];
    const first = next;
    // Stryker disable next-line AssignmentOperator: only the ids' uniqueness matters, and they stay unique going down
    next += items.length;
    sent.set(first, items);
    try {
      worker.postMessage({
        first,
        items: items.map(({ bytes, signature, key }) => ({ bytes, signature, key: key.publicKey })),
      });
    } catch {
      fallBack();
    }
  }

  type Message =
    | { kind: 'signatures'; first: number; valid: Uint8Array }
    | {
        kind: 'artefacts';
        done?: boolean;
        batch: { index: number; artefacts: ({ bytes: Uint8Array; stamp: string } | { failed: true })[] }[];
      };
  worker.on('message', (message: Message) => {
    if (message.kind === 'signatures') {
      const items = sent.get(message.first);
      // an answer to nothing asked, or of another length: the helper is not to be believed
      if (!items || message.valid?.length !== items.length) return fallBack();
      sent.delete(message.first);
      counts.checked += items.length;
      for (let index = 0; index < items.length; index++) items[index]!.resolve(message.valid[index] === 1);
      if (sent.size === 0 && batch.length === 0) idle?.();
      return;
    }
    for (const { index, artefacts } of message.batch) {
      // delivered once, for a folder the helper claimed: anything else is out of turn
      const outOfTurn =
        Atomics.load(claims, index) !== HELPER ||
        delivered.has(index) ||
        (taken.has(index) && !waiting.has(index));
      if (outOfTurn) return fallBack();
      const read = new Map<string, ReadArtefact>();
      artefacts.forEach((artefact, position) => {
        if ('bytes' in artefact)
          read.set(files[position]!, {
            bytes: Buffer.from(artefact.bytes.buffer, artefact.bytes.byteOffset, artefact.bytes.byteLength),
            stamp: artefact.stamp,
          });
      });
      counts.read++;
      const resolve = waiting.get(index);
      if (resolve) {
        waiting.delete(index);
        resolve(read);
      } else delivered.set(index, read);
    }
    if (message.done) {
      readingDone = true;
      // claimed by the helper and never delivered: read here
      for (const resolve of waiting.values()) resolve(undefined);
      waiting.clear();
    }
  });
  // Stryker disable next-line StringLiteral: a helper that throws also exits, and 'exit' falls back
  worker.on('error', fallBack);
  worker.on('exit', fallBack);

  return {
    artefacts(index) {
      if (stopped) return undefined;
      // FREE: now this thread's to read; MINE: it already was
      if (Atomics.compareExchange(claims, index, FREE, MINE) !== HELPER) return undefined;
      // handed out before, or (the helper stopped) never coming: read here
      if (taken.has(index)) return undefined;
      taken.add(index);
      const ready = delivered.get(index);
      if (ready) {
        delivered.delete(index);
        return Promise.resolve(ready);
      }
      if (readingDone) return undefined;
      return new Promise((resolve) => waiting.set(index, resolve));
    },
    check(bytes, signature, key) {
      if (stopped) return checkHere({ bytes, signature, key });
      return new Promise<boolean>((resolve) => {
        batch.push({ bytes, signature, key, resolve });
        // Stryker disable next-line ConditionalExpression,EqualityOperator,CallExpression: when a batch leaves changes only how soon the helper starts on it; the microtask below sends whatever is left
        if (batch.length >= BATCH) flush();
        // Stryker disable next-line ConditionalExpression: one queued flush or several, each sends what is there
        else if (!flushQueued) {
          // Stryker disable next-line BooleanLiteral: one queued flush or several, each sends what is there
          flushQueued = true;
          queueMicrotask(flush);
        }
      });
    },
    async close() {
      if (!stopped && (sent.size > 0 || batch.length > 0))
        await new Promise<void>((resolve) => {
          idle = resolve;
        });
      stopped = true;
      await worker.terminate();
      // none should be left; if one is, it is still answered, by a check here
      checkOwedHere();
    },
    stats: () => ({ ...counts }),
  };
}
