import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { PublicKey } from './keys.ts';

/** The helper thread's program (see runtime/verify-helper.mjs); beside `dist/` and `src/` alike. */
const HELPER_PROGRAM = new URL('../runtime/verify-helper.mjs', import.meta.url);

/** Below this many folders a helper thread costs more than it saves. */
export const VERIFY_WORKER_MIN = 64;

/** One artefact as it was read: its bytes and the identity of the file they came from. */
export interface ReadArtefact {
  bytes: Buffer;
  stamp: string;
}

/** A signature check the helper made, over the statement it built from manifest.sig. */
export interface HelperCheck {
  /** The statement bytes it checked (a view of the message's buffer). */
  statement: Buffer;
  /** The signature bytes it checked (a view of the message's buffer). */
  signature: Buffer;
  /** The position, in the trusted keys it was given, of the key it checked with. */
  keyIndex: number;
  valid: boolean;
}

/** One folder the helper finished: what it read (file name → artefact) and its signature check. */
export interface HelperDelivery {
  index: number;
  artefacts: Map<string, ReadArtefact>;
  /** Undefined when the helper could not make the check: the calling thread makes it. */
  check?: HelperCheck;
}

/** What the helper did and what fell back to the calling thread; see {@link VerifyWorker.stats}. */
export interface VerifyWorkerStats {
  /** Folders the helper read (and checked where it could) and delivered. */
  delivered: number;
  /** Folders the calling thread claimed from the back while the helper worked from the front. */
  claimedHere: number;
  /** Folders the helper claimed and never delivered, done by the calling thread after it stopped. */
  takenBack: number;
  /** Whether the helper broke the protocol, or ended without saying it had done all it claimed. */
  failed: boolean;
}

/** The helper thread of one {@link verifyExecutors} run; see {@link createVerifyWorker}. */
export interface VerifyWorker {
  /**
   * The index of the next folder for the calling thread, or undefined when there is none
   * right now (the helper holds the rest: {@link wait}, then ask again). Never blocks.
   * With `delivery`, the helper finished the folder: use what it read and checked.
   */
  next(): { index: number; delivery?: HelperDelivery } | undefined;
  /**
   * Resolves when the helper may have delivered more, or has stopped; to false when nothing
   * more can come from it (then {@link next} hands out whatever it left undone).
   */
  wait(): Promise<boolean>;
  /** Stops the helper. */
  close(): Promise<void>;
  stats(): VerifyWorkerStats;
}

/** `Atomics.waitAsync`, which resolves a promise instead of blocking the thread. */
interface AtomicsWithWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeout: number,
  ): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
}

/** A claim in the shared array: nobody yet, the calling thread, the helper. */
const FREE = 0;
const MINE = 1;
const HELPER = 2;

/** A part of a message's buffer: [offset, length]. */
type Span = [number, number];

/** One message of the helper: the bytes of a few folders in one buffer, described by spans. */
interface Message {
  arena: ArrayBuffer;
  items: {
    index: number;
    /** Per fixed file: where its bytes are and its file's identity, or null when it could not be read. */
    artefacts: ([...Span, string] | null)[];
    /** The code file the helper took the manifest to name: its span, identity and name; or null. */
    code: [...Span, string, string] | null;
    check: { statement: Span; signature: Span; keyIndex: number; valid: boolean } | null;
  }[];
  done: boolean;
}

/** The bytes a span names, as a view (not a copy) of the buffer; undefined when it lies outside it. */
function spanOf(arena: ArrayBuffer, offset: unknown, length: unknown): Buffer | undefined {
  return Number.isInteger(offset) &&
    Number.isInteger(length) &&
    (offset as number) >= 0 &&
    (length as number) >= 0 &&
    (offset as number) + (length as number) <= arena.byteLength
    ? Buffer.from(arena, offset as number, length as number)
    : undefined;
}

/** An artefact a message describes, or undefined when the description is malformed. */
function artefactOf(arena: ArrayBuffer, entry: unknown): ReadArtefact | undefined {
  if (!Array.isArray(entry) || typeof entry[2] !== 'string') return undefined;
  const bytes = spanOf(arena, entry[0], entry[1]);
  return bytes && { bytes, stamp: entry[2] };
}

