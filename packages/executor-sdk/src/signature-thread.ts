import { Worker } from 'node:worker_threads';
import type { PublicKey } from './keys.ts';
import type { AtomicsWithWaitAsync, ReadArtefact } from './verify-worker.ts';

/** The signature thread's program (see runtime/signature-helper.mjs); beside `dist/` and `src/` alike. */
const SIGNATURE_PROGRAM = new URL('../runtime/signature-helper.mjs', import.meta.url);

/** Room for one check in shared memory: the statement bytes and the 64-byte signature after them. */
export const SIGNATURE_SLOT_BYTES = 1024;
/**
 * The most checks one thread takes (16 MiB of slots), however large the catalog: the rest are
 * checked on the calling thread, so a folder filled with versions cannot make Metnos reserve
 * memory without bound.
 */
export const MAX_SIGNATURE_SLOTS = 16_384;
const SIGNATURE_BYTES = 64;
/**
 * Room in the read lane for one folder's artefacts and code, on average, and for all of them at
 * most. Reserved, not used: only the pages the thread writes take memory.
 */
export const READ_LANE_BYTES_PER_FOLDER = 24 * 1024;
export const MAX_READ_LANE_BYTES = 64 * 1024 * 1024;

/** Positions in the shared counters; see runtime/signature-helper.mjs. */
const SUBMITTED = 0;
const CLOSED = 1;
const ANSWERED = 2;
const SIGNAL = 3;
const REACHED = 4;
const STARTED = 5;
const WAITING = 6;
/** Who took a check: nobody yet, the calling thread, the signature thread. */
const FREE = 0;
const MINE = 1;
const THREAD = 2;
/** The answers the thread writes. */
const VALID = 1;
const INVALID = 2;
/** A folder in the read lane: the thread is reading it, has read it, or could not. */
const READING = 2;
const READ = 3;

/** Numbers per folder in the code table: bytes, identity and name, each where it starts and its length. */
const CODE_ENTRY = 6;

/** How long the calling thread waits for a folder the thread is reading at that moment. */
const READ_WAIT_MS = 20;

/** How long the calling thread waits, at the end, for a thread that makes no progress. */
const PATIENCE_MS = 1000;

/** What the thread did; see {@link SignatureThread.stats}. */
export interface SignatureThreadStats {
  /** Checks handed over. */
  submitted: number;
  /** Checks the thread took, answered or not. */
  taken: number;
  /** Checks the calling thread took back from the end, because the thread had not come to them. */
  takenBack: number;
  /** Checks the thread took and never answered in time, or answered with anything but valid or invalid. */
  unanswered: number;
  /** Folders whose artefacts the thread read for the calling thread. */
  readAhead: number;
  /** Times the calling thread waited for a folder the thread was reading. */
  readWaits: number;
}

/** The folders whose fixed-name artefacts the thread reads ahead of the caller. */
export interface ReadLane {
  dirs: readonly string[];
  files: readonly string[];
  /**
   * The manifest among `files`: when given, the thread also reads the code file each manifest
   * names, which {@link SignatureThread.reached} hands over under that name.
   */
  manifestFile?: string;
}

