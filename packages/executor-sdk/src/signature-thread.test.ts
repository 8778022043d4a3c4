import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArtefactFile } from '../runtime/read-artefact.mjs';
import { forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { VerificationError } from './errors.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import { statementBytes } from './signature.ts';
import {
  createSignatureThread,
  MAX_SIGNATURE_SLOTS,
  READ_LANE_BYTES_PER_FOLDER,
  SIGNATURE_SLOT_BYTES,
} from './signature-thread.ts';
import { writeSignedExecutor } from './test/index.ts';
import { openVerificationCache } from './verification-cache.ts';
import { verifyExecutor, verifyExecutors } from './verify.ts';
import { VERIFY_WORKER_MIN } from './verify-worker.ts';

const temp = useTempDirs('metnos-signature-thread-');
const COUNT = VERIFY_WORKER_MIN + 16;
/** Two cores, as on the machine the thread is for, whatever this machine has. */
const TWO_CORES = { cores: 2, waitForSignatureThread: true } as const;

/** `count` signed executors under one root; returns their folders in order. */
async function catalogOf(count: number, key: SigningKey): Promise<string[]> {
  const root = await temp.make('root-');
  const dirs: string[] = [];
  for (let index = 0; index < count; index++) {
    const { dir } = await writeSignedExecutor({ root, name: `tool_${String(index).padStart(3, '0')}`, key });
    dirs.push(dir);
  }
  return dirs;
}

/** What each folder came to: 'ok' or the refusal's reason. */
function reasons(outcomes: Awaited<ReturnType<typeof verifyExecutors>>): string[] {
  return outcomes.map((outcome) =>
    outcome.error ? (VerificationError.isInstance(outcome.error) ? outcome.error.reason : 'other') : 'ok',
  );
}

/** A thread program: the shared views, a claim, an answer, and a way to say one is done. */
const program = (body: string) =>
  "const { workerData } = require('node:worker_threads');" +
  'const counters = new Int32Array(workerData.control); const slots = new Uint8Array(workerData.slots);' +
  'const sizes = new Int32Array(workerData.lengths); const claims = new Int32Array(workerData.claims);' +
  'const answers = new Int32Array(workerData.answers);' +
  'const claim = (i) => Atomics.compareExchange(claims, i, 0, workerData.mark) === 0;' +
  'const answer = (i, value) => { Atomics.store(answers, i, value); Atomics.add(counters, 2, 1); Atomics.notify(counters, 2); };' +
  'const closed = () => Atomics.load(counters, 1) === 1;' +
  // a wait as the real program waits: on the signal read before it last looked, saying so
  // (position 6), so the caller wakes it
  'const sleep = (signal) => { Atomics.store(counters, 6, 1);' +
  'Atomics.wait(counters, 3, signal, 20); Atomics.store(counters, 6, 0); };' +
  'const signalNow = () => Atomics.load(counters, 3);' +
  body;

/**
 * Claims each check as it is handed over, as the real thread does, until no more can come;
 * `mine` then holds the checks it claimed.
 */
const claimAll =
  'let next = 0; const mine = [];' +
  'const take = () => { const n = Atomics.load(counters, 0); while (next < n) { if (claim(next)) mine.push(next); next++; } };' +
  'while (!closed()) { const signal = signalNow(); take(); sleep(signal); } take();';

describe('a whole catalog on two cores, with the signature thread', () => {
  it('gives, folder by folder, exactly what verifying each alone gives, and the thread made the checks', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const stats: unknown[] = [];
    const together = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, onSignatures: (s) => stats.push(s) },
    );
    expect(together.every((outcome) => outcome.executor !== undefined)).toBe(true);
    for (const [index, dir] of dirs.entries()) {
      const alone = await verifyExecutor(dir, { trustedKeys: [key] });
      const outcome = together[index]!;
      expect(outcome.dir).toBe(dir);
      expect(outcome.executor!.stamps).toBe(alone.stamps);
      expect(outcome.executor!.digests).toEqual(alone.digests);
      expect(Buffer.compare(outcome.executor!.code, alone.code)).toBe(0);
      expect(outcome.executor!.manifest).toEqual(alone.manifest);
    }
    expect(stats).toEqual([expect.objectContaining({ submitted: COUNT, unanswered: 0 })]);
    const { taken, takenBack, readAhead } = stats[0] as {
      taken: number;
      takenBack: number;
      readAhead: number;
    };
    expect(taken + takenBack).toBe(COUNT);
    expect(taken).toBeGreaterThan(0);
    // and it read folders ahead: those gave the same stamps, digests and manifests as above
    expect(readAhead).toBeGreaterThan(0);
  });

  it('refuses the forged, the tampered and the incomplete, each with the reason verifying it alone gives', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    await forgeSignature(dirs[3]!, key);
    await forgeSignature(dirs[COUNT - 2]!, key);
    await writeFile(join(dirs[40]!, 'main.ts'), 'export default {};\n');
    await rm(join(dirs[70]!, 'profile.lock'));
    await rm(join(dirs[COUNT - 1]!, 'manifest.sig'));
    const outcomes = await verifyExecutors(dirs, { trustedKeys: [key] }, TWO_CORES);
    const found = reasons(outcomes);
    expect(found[3]).toBe('signature_invalid');
    expect(found[COUNT - 2]).toBe('signature_invalid');
    expect(found[40]).toBe('digest_mismatch');
    expect(found[70]).toBe('missing_artefact');
    expect(found[COUNT - 1]).toBe('missing_artefact');
    expect(found.filter((reason) => reason === 'ok')).toHaveLength(COUNT - 5);
    for (const index of [3, 40, 70, COUNT - 2, COUNT - 1]) {
      const alone = await verifyExecutor(dirs[index]!, { trustedKeys: [key] }).catch((error) => error);
      expect((outcomes[index]!.error as Error).message).toBe((alone as Error).message);
    }
  });
});