/** The check a message describes, or undefined when it is malformed. */
function checkOf(
  arena: ArrayBuffer,
  entry: Message['items'][number]['check'],
  keys: number,
): HelperCheck | undefined {
  const statement = spanOf(arena, entry?.statement?.[0], entry?.statement?.[1]);
  const signature = spanOf(arena, entry?.signature?.[0], entry?.signature?.[1]);
  const keyIndex = entry?.keyIndex;
  if (!statement || !signature || typeof entry?.valid !== 'boolean') return undefined;
  if (!Number.isInteger(keyIndex) || keyIndex! < 0 || keyIndex! >= keys) return undefined;
  return { statement, signature, keyIndex: keyIndex!, valid: entry.valid };
}

/**
 * Starts a helper thread for verifying `dirs`. The helper works from the first folder: it
 * reads the fixed artefacts `files` and the code file, and checks the signature with the
 * `trustedKeys`. The calling thread takes what the helper delivered and, whenever nothing is
 * waiting, claims the last folder nobody has claimed and does it whole itself; the two meet
 * where their work balances, so both cores stay busy to the end. Returns undefined where
 * there is only one core, or when the helper cannot start.
 *
 * Fails closed: when the helper stops early or delivers out of turn (a folder it did not
 * claim, one twice, or malformed), nothing more is taken from it and every folder it claimed
 * and did not deliver is done by the calling thread. A delivered check counts only where it
 * covers exactly the statement, signature and key the calling thread derives from the same
 * bytes (see verify.ts); bytes are only ever ones read from the file with their own identity.
 * `options.program` replaces the helper's program (tests use it to make one that misbehaves).
 *
 * @example
 * const worker = createVerifyWorker(dirs, { files: ['manifest.toml', 'manifest.sig'], manifestFile: 'manifest.toml', signatureFile: 'manifest.sig' }, trustedKeys);
 * const step = worker?.next(); // { index: 999 }: the last folder is this thread's
 * await worker?.close();
 */
