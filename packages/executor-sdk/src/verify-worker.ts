import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
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

/** What the helpers did and what fell back to the calling thread; see {@link VerifyWorker.stats}. */
export interface VerifyWorkerStats {
  /** How many helper threads were started. */
  helpers: number;
  /** Folders the helpers read (and checked where they could) and delivered. */
  delivered: number;
  /** Folders the calling thread claimed from the back while the helper worked from the front. */
  claimedHere: number;
  /** Folders a helper claimed and never delivered, done by the calling thread after it stopped. */
  takenBack: number;
  /** Whether a helper broke the protocol, or ended without saying it had done all it claimed. */
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
export interface AtomicsWithWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
    timeout: number,
  ): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
}

/** A claim in the shared array: nobody yet, the calling thread, or a helper (the first is 2, the next 3, …). */
const FREE = 0;
const MINE = 1;
const FIRST_HELPER = 2;

/** The most helper threads one verification starts, however many cores there are. */
export const MAX_VERIFY_HELPERS = 7;

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
 * Starts helper threads for verifying `dirs`: one per core beside the calling thread's, at most
 * {@link MAX_VERIFY_HELPERS} and at most one per {@link VERIFY_WORKER_MIN} folders. Each helper
 * works from the first folder: it reads the fixed artefacts `files` and the code file, and
 * checks the signature with the `trustedKeys`. The calling thread takes what the helpers
 * delivered and, whenever nothing is waiting, claims the last folder nobody has claimed and does
 * it whole itself; they meet where their work balances, so every core stays busy to the end.
 * Returns undefined where there is only one core, or when no helper can start.
 *
 * Fails closed: when a helper stops early or delivers out of turn (a folder it did not claim,
 * one twice, or malformed), nothing more is taken from it and every folder it claimed and did
 * not deliver is done by the calling thread; the other helpers go on. A delivered check counts
 * only where it covers exactly the statement, signature and key the calling thread derives from
 * the same bytes (see verify.ts); bytes are only ever ones read from the file with their own
 * identity. `options.program` replaces the helpers' program (tests use it to make one that
 * misbehaves); `options.helpers` sets how many start.
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
    /** False: the helpers only read, and leave every signature check to the calling thread. */
    checkSignatures?: boolean;
  },
  trustedKeys: readonly PublicKey[],
  options: { program?: string; cores?: number; helpers?: number } = {},
): VerifyWorker | undefined {
  const cores = options.cores ?? availableParallelism();
  if (cores < 2) return undefined;
  const wanted =
    options.helpers ??
    Math.max(1, Math.min(cores - 1, MAX_VERIFY_HELPERS, Math.floor(dirs.length / VERIFY_WORKER_MIN)));
  const claims = new Int32Array(new SharedArrayBuffer(4 * dirs.length));
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const keys = trustedKeys.map((key) => ({ keyId: key.keyId, publicKey: key.publicKey }));

  /** One helper thread: its claims carry `mark`; what it says comes on `port`. */
  interface Helper {
    mark: number;
    worker: Worker;
    port: MessagePort;
    /** It broke the protocol: nothing more is taken from it. */
    distrusted: boolean;
    /** Its thread ended (or failed); what it sent before is still on its port. */
    exited: boolean;
    /** It said it had done every folder it claimed. */
    finished: boolean;
    /** Once it is gone: the next folder to look at for ones it claimed and never delivered. */
    orphan: number;
  }
  const helpers: Helper[] = [];
  for (let position = 0; position < wanted; position++) {
    const { port1, port2 } = new MessageChannel();
    const mark = FIRST_HELPER + position;
    try {
      const worker = new Worker(options.program ?? HELPER_PROGRAM, {
        eval: options.program !== undefined,
        workerData: {
          ...layout,
          checkSignatures: layout.checkSignatures ?? true,
          dirs,
          claims: claims.buffer,
          signal: signal.buffer,
          port: port2,
          keys,
          mark,
        },
        transferList: [port2],
      });
      helpers.push({
        mark,
        worker,
        port: port1,
        distrusted: false,
        exited: false,
        finished: false,
        orphan: 0,
      });
      // Stryker disable BlockStatement,CallExpression: the Worker constructor throws only where threads cannot start at all, which no test here can make
    } catch {
      port1.close();
      break;
    }
    // Stryker restore BlockStatement,CallExpression
  }
  if (helpers.length === 0) return undefined;
  const counts: VerifyWorkerStats = {
    helpers: helpers.length,
    delivered: 0,
    claimedHere: 0,
    takenBack: 0,
    failed: false,
  };
  /** Folders delivered by the helpers, in the order they came, not yet handed out, with who delivered them. */
  const ready: { delivery: HelperDelivery; from: Helper }[] = [];
  const delivered = new Uint8Array(dirs.length);
  /** Folders handed out by next(): none is handed out twice, whatever a helper does to the claims. */
  const handed = new Uint8Array(dirs.length);
  let back = dirs.length - 1;
  /** The helper that the next receive() looks at first, so none is left waiting behind another. */
  let turn = 0;
  let wake: (() => void) | undefined;

  /** Nothing more can come from this helper: it broke the protocol, or it ended and its port is empty. */
  const gone = (helper: Helper) => helper.distrusted || helper.exited;

  /** Drops a helper for breaking the protocol; returns false, for take() to return. */
  function distrust(helper: Helper): false {
    counts.failed = true;
    helper.distrusted = true;
    // delivered but not handed out yet: done again here, from the files
    for (let position = ready.length - 1; position >= 0; position--) {
      const entry = ready[position]!;
      if (entry.from !== helper) continue;
      delivered[entry.delivery.index] = 0;
      counts.delivered--;
      ready.splice(position, 1);
    }
    wake?.();
    // Stryker disable next-line BooleanLiteral: after this, every take() from this helper returns false before reading anything
    return false;
  }

  /** Takes one message off one helper's port; false when there was none or the helper is not believed. */
  function take(helper: Helper): boolean {
    if (helper.distrusted) return false;
    const received = receiveMessageOnPort(helper.port);
    if (!received) return false;
    const message = received.message as Message;
    const arena = message?.arena;
    if (!(arena instanceof ArrayBuffer) || !Array.isArray(message.items)) {
      return distrust(helper);
    }
    for (const item of message.items) {
      const index = item?.index;
      // delivered once, for a folder this helper claimed, in the expected shape: else out of turn
      if (
        !Number.isInteger(index) ||
        index < 0 ||
        index >= dirs.length ||
        Atomics.load(claims, index) !== helper.mark ||
        delivered[index] !== 0 ||
        handed[index] !== 0 ||
        !Array.isArray(item.artefacts) ||
        item.artefacts.length !== layout.files.length
      ) {
        return distrust(helper);
      }
      const artefacts = new Map<string, ReadArtefact>();
      for (let position = 0; position < item.artefacts.length; position++) {
        const entry = item.artefacts[position];
        if (entry === null) continue;
        const artefact = artefactOf(arena, entry);
        if (!artefact) {
          return distrust(helper);
        }
        artefacts.set(layout.files[position]!, artefact);
      }
      if (item.code !== null) {
        const code = artefactOf(arena, item.code);
        const name = item.code?.[3];
        if (!code || typeof name !== 'string') {
          return distrust(helper);
        }
        if (!artefacts.has(name)) artefacts.set(name, code);
      }
      const check = item.check === null ? undefined : checkOf(arena, item.check, trustedKeys.length);
      if (item.check !== null && !check) {
        return distrust(helper);
      }
      delivered[index] = 1;
      ready.push({ delivery: { index, artefacts, check }, from: helper });
      counts.delivered++;
    }
    if (message.done === true) helper.finished = true;
    return true;
  }

  /** Takes one message from the first helper, in turn, that has one; false when none had. */
  function receive(): boolean {
    for (let looked = 0; looked < helpers.length; looked++) {
      const helper = helpers[turn]!;
      turn = (turn + 1) % helpers.length;
      if (take(helper)) return true;
    }
    return false;
  }

  for (const helper of helpers) {
    const ended = () => {
      helper.exited = true;
      wake?.();
    };
    // Stryker disable next-line StringLiteral: a helper that throws also exits, and 'exit' is handled the same
    helper.worker.on('error', ended);
    helper.worker.on('exit', ended);
  }

  return {
    next() {
      // Stryker disable next-line ConditionalExpression,EqualityOperator,CallExpression: wait() also takes messages; taking them here too only lets this thread start on them sooner
      if (ready.length === 0) receive();
      const entry = ready.shift();
      if (entry) {
        handed[entry.delivery.index] = 1;
        return { index: entry.delivery.index, delivery: entry.delivery };
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
        // the helpers claim upwards, each past every folder claimed before it: this and every
        // folder below it are claimed already
        // Stryker disable next-line ConditionalExpression,EqualityOperator: going on down finds only helpers' claims, which the compare-and-swap refuses
        if (previous >= FIRST_HELPER) back = -1;
      }
      // a helper that is gone (its messages all taken) or not believed: what it claimed and
      // never delivered is done here, while the others go on
      for (const helper of helpers) {
        if (!gone(helper)) continue;
        if (!helper.finished) counts.failed = true;
        while (helper.orphan < dirs.length) {
          const index = helper.orphan++;
          if (Atomics.load(claims, index) === helper.mark && delivered[index] === 0 && handed[index] === 0) {
            handed[index] = 1;
            counts.takenBack++;
            return { index };
          }
        }
      }
      return undefined;
    },
    async wait() {
      if (helpers.every(gone)) return false;
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
      for (const helper of helpers) {
        // Stryker disable next-line CallExpression: a port nobody listens on keeps nothing alive; closing it only frees it sooner
        helper.port.close();
      }
      await Promise.all(helpers.map((helper) => helper.worker.terminate()));
    },
    stats: () => ({ ...counts }),
  };
}