describe('which threads a whole catalog gets', () => {
  /** What verifyExecutors started for `dirs` with these settings and options. */
  async function threadsFor(
    dirs: string[],
    settings: Parameters<typeof verifyExecutors>[1],
    options: Parameters<typeof verifyExecutors>[2] = {},
  ) {
    const started: string[] = [];
    const outcomes = await verifyExecutors(dirs, settings, {
      ...options,
      onSignatures: () => started.push('signature thread'),
      onHelpers: (stats) => started.push(`${stats.helpers} reading helper(s)`),
    });
    expect(outcomes.every((outcome) => outcome.executor)).toBe(true);
    return started;
  }

  it('two cores: a signature thread; three or more, or a filled cache: reading helpers; one core, a small catalog or another backend: neither', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const settings = { trustedKeys: [key] };
    expect(await threadsFor(dirs, settings, { cores: 2 })).toEqual(['signature thread']);
    expect(await threadsFor(dirs, settings, { cores: 3 })).toEqual(['1 reading helper(s)']);
    expect(await threadsFor(dirs, settings, { cores: 4, helpers: 0 })).toEqual(['signature thread']);
    expect(await threadsFor(dirs, settings, { cores: 2, helpers: 1 })).toEqual(['1 reading helper(s)']);
    expect(await threadsFor(dirs, settings, { cores: 1 })).toEqual([]);
    expect(await threadsFor(dirs.slice(1), settings, { cores: 2 })).toEqual([]);
    expect(await threadsFor(dirs, { ...settings, backend: 'webcrypto' }, { cores: 2 })).toEqual([]);
    // a filled cache: few signatures to check, and a helper that reads is what helps
    const file = join(await temp.make('cache-'), 'verification-cache.json');
    const secretFile = join(await temp.make('secret-'), 'secret');
    const cache = await openVerificationCache({ file, secretFile });
    await verifyExecutors(dirs, { ...settings, verificationCache: cache }, { cores: 2 });
    await cache.save();
    const filled = await openVerificationCache({ file, secretFile });
    expect(filled.stored).toBeGreaterThan(0);
    expect(await threadsFor(dirs, { ...settings, verificationCache: filled }, { cores: 2 })).toEqual([
      '1 reading helper(s)',
    ]);
  });

  it('a folder whose statement does not fit a slot is checked here, in its turn', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const root = join(dirs[0]!, '..');
    const long = await writeSignedExecutor({
      root,
      name: 'zz_long',
      version: `1.0.0-${'a'.repeat(1000)}`,
      key,
    });
    const stats: { submitted: number }[] = [];
    const outcomes = await verifyExecutors(
      [...dirs, long.dir],
      { trustedKeys: [key] },
      { ...TWO_CORES, onSignatures: (s) => stats.push(s) },
    );
    expect(outcomes.every((outcome) => outcome.executor)).toBe(true);
    expect(stats[0]!.submitted).toBe(VERIFY_WORKER_MIN);
    await forgeSignature(long.dir, key);
    const refused = await verifyExecutors([...dirs, long.dir], { trustedKeys: [key] }, TWO_CORES);
    expect(reasons(refused).at(-1)).toBe('signature_invalid');
  });
});