export function createVerifyWorker(
  dirs: readonly string[],
  layout: {
    files: readonly string[];
    manifestFile: string;
    signatureFile: string;
    /** False: the helper only reads, and leaves every signature check to the calling thread. */
    checkSignatures?: boolean;
  },
  trustedKeys: readonly PublicKey[],
  options: { program?: string; cores?: number } = {},
): VerifyWorker | undefined {
  if ((options.cores ?? availableParallelism()) < 2) return undefined;
  const claims = new Int32Array(new SharedArrayBuffer(4 * dirs.length));
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(options.program ?? HELPER_PROGRAM, {
      eval: options.program !== undefined,
      workerData: {
        ...layout,
        checkSignatures: layout.checkSignatures ?? true,
        dirs,
        claims: claims.buffer,
        signal: signal.buffer,
        port: port2,
        keys: trustedKeys.map((key) => ({ keyId: key.keyId, publicKey: key.publicKey })),
      },
      transferList: [port2],
    });
    // Stryker disable BlockStatement,CallExpression: the Worker constructor throws only where threads cannot start at all, which no test here can make
  } catch {
    port1.close();
    return undefined;
  }
  // Stryker restore BlockStatement,CallExpression
  const counts: VerifyWorkerStats = { delivered: 0, claimedHere: 0, takenBack: 0, failed: false };
  /** Folders delivered by the helper, in the order they came, not yet handed out. */
  const ready: HelperDelivery[] = [];
  const delivered = new Uint8Array(dirs.length);
  /** Folders handed out by next(): none is handed out twice, whatever the helper does to the claims. */
  const handed = new Uint8Array(dirs.length);
  let back = dirs.length - 1;
  /** Once the helper is gone: the next folder to look at for ones it claimed and never delivered. */
  let orphan = 0;
  /** The helper broke the protocol: nothing more is taken from it. */
  let distrusted = false;
  /** The helper thread ended (or failed); what it sent before is still on the port. */
  let exited = false;
  let finished = false;
  let wake: (() => void) | undefined;

  /** Drops the helper for breaking the protocol; returns false, for receive() to return. */
  function distrust(): false {
    counts.failed = true;
    distrusted = true;
    // delivered but not handed out yet: done again here, from the files
    for (const delivery of ready) delivered[delivery.index] = 0;
    counts.delivered -= ready.length;
    ready.length = 0;
    wake?.();
    // Stryker disable next-line BooleanLiteral: after this, every receive() returns false before reading anything
    return false;
  }

  /** Takes one message off the port; false when there was none or the helper is not believed. */
  function receive(): boolean {
    if (distrusted) return false;
    const received = receiveMessageOnPort(port1);
    if (!received) return false;
    const message = received.message as Message;
    const arena = message?.arena;
    if (!(arena instanceof ArrayBuffer) || !Array.isArray(message.items)) {
      return distrust();
    }
    for (const item of message.items) {
      const index = item?.index;
      // delivered once, for a folder the helper claimed, in the expected shape: else out of turn
      if (
        !Number.isInteger(index) ||
        index < 0 ||
        index >= dirs.length ||
        Atomics.load(claims, index) !== HELPER ||
        delivered[index] !== 0 ||
        handed[index] !== 0 ||
        !Array.isArray(item.artefacts) ||
        item.artefacts.length !== layout.files.length
      ) {
        return distrust();
      }
      const artefacts = new Map<string, ReadArtefact>();
      for (let position = 0; position < item.artefacts.length; position++) {
        const entry = item.artefacts[position];
        if (entry === null) continue;
        const artefact = artefactOf(arena, entry);
        if (!artefact) {
          return distrust();
        }
        artefacts.set(layout.files[position]!, artefact);
      }
      if (item.code !== null) {
        const code = artefactOf(arena, item.code);
        const name = item.code?.[3];
        if (!code || typeof name !== 'string') {
          return distrust();
        }
        if (!artefacts.has(name)) artefacts.set(name, code);
      }
      const check = item.check === null ? undefined : checkOf(arena, item.check, trustedKeys.length);
      if (item.check !== null && !check) {
        return distrust();
      }
      delivered[index] = 1;
      ready.push({ index, artefacts, check });
      counts.delivered++;
    }
    if (message.done === true) finished = true;
    return true;
  }

  function ended(): void {
    exited = true;
    wake?.();
  }
  // Stryker disable next-line StringLiteral: a helper that throws also exits, and 'exit' is handled the same
  worker.on('error', ended);
  worker.on('exit', ended);

  return {
    next() {
      // Stryker disable next-line ConditionalExpression,EqualityOperator,CallExpression: wait() also takes messages; taking them here too only lets this thread start on them sooner
      if (ready.length === 0) receive();
      const delivery = ready.shift();
      if (delivery) {
        handed[delivery.index] = 1;
        return { index: delivery.index, delivery };
      }
      // nothing waiting: the last folder nobody has claimed is this thread's
      while (back >= 0) {
        const index = back--;
        const previous = Atomics.compareExchange(claims, index, FREE, MINE);
        if (previous === FREE) {
          counts.claimedHere++;
          handed[index] = 1;
          return { index };
        }
        // the helper claims upwards: this and every folder below it are its own
        // Stryker disable next-line ConditionalExpression,EqualityOperator: going on down finds only the helper's claims, which the compare-and-swap refuses
        if (previous === HELPER) back = -1;
      }
      // while the helper runs, the rest is coming from it
      if (!distrusted && !exited) return undefined;
      // the helper is gone (its messages all taken) or not believed: what it claimed and never
      // delivered is done here
      if (!finished) counts.failed = true;
      while (orphan < dirs.length) {
        const index = orphan++;
        if (Atomics.load(claims, index) === HELPER && delivered[index] === 0 && handed[index] === 0) {
          handed[index] = 1;
          counts.takenBack++;
          return { index };
        }
      }
      return undefined;
    },
    async wait() {
      if (distrusted || exited) return false;
      const seen = Atomics.load(signal, 0);
      if (receive()) return true;
      // (in Node since 16; the project's TypeScript library predates its types)
      const bumped = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(signal, 0, seen, 50);
      await Promise.race([
        bumped.async ? bumped.value : undefined,
        new Promise<void>((resolve) => {
          wake = resolve;
        }),
      ]);
      wake = undefined;
      return true;
    },
    async close() {
      // Stryker disable next-line CallExpression: a port nobody listens on keeps nothing alive; closing it only frees it sooner
      port1.close();
      await worker.terminate();
    },
    stats: () => ({ ...counts }),
  };
}