/** A second thread that checks Ed25519 signatures the calling thread hands it. */
export interface SignatureThread {
  /**
   * Hands over one check (statement bytes, signature, and the position of the key among the
   * trusted keys); returns its ticket, or undefined when it cannot take it (the statement does
   * not fit a slot, or every slot is used): then the check is the caller's.
   */
  submit(statement: Uint8Array, signature: Uint8Array, keyIndex: number): number | undefined;
  /**
   * Takes back a check the thread has not started: true when it is now the caller's to make,
   * false when the thread has it. The thread takes checks in order, so once one is the thread's,
   * every one before it is too.
   */
  takeBack(ticket: number): boolean;
  /**
   * Says no more checks will come and waits until every check is the caller's or answered by the
   * thread, giving up after a second without progress. Call once, after the last submit and the
   * caller's take-backs.
   */
  finish(): Promise<void>;
  /**
   * Resolves once the thread runs, with its first folder read ahead (or has ended): tests wait
   * for it so the thread has work from the first folder.
   */
  ready(): Promise<void>;
  /**
   * The thread's answer for a ticket: true or false, or undefined when there is none to count —
   * not answered (yet), taken back, answered with anything but valid or invalid, or the slot no
   * longer holds exactly these bytes and this key. The caller then checks it itself.
   */
  answer(ticket: number, statement: Uint8Array, signature: Uint8Array, keyIndex: number): boolean | undefined;
  /**
   * Says the caller has come to folder `index` of the read lane and returns the artefacts the
   * thread read for it (by file name; with a `manifestFile`, the code file too, under the name
   * the thread found), or undefined when the caller reads them itself (the thread had not come
   * to it, could not read one of them, or is gone); from then on the folder is the caller's.
   */
  reached(index: number): Map<string, ReadArtefact> | undefined;
  stats(): SignatureThreadStats;
  close(): Promise<void>;
}

/** The shared memory of a read lane: per folder a state, and per artefact where its bytes and identity are. */
function readLane(lane: ReadLane) {
  const folders = Math.min(lane.dirs.length, MAX_SIGNATURE_SLOTS);
  return {
    // Stryker disable next-line MethodExpression: the thread reads no folder past `states`, however many names it has
    dirs: lane.dirs.slice(0, folders),
    files: [...lane.files],
    // Stryker disable next-line ArithmeticOperator: a shorter lane only leaves more folders to the caller
    states: new Int32Array(new SharedArrayBuffer(folders * 4)),
    /** Per folder and artefact: where its bytes start, their length, where its identity starts, its length. */
    table: new Int32Array(new SharedArrayBuffer(folders * lane.files.length * 4 * 4)),
    /** The position of the manifest in `files` (-1: none, and no code is read). */
    // Stryker disable next-line ConditionalExpression: indexOf(undefined) is -1 as well
    manifestAt: lane.manifestFile === undefined ? -1 : lane.files.indexOf(lane.manifestFile),
    /** Per folder, the code file: as in `table`, then where its name starts and its length (0: not read). */
    codes: new Int32Array(new SharedArrayBuffer(folders * CODE_ENTRY * 4)),
    data: Buffer.from(
      // Stryker disable next-line MethodExpression: a bound on memory only, which no outcome shows
      new SharedArrayBuffer(Math.min(folders * READ_LANE_BYTES_PER_FOLDER, MAX_READ_LANE_BYTES)),
    ),
  };
}

/**
 * The latin1 text of `length` bytes of the lane from `at`, or undefined when it starts or ends
 * outside it ('' when `length` is not positive, which the caller refuses as well).
 */
function laneSpan(data: Buffer, at: number, length: number): string | undefined {
  return at >= 0 && at + length <= data.length ? data.toString('latin1', at, at + length) : undefined;
}

/**
 * The artefact a lane table describes from `entry` (where its bytes start, their length, where
 * its identity starts, its length): a view of its bytes and its identity, or undefined when any
 * of it lies outside the lane.
 */
function laneArtefact(data: Buffer, table: Int32Array, entry: number): ReadArtefact | undefined {
  const at = table[entry]!;
  const length = table[entry + 1]!;
  const stampAt = table[entry + 2]!;
  const stampLength = table[entry + 3]!;
  if (
    at < 0 ||
    length < 0 ||
    stampAt < 0 ||
    stampLength < 0 ||
    at + length > data.length ||
    stampAt + stampLength > data.length
  ) {
    return undefined;
  }
  return {
    bytes: data.subarray(at, at + length),
    stamp: data.toString('latin1', stampAt, stampAt + stampLength),
  };
}