describe('the signature thread fails closed', () => {
  /** A catalog with forged signatures at the start, the middle and the end. */
  async function forgedCatalog() {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const forged = [0, 31, COUNT - 1];
    for (const index of forged) await forgeSignature(dirs[index]!, key);
    return { key, dirs, forged };
  }

  /** Every folder but the forged ones verifies, and those are refused as forged. */
  function expectOnlyForgedRefused(outcomes: Awaited<ReturnType<typeof verifyExecutors>>, forged: number[]) {
    const found = reasons(outcomes);
    for (const [index, reason] of found.entries()) {
      expect([index, reason]).toEqual([index, forged.includes(index) ? 'signature_invalid' : 'ok']);
    }
  }

  it('its answers are what count: a thread that answers invalid refuses what it answered, and only that', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const body = `${claimAll} for (const i of mine) answer(i, 2);`;
    const stats: { taken: number; unanswered: number }[] = [];
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram: program(body), onSignatures: (s) => stats.push(s) },
    );
    const refused = reasons(outcomes).filter((reason) => reason === 'signature_invalid');
    expect(stats[0]!.taken).toBeGreaterThan(0);
    // invalid is an answer
    expect(stats[0]).toMatchObject({ unanswered: 0 });
    expect(refused).toHaveLength(stats[0]!.taken);
    expect(reasons(outcomes).filter((reason) => reason === 'ok')).toHaveLength(COUNT - stats[0]!.taken);
  });

  it('a thread that dies at once: every signature is checked here', async () => {
    const { key, dirs, forged } = await forgedCatalog();
    const stats: { taken: number; takenBack: number }[] = [];
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram: program('process.exit(3);'), onSignatures: (s) => stats.push(s) },
    );
    expectOnlyForgedRefused(outcomes, forged);
    expect(stats[0]).toMatchObject({ taken: 0, takenBack: COUNT });
  });

  it('a thread that answers "valid" for checks it made over other bytes: its answers do not count', async () => {
    const { key, dirs, forged } = await forgedCatalog();
    // every slot gets the bytes of the second check (a good signature), then is answered valid
    const body = `${claimAll} const size = workerData.slotSize;
      for (const i of mine) { slots.copyWithin(i * size, size, 2 * size); sizes[i * 2] = sizes[2]; answer(i, 1); }`;
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram: program(body) },
    );
    expectOnlyForgedRefused(outcomes, forged);
  });

  it('a thread that answers with anything but valid or invalid: those are checked here', async () => {
    const { key, dirs, forged } = await forgedCatalog();
    const body = `${claimAll} for (const i of mine) answer(i, 7);`;
    const stats: { taken: number; unanswered: number }[] = [];
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram: program(body), onSignatures: (s) => stats.push(s) },
    );
    expectOnlyForgedRefused(outcomes, forged);
    expect(stats[0]!.taken).toBeGreaterThan(0);
    expect(stats[0]!.unanswered).toBe(stats[0]!.taken);
  });

  it('a thread that takes every check and never answers: after a second, they are checked here', async () => {
    const { key, dirs, forged } = await forgedCatalog();
    const body = `${claimAll} setInterval(() => {}, 1000);`;
    const stats: { taken: number; unanswered: number }[] = [];
    const started = performance.now();
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram: program(body), onSignatures: (s) => stats.push(s) },
    );
    expectOnlyForgedRefused(outcomes, forged);
    expect(stats[0]!.taken).toBeGreaterThan(0);
    expect(stats[0]!.unanswered).toBe(stats[0]!.taken);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe('handing checks over', () => {
  it('refuses a statement too large for a slot, a signature of the wrong size, and more than it has room for', async () => {
    const key = await generateSigningKey();
    const thread = createSignatureThread(2, [key], { program: program('') })!;
    try {
      const signature = new Uint8Array(64);
      expect(thread.submit(new Uint8Array(SIGNATURE_SLOT_BYTES - 64 + 1), signature, 0)).toBeUndefined();
      expect(thread.submit(new Uint8Array(10), new Uint8Array(63), 0)).toBeUndefined();
      expect(thread.submit(new Uint8Array(SIGNATURE_SLOT_BYTES - 64), signature, 0)).toBe(0);
      expect(thread.submit(new Uint8Array(10), signature, 0)).toBe(1);
      expect(thread.submit(new Uint8Array(10), signature, 0)).toBeUndefined();
      expect(thread.stats().submitted).toBe(2);
    } finally {
      await thread.close();
    }
  });

  it('a check taken back is the caller’s once, and an answer counts only for the bytes and key it was given', async () => {
    const key = await generateSigningKey();
    // a thread that claims the first two checks as they come and answers them valid
    const body =
      'let next = 0; while (next < 2) { const signal = signalNow(); const n = Math.min(2, Atomics.load(counters, 0));' +
      'while (next < n) { if (claim(next)) answer(next, 1); next++; }' +
      'if (next < 2) sleep(signal); }';
    const thread = createSignatureThread(3, [key], { program: program(body) })!;
    try {
      await thread.ready();
      const statement = statementBytes({
        keyId: key.keyId,
        name: 'tool',
        version: '1.0.0',
        manifest: `blake3:${'a'.repeat(64)}`,
        code: `blake3:${'b'.repeat(64)}`,
        schema: `blake3:${'c'.repeat(64)}`,
        profileLock: `blake3:${'d'.repeat(64)}`,
      });
      const signature = new Uint8Array(64);
      for (let index = 0; index < 3; index++) thread.submit(statement, signature, 0);
      expect(thread.takeBack(2)).toBe(true);
      expect(thread.takeBack(2)).toBe(false);
      expect(thread.takeBack(3)).toBe(false);
      expect(thread.takeBack(-1)).toBe(false);
      await thread.finish();
      expect(thread.answer(0, statement, signature, 0)).toBe(true);
      expect(thread.answer(1, statement, signature, 0)).toBe(true);
      expect(thread.answer(2, statement, signature, 0)).toBeUndefined();
      expect(thread.answer(1, statement, signature, 1)).toBeUndefined();
      expect(thread.answer(1, statement.subarray(1), signature, 0)).toBeUndefined();
      expect(thread.answer(1, statement, new Uint8Array(64).fill(1), 0)).toBeUndefined();
      expect(thread.answer(3, statement, signature, 0)).toBeUndefined();
      expect(thread.stats()).toMatchObject({ submitted: 3, taken: 2, takenBack: 1, unanswered: 0 });
    } finally {
      await thread.close();
    }
  });

  /** A statement for the unit tests below. */
  const statementOf = (key: SigningKey) =>
    statementBytes({
      keyId: key.keyId,
      name: 'tool',
      version: '1.0.0',
      manifest: `blake3:${'a'.repeat(64)}`,
      code: `blake3:${'b'.repeat(64)}`,
      schema: `blake3:${'c'.repeat(64)}`,
      profileLock: `blake3:${'d'.repeat(64)}`,
    });

  it('takes nothing more once finished or closed', async () => {
    const key = await generateSigningKey();
    const thread = createSignatureThread(4, [key], { program: program('') })!;
    try {
      const signature = new Uint8Array(64);
      expect(thread.submit(statementOf(key), signature, 0)).toBe(0);
      await thread.finish();
      expect(thread.submit(statementOf(key), signature, 0)).toBeUndefined();
    } finally {
      await thread.close();
    }
    const closed = createSignatureThread(4, [key], { program: program('') })!;
    await closed.close();
    expect(closed.submit(statementOf(key), new Uint8Array(64), 0)).toBeUndefined();
  });

  it('waits for checks the thread takes only after the last was handed over, with the key each names', async () => {
    const [first, second] = [await generateSigningKey(), await generateSigningKey()];
    // claims and answers valid only once no more can come; also writes an answer it has no claim for
    const body = `${claimAll} for (const i of mine) answer(i, 1); Atomics.store(answers, 2, 1);`;
    const thread = createSignatureThread(3, [first, second], {
      program: program(body),
      patience: 60_000,
    })!;
    try {
      await thread.ready();
      const statement = statementOf(first);
      const signature = new Uint8Array(64);
      expect(thread.submit(statement, signature, 0)).toBe(0);
      expect(thread.submit(statement, signature, 1)).toBe(1);
      expect(thread.submit(statement, signature, 1)).toBe(2);
      expect(thread.takeBack(2)).toBe(true);
      await thread.finish();
      expect(thread.answer(0, statement, signature, 0)).toBe(true);
      expect(thread.answer(1, statement, signature, 1)).toBe(true);
      expect(thread.answer(1, statement, signature, 0)).toBeUndefined();
      // taken back: the answer written for it without a claim does not count
      expect(thread.answer(2, statement, signature, 1)).toBeUndefined();
      expect(thread.answer(-1, statement, signature, 0)).toBeUndefined();
      expect(thread.answer(0.5, statement, signature, 0)).toBeUndefined();
      expect(thread.stats()).toMatchObject({ submitted: 3, taken: 2, takenBack: 1, unanswered: 0 });
    } finally {
      await thread.close();
    }
  });

  it('does not wait for a thread that ended holding checks, however patient', async () => {
    const key = await generateSigningKey();
    const body = `${claimAll} process.exit(0);`;
    const thread = createSignatureThread(2, [key], { program: program(body), patience: 60_000 })!;
    try {
      await thread.ready();
      const statement = statementOf(key);
      const signature = new Uint8Array(64);
      thread.submit(statement, signature, 0);
      thread.submit(statement, signature, 0);
      // the test's own time limit is far below the patience: only the thread's end stops the wait
      await thread.finish();
      expect(thread.answer(0, statement, signature, 0)).toBeUndefined();
      expect(thread.stats()).toMatchObject({ taken: 2, unanswered: 2 });
    } finally {
      await thread.close();
    }
  });

  it('reserves room for at most MAX_SIGNATURE_SLOTS checks, however many are announced', async () => {
    const key = await generateSigningKey();
    // a terabyte of slots, were the number announced believed
    const thread = createSignatureThread(2 ** 30, [key], { program: program('') })!;
    try {
      const statement = new Uint8Array(10);
      const signature = new Uint8Array(64);
      for (let index = 0; index < MAX_SIGNATURE_SLOTS; index++) thread.submit(statement, signature, 0);
      expect(thread.submit(statement, signature, 0)).toBeUndefined();
      expect(thread.stats().submitted).toBe(MAX_SIGNATURE_SLOTS);
    } finally {
      await thread.close();
    }
  });
});