/** Whether `shared` holds exactly `bytes` from `at` (compared natively, nothing copied). */
function sameBytes(shared: Buffer, at: number, bytes: Uint8Array): boolean {
  // Stryker disable ConditionalExpression,EqualityOperator,ArithmeticOperator: answer() compares only lengths that fit a slot; the bound keeps compare() from throwing should that change
  return (
    at + bytes.length <= shared.length && shared.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0
  );
  // Stryker restore ConditionalExpression,EqualityOperator,ArithmeticOperator
}

/**
 * Starts a thread that checks up to `capacity` signatures (at most {@link MAX_SIGNATURE_SLOTS})
 * with the `trustedKeys`, in the order
 * they are handed over, while the calling thread reads and checks everything else. Returns
 * undefined when the thread cannot start.
 *
 * Fails closed: a check counts only where the thread answered valid or invalid and the slot
 * still holds the very bytes and key the caller handed over; every other check — taken back,
 * unanswered, answered with anything else, or lost with a thread that died — is the caller's.
 * `options.program` replaces the thread's program (tests use it to make one that misbehaves);
 * `options.patience` is how long {@link SignatureThread.finish} waits for a thread that makes no
 * progress (a second).
 *
 * @example
 * const thread = createSignatureThread(dirs.length, trustedKeys)!;
 * const ticket = thread.submit(statementBytes, signature, 0)!;
 * await thread.finish();
 * const valid = thread.answer(ticket, statementBytes, signature, 0) ?? verifySignedBytes(statementBytes, signature, key);
 */
export function createSignatureThread(
  capacity: number,
  trustedKeys: readonly PublicKey[],
  options: { program?: string; patience?: number; lane?: ReadLane } = {},
): SignatureThread | undefined {
  const patience = options.patience ?? PATIENCE_MS;
  const slotCount = Math.min(capacity, MAX_SIGNATURE_SLOTS);
  const counters = new Int32Array(new SharedArrayBuffer(7 * 4));
  // Stryker disable next-line UnaryOperator: the thread would skip folder 0, which the caller reads first anyway
  counters[REACHED] = -1;
  const lane = options.lane && readLane(options.lane);
  const slots = Buffer.from(new SharedArrayBuffer(slotCount * SIGNATURE_SLOT_BYTES));
  /** Per ticket: the statement's length, then the key's position. */
  const sizes = new Int32Array(new SharedArrayBuffer(slotCount * 2 * 4));
  const claims = new Int32Array(new SharedArrayBuffer(slotCount * 4));
  const answers = new Int32Array(new SharedArrayBuffer(slotCount * 4));
  let worker: Worker;
  try {
    worker = new Worker(options.program ?? SIGNATURE_PROGRAM, {
      eval: options.program !== undefined,
      workerData: {
        control: counters.buffer,
        slots: slots.buffer,
        slotSize: SIGNATURE_SLOT_BYTES,
        lengths: sizes.buffer,
        claims: claims.buffer,
        answers: answers.buffer,
        keys: trustedKeys.map((key) => key.publicKey),
        mark: THREAD,
        lane: lane && {
          dirs: lane.dirs,
          files: lane.files,
          states: lane.states.buffer,
          table: lane.table.buffer,
          manifestAt: lane.manifestAt,
          codes: lane.codes.buffer,
          data: lane.data.buffer,
        },
      },
    });
    // Stryker disable BlockStatement: the Worker constructor throws only where threads cannot start at all, which no test here can make
  } catch {
    return undefined;
  }
  // Stryker restore BlockStatement
  let exited = false;
  const online = new Promise<void>((resolve) => {
    worker.once('online', resolve);
    // Stryker disable next-line StringLiteral,ArrowFunction: 'online' comes before every end a test can make; this is for a thread that ends before it runs
    // Stryker disable next-line CallExpression: see above; only ready() waits on it
    worker.once('exit', () => resolve());
  });
  const ended = () => {
    exited = true;
    // a caller waiting for answers hears of it at once
    // Stryker disable next-line CallExpression: the caller's wait is at most 50 ms long and sees `exited` after it
    Atomics.notify(counters, ANSWERED);
  };
  // Stryker disable next-line StringLiteral: a thread that throws also exits, and 'exit' is handled the same
  worker.on('error', ended);
  worker.on('exit', ended);
  const counts: SignatureThreadStats = {
    submitted: 0,
    taken: 0,
    takenBack: 0,
    unanswered: 0,
    readAhead: 0,
    readWaits: 0,
  };
  /** The thread once held a folder past the wait: from then on the caller reads every one itself. */
  let laneGivenUp = false;
  let submitted = 0;
  /** No more checks are taken: finish() or close() was called. */
  let closed = false;

  // Stryker disable BlockStatement,CallExpression,ConditionalExpression,EqualityOperator: a thread not woken takes the checks at its next wake-up, or leaves them to the caller; no outcome changes
  const bump = () => {
    Atomics.add(counters, SIGNAL, 1);
    // a wake-up costs a system call: only for a thread that says it waits
    if (Atomics.load(counters, WAITING) === 1) Atomics.notify(counters, SIGNAL);
  };
  // Stryker restore BlockStatement,CallExpression,ConditionalExpression,EqualityOperator

  return {
    submit(statement, signature, keyIndex) {
      if (
        closed ||
        submitted >= slotCount ||
        signature.length !== SIGNATURE_BYTES ||
        statement.length + SIGNATURE_BYTES > SIGNATURE_SLOT_BYTES
      ) {
        return undefined;
      }
      const ticket = submitted++;
      const at = ticket * SIGNATURE_SLOT_BYTES;
      slots.set(statement, at);
      slots.set(signature, at + statement.length);
      sizes[ticket * 2] = statement.length;
      sizes[ticket * 2 + 1] = keyIndex;
      counts.submitted++;
      Atomics.store(counters, SUBMITTED, submitted);
      // Stryker disable next-line CallExpression: see bump
      bump();
      return ticket;
    },

    takeBack(ticket) {
      if (!Number.isInteger(ticket) || ticket < 0 || ticket >= submitted) return false;
      if (Atomics.compareExchange(claims, ticket, FREE, MINE) !== FREE) return false;
      counts.takenBack++;
      return true;
    },

    async finish() {
      closed = true;
      Atomics.store(counters, CLOSED, 1);
      // Stryker disable next-line CallExpression: see bump
      bump();
      // Done when every check is the caller's or answered by the thread; the thread may still be
      // working through checks handed over while it started, so the wait is for progress: a
      // while without any (a second) gives up, and what is unanswered then is the caller's.
      let last: number | undefined;
      let deadline = 0;
      for (;;) {
        const seen = Atomics.load(counters, ANSWERED);
        let open = 0;
        let taken = 0;
        for (let ticket = 0; ticket < submitted; ticket++) {
          const claim = Atomics.load(claims, ticket);
          if (claim === THREAD) taken++;
          // Stryker disable next-line ConditionalExpression,UpdateOperator: counting wrong only delays the end of the wait, after which what is open is the caller's
          else if (claim !== MINE) open++;
        }
        counts.taken = taken;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: not ending here only waits until the thread makes no progress or ends, with the same answers
        if ((open === 0 && seen >= taken) || exited) break;
        // Stryker disable next-line ArithmeticOperator: either sum changes when the thread takes or answers a check
        const progress = seen + taken;
        if (progress !== last) {
          last = progress;
          deadline = performance.now() + patience;
        }
        const left = deadline - performance.now();
        // Stryker disable next-line EqualityOperator: no wait is exactly 0 ms long
        if (left <= 0) break;
        const waiting = (Atomics as unknown as AtomicsWithWaitAsync)
          // Stryker disable next-line MethodExpression: every answer wakes the wait; its length only bounds how late a claim is seen
          .waitAsync(counters, ANSWERED, seen, Math.min(left, 50));
        // Stryker disable next-line ConditionalExpression: awaiting a value that is not a promise only takes a turn
        if (waiting.async) await waiting.value;
      }
      for (let ticket = 0; ticket < submitted; ticket++) {
        if (Atomics.load(claims, ticket) === THREAD) {
          const answer = Atomics.load(answers, ticket);
          if (answer !== VALID && answer !== INVALID) counts.unanswered++;
        }
      }
    },

    // Metnos's program says when it has begun (after its first read ahead); a program given
    // instead is taken to run once the thread is online
    ready: () =>
      // Stryker disable next-line ConditionalExpression,BlockStatement: how long a test waits before it starts; every outcome is the same
      options.program === undefined
        ? // Stryker disable next-line BlockStatement: see above
          online.then(async () => {
            // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: the wait only lets a test start with the thread running
            while (!exited && Atomics.load(counters, STARTED) === 0) {
              const waiting = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(
                counters,
                STARTED,
                0,
                50,
              );
              // Stryker disable next-line ConditionalExpression: awaiting a value that is not a promise only takes a turn
              if (waiting.async) await waiting.value;
            }
          })
        : online,

    answer(ticket, statement, signature, keyIndex) {
      if (!Number.isInteger(ticket) || ticket < 0 || ticket >= submitted) return undefined;
      if (Atomics.load(claims, ticket) !== THREAD) return undefined;
      const answer = Atomics.load(answers, ticket);
      if (answer !== VALID && answer !== INVALID) return undefined;
      const at = ticket * SIGNATURE_SLOT_BYTES;
      const length = sizes[ticket * 2]!;
      if (
        sizes[ticket * 2 + 1] !== keyIndex ||
        // Stryker disable next-line ConditionalExpression: a length changed in the slot moves the signature's bytes, which the comparison below then refuses
        length !== statement.length ||
        // Stryker disable next-line ConditionalExpression: the caller hands over only 64-byte signatures (submit refuses others)
        signature.length !== SIGNATURE_BYTES ||
        !sameBytes(slots, at, statement) ||
        !sameBytes(slots, at + length, signature)
      ) {
        return undefined;
      }
      return answer === VALID;
    },

    reached(index) {
      if (!lane || !Number.isInteger(index) || index < 0 || index >= lane.states.length) return undefined;
      Atomics.store(counters, REACHED, index);
      let state = Atomics.compareExchange(lane.states, index, FREE, MINE);
      // Stryker disable next-line ConditionalExpression: a folder just claimed here is not read, so it comes to undefined below all the same
      if (state === FREE || laneGivenUp) return undefined;
      if (state === READING) {
        counts.readWaits++;
        Atomics.wait(lane.states, index, READING, READ_WAIT_MS);
        state = Atomics.load(lane.states, index);
        if (state === READING) laneGivenUp = true;
      }
      if (state !== READ) return undefined;
      const artefacts = new Map<string, ReadArtefact>();
      const base = index * lane.files.length * 4;
      for (let file = 0; file < lane.files.length; file++) {
        const artefact = laneArtefact(lane.data, lane.table, base + file * 4);
        if (!artefact) return undefined;
        artefacts.set(lane.files[file]!, artefact);
      }
      // The code file, under the name the thread found in the manifest: the caller uses it only
      // where its own reading of the manifest names the same file, and never in place of a
      // fixed-name artefact; one out of place is read by the caller.
      const code = index * CODE_ENTRY;
      const name = laneSpan(lane.data, lane.codes[code + 4]!, lane.codes[code + 5]!);
      const artefact = name && laneArtefact(lane.data, lane.codes, code);
      if (name && artefact && !artefacts.has(name)) artefacts.set(name, artefact);
      counts.readAhead++;
      return artefacts;
    },

    stats: () => ({ ...counts }),

    async close() {
      closed = true;
      // Stryker disable next-line CallExpression: the thread is ended right after; telling it first only lets it end by itself
      Atomics.store(counters, CLOSED, 1);
      // Stryker disable next-line CallExpression: see bump
      bump();
      await worker.terminate();
    },
  };
}