/** The four artefacts every version folder has under a fixed name. */
const FIXED_FILES = ['manifest.toml', 'schema.json', 'profile.lock', 'manifest.sig'];

/**
 * Starts the real thread with a read lane over `dirs` (reading code when `manifestFile` is
 * given), lets it read ahead, hands it to `use`, and ends it.
 */
async function withLane(
  dirs: string[],
  key: SigningKey,
  manifestFile: string | undefined,
  use: (thread: NonNullable<ReturnType<typeof createSignatureThread>>) => void,
): Promise<void> {
  const thread = createSignatureThread(dirs.length, [key], {
    lane: { dirs, files: FIXED_FILES, manifestFile },
  })!;
  try {
    await thread.ready();
    await new Promise((resolve) => setTimeout(resolve, 200));
    use(thread);
  } finally {
    await thread.close();
  }
}

describe('the read lane', () => {
  /**
   * A thread program that plays the read lane with `body` (given `states`, `table` and `data`,
   * the folder count `folders` and the number of files per folder `files`) and checks no
   * signature: every check is the caller's.
   */
  const lane = (body: string) =>
    program(
      'const states = new Int32Array(workerData.lane.states); const table = new Int32Array(workerData.lane.table);' +
        'const codes = new Int32Array(workerData.lane.codes);' +
        'const data = Buffer.from(workerData.lane.data); const folders = states.length;' +
        `const files = workerData.lane.files.length; ${body}`,
    );

  /** A catalog of COUNT signed folders verified on two cores, the thread running `signatureProgram`. */
  async function verifyWith(signatureProgram: string) {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const stats: { readAhead: number; readWaits: number; taken: number }[] = [];
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, signatureProgram, onSignatures: (s) => stats.push(s) },
    );
    return { found: reasons(outcomes), stats: stats[0]! };
  }

  it('what it delivers is checked like what is read here: empty files get the folders refused, none accepted', async () => {
    // every folder it can claim, "read" as four empty files
    const body =
      "for (let i = 0; i < folders; i++) if (Atomics.compareExchange(states, i, 0, 2) === 0) { data.write('x', 0, 'latin1');" +
      'for (let f = 0; f < files; f++) table.set([0, 0, 0, 1], (i * files + f) * 4); Atomics.store(states, i, 3); }';
    const { found, stats } = await verifyWith(lane(body));
    expect(stats.readAhead).toBeGreaterThan(0);
    expect(found.filter((reason) => reason !== 'ok')).toHaveLength(stats.readAhead);
    expect(found.filter((reason) => reason === 'ok').length).toBe(COUNT - stats.readAhead);
  });

  it('a delivery that points outside the lane is not used: the caller reads that folder itself', async () => {
    const body =
      'for (let i = 0; i < folders; i++) if (Atomics.compareExchange(states, i, 0, 2) === 0) {' +
      'for (let f = 0; f < files; f++) table.set([data.length - 1, 2, 0, 1], (i * files + f) * 4); Atomics.store(states, i, 3); }';
    const { found, stats } = await verifyWith(lane(body));
    expect(found.every((reason) => reason === 'ok')).toBe(true);
    expect(stats.readAhead).toBe(0);
  });

  it('a thread that claims folders and never reads them: the caller waits once, then reads every folder itself', async () => {
    const body =
      'for (let i = 0; i < folders; i++) Atomics.compareExchange(states, i, 0, 2); setInterval(() => {}, 1000);';
    const { found, stats } = await verifyWith(lane(body));
    expect(found.every((reason) => reason === 'ok')).toBe(true);
    expect(stats).toMatchObject({ readAhead: 0, readWaits: 1 });
  });

  it('a folder too large for the lane is read here, and the rest still comes through the lane', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const root = join(dirs[0]!, '..');
    // a schema larger than the whole lane
    const large = await writeSignedExecutor({
      root,
      name: 'zz_large',
      key,
      schema: {
        definitions: {
          Input: { type: 'object', description: 'x'.repeat(READ_LANE_BYTES_PER_FOLDER * (COUNT + 2)) },
          Output: { type: 'object' },
        },
      },
    });
    const stats: { readAhead: number }[] = [];
    const outcomes = await verifyExecutors(
      [...dirs, large.dir],
      { trustedKeys: [key] },
      { ...TWO_CORES, onSignatures: (s) => stats.push(s) },
    );
    expect(reasons(outcomes).every((reason) => reason === 'ok')).toBe(true);
    expect(outcomes.at(-1)!.executor!.schema).toEqual(
      (await verifyExecutor(large.dir, { trustedKeys: [key] })).schema,
    );
    expect(stats[0]!.readAhead).toBeGreaterThan(0);
  });

  it('hands over exactly what the thread marked read, refuses entries outside the lane, waits once, then gives up', async () => {
    const key = await generateSigningKey();
    const files = ['a', 'b', 'c', 'd'];
    const dirs = Array.from({ length: 20 }, (_, index) => `/nowhere/${index}`);
    // folders 0–9 and 12 marked read at once (1–8 with one entry out of place each), 10 marked
    // read 5 ms after the caller comes to it, 11 held forever
    const body = `const put = (i, entries) => { entries.forEach((e, f) => table.set(e, (i * files + f) * 4)); Atomics.store(states, i, 3); };
      data.write('abcdefghijkl', 0, 'latin1'); data.write('xyz', data.length - 3, 'latin1');
      const good = () => [[0, 2, 8, 1], [2, 2, 9, 1], [4, 2, 10, 1], [6, 2, 11, 1]];
      const variant = (change) => { const e = good(); e[2] = change(e[2]); return e; };
      put(0, good());
      put(1, variant(([, l, s, sl]) => [-1, l, s, sl]));
      put(2, variant(([a, , s, sl]) => [a, -1, s, sl]));
      put(3, variant(([a, l, , sl]) => [a, l, -1, sl]));
      put(4, variant(([a, l, s]) => [a, l, s, -1]));
      put(5, variant(([, , s, sl]) => [data.length - 2, 2, s, sl]));
      put(6, variant(([, , s, sl]) => [data.length - 1, 2, s, sl]));
      put(7, variant(([a, l]) => [a, l, data.length - 1, 1]));
      put(8, variant(([a, l]) => [a, l, data.length - 1, 2]));
      put(9, variant(([a, l, s]) => [a, l, s, 0]));
      Atomics.store(states, 10, 2); Atomics.store(states, 11, 2); put(12, good());
      const poll = setInterval(() => { if (Atomics.load(counters, 4) === 10) { clearInterval(poll);
        setTimeout(() => put(10, good()), 5); } }, 1);
      setInterval(() => {}, 1000);`;
    const thread = createSignatureThread(dirs.length, [key], { program: lane(body), lane: { dirs, files } })!;
    try {
      await thread.ready();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const read = (index: number) => {
        const artefacts = thread.reached(index);
        return (
          artefacts &&
          [...artefacts].map(([file, { bytes, stamp }]) => `${file}=${bytes.toString('latin1')}/${stamp}`)
        );
      };
      const whole = ['a=ab/i', 'b=cd/j', 'c=ef/k', 'd=gh/l'];
      // not folders of the lane: nothing, and no folder claimed by mistake
      expect(read(-1)).toBeUndefined();
      expect(read(0.5)).toBeUndefined();
      expect(read(20)).toBeUndefined();
      expect(read(0)).toEqual(whole);
      for (const index of [1, 2, 3, 4, 6, 8]) expect([index, read(index)]).toEqual([index, undefined]);
      expect(read(5)).toEqual(['a=ab/i', 'b=cd/j', 'c=yz/k', 'd=gh/l']);
      expect(read(7)).toEqual(['a=ab/i', 'b=cd/j', 'c=ef/z', 'd=gh/l']);
      expect(read(10)).toEqual(whole);
      expect(read(9)).toEqual(['a=ab/i', 'b=cd/j', 'c=ef/', 'd=gh/l']);
      expect(read(11)).toBeUndefined();
      // given up: what the thread read after that is not asked for
      expect(read(12)).toBeUndefined();
      expect(thread.stats()).toMatchObject({ readAhead: 5, readWaits: 2 });
    } finally {
      await thread.close();
    }
    const without = createSignatureThread(2, [key], { program: program('') })!;
    expect(without.reached(0)).toBeUndefined();
    await without.close();
  });

  it('reads the code file each manifest names as well, and a code file it cannot read is left to the caller', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(6, key);
    await rm(join(dirs[3]!, 'main.ts'));
    await withLane(dirs, key, 'manifest.toml', (thread) => {
      for (const [index, dir] of dirs.entries()) {
        const artefacts = thread.reached(index)!;
        if (index === 3) {
          expect([...artefacts.keys()]).toEqual(FIXED_FILES);
          continue;
        }
        expect([...artefacts.keys()]).toEqual([...FIXED_FILES, 'main.ts']);
        const code = readArtefactFile(join(dir, 'main.ts'));
        expect(artefacts.get('main.ts')).toEqual({ bytes: code.bytes, stamp: code.stamp });
      }
      expect(thread.stats().readAhead).toBe(dirs.length);
    });
    // without a manifest named, the lane reads the fixed files only
    await withLane(dirs, key, undefined, (thread) => {
      expect([...thread.reached(0)!.keys()]).toEqual(FIXED_FILES);
    });
  });

  it('code files never push the fixed artefacts of later folders out of the lane', async () => {
    const key = await generateSigningKey();
    const root = await temp.make('root-');
    const dirs: string[] = [];
    // each code file as large as a folder's share of the lane: read ahead whole, they would
    // fill it before the last folders
    const code = `export default () => 1; // ${'x'.repeat(READ_LANE_BYTES_PER_FOLDER)}\n`;
    for (let index = 0; index < 20; index++) {
      dirs.push(
        (await writeSignedExecutor({ root, name: `big_${String(index).padStart(2, '0')}`, key, code })).dir,
      );
    }
    await withLane(dirs, key, 'manifest.toml', (thread) => {
      const delivered = dirs.map((_, index) => [...(thread.reached(index)?.keys() ?? [])]);
      // every folder's fixed artefacts came through the lane; code only while there was room
      expect(delivered.every((names) => FIXED_FILES.every((file) => names.includes(file)))).toBe(true);
      expect(delivered[0]).toContain('main.ts');
      expect(delivered.at(-1)).not.toContain('main.ts');
    });
  });

  it('the code an executor keeps is its own copy of what was hashed, never a view of the lane', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const stats: { readAhead: number }[] = [];
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { ...TWO_CORES, onSignatures: (s) => stats.push(s) },
    );
    expect(stats[0]!.readAhead).toBeGreaterThan(0);
    for (const [index, outcome] of outcomes.entries()) {
      const code = outcome.executor!.code;
      expect(code.buffer).not.toBeInstanceOf(SharedArrayBuffer);
      expect(code.byteLength).toBe(code.buffer.byteLength);
      expect(code.equals(readArtefactFile(join(dirs[index]!, 'main.ts')).bytes)).toBe(true);
    }
  });

  /**
   * A lane that delivers each folder's fixed files as they are, and `code` under `name` as its
   * code file (identities left empty).
   */
  const codeLane = (name: string, code: string) =>
    lane(`const { readFileSync } = require('node:fs'); let used = 0;
      const put = (bytes) => { data.set(bytes, used); const entry = [used, bytes.length, used, 0]; used += bytes.length; return entry; };
      for (let i = 0; i < folders; i++) if (Atomics.compareExchange(states, i, 0, 2) === 0) {
        workerData.lane.files.forEach((file, f) => table.set(put(readFileSync(workerData.lane.dirs[i] + '/' + file)), (i * files + f) * 4));
        const bytes = put(Buffer.from(${JSON.stringify(code)})); const named = put(Buffer.from(${JSON.stringify(name)}));
        codes.set([bytes[0], bytes[1], 0, 0, named[0], named[1]], i * 6);
        Atomics.store(states, i, 3); }`);

  it('delivered code is hashed like code read here: changed bytes get the folder refused as modified after signing', async () => {
    const { found, stats } = await verifyWith(codeLane('main.ts', 'export default () => 1;'));
    expect(stats.readAhead).toBeGreaterThan(0);
    expect(found.filter((reason) => reason === 'digest_mismatch')).toHaveLength(stats.readAhead);
    expect(found.filter((reason) => reason === 'ok')).toHaveLength(COUNT - stats.readAhead);
  });

  it("code delivered under another name, or under a fixed artefact's name, is not used: the caller reads the code itself", async () => {
    for (const name of ['other.ts', 'schema.json', 'manifest.sig']) {
      const { found, stats } = await verifyWith(codeLane(name, '{}'));
      expect(stats.readAhead).toBeGreaterThan(0);
      expect([name, found.every((reason) => reason === 'ok')]).toEqual([name, true]);
    }
  });

  it('hands over a code file only under a name and bytes that lie inside the lane, never in place of a fixed one', async () => {
    const key = await generateSigningKey();
    const files = ['a', 'b', 'c', 'd'];
    const dirs = Array.from({ length: 9 }, (_, index) => `/nowhere/${index}`);
    // every folder's fixed files as in the test above; its code entry is [bytes at, length,
    // identity at, length, name at, length]: 'CODE' at 12, 'run.ts' at 16, 'xyz' at the end
    const body = `data.write('abcdefghijklCODErun.ts', 0, 'latin1'); data.write('xyz', data.length - 3, 'latin1');
      const good = [[0, 2, 8, 1], [2, 2, 9, 1], [4, 2, 10, 1], [6, 2, 11, 1]];
      const code = [[12, 4, 8, 1, 16, 6], [12, 4, 8, 1, -1, 6], [12, 4, 8, 1, 16, 0],
        [12, 4, 8, 1, data.length - 3, 6], [12, 4, 8, 1, data.length - 3, 3], [12, 4, 8, 1, 0, 2],
        [-1, 4, 8, 1, 16, 6], [12, 4, 8, 1, 0, 1], [0, 0, 0, 0, 0, 0]];
      for (let i = 0; i < folders; i++) { good.forEach((e, f) => table.set(e, (i * files + f) * 4));
        codes.set(code[i], i * 6); Atomics.store(states, i, 3); }
      setInterval(() => {}, 1000);`;
    const thread = createSignatureThread(dirs.length, [key], { program: lane(body), lane: { dirs, files } })!;
    try {
      await thread.ready();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const read = (index: number) =>
        [...thread.reached(index)!].map(
          ([file, { bytes, stamp }]) => `${file}=${bytes.toString('latin1')}/${stamp}`,
        );
      const whole = ['a=ab/i', 'b=cd/j', 'c=ef/k', 'd=gh/l'];
      expect(read(0)).toEqual([...whole, 'run.ts=CODE/i']);
      // a name outside the lane, empty, or running past its end: no code
      for (const index of [1, 2, 3]) expect([index, read(index)]).toEqual([index, whole]);
      // a name that ends where the lane ends, or starts where it starts
      expect(read(4)).toEqual([...whole, 'xyz=CODE/i']);
      expect(read(5)).toEqual([...whole, 'ab=CODE/i']);
      // bytes outside the lane: no code under that name either
      expect(read(6)).toEqual(whole);
      // a fixed artefact's name: the fixed one stays
      expect(read(7)).toEqual(whole);
      // nothing read
      expect(read(8)).toEqual(whole);
    } finally {
      await thread.close();
    }
  });

  it('a thread that throws: the caller hears of its end and does everything itself', async () => {
    const { found, stats } = await verifyWith(program("throw new Error('broken');"));
    expect(found.every((reason) => reason === 'ok')).toBe(true);
    expect(stats).toMatchObject({ taken: 0, readAhead: 0 });
  });
});
