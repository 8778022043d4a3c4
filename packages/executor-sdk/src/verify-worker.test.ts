import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { VerificationError } from './errors.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import { statementBytes } from './signature.ts';
import { writeSignedExecutor } from './test/index.ts';
import { verifyExecutor, verifyExecutors } from './verify.ts';
import { createVerifyWorker, VERIFY_WORKER_MIN } from './verify-worker.ts';

const temp = useTempDirs('metnos-verify-worker-');
const COUNT = VERIFY_WORKER_MIN + 36;

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

describe('verifying a whole catalog with the helper thread', () => {
  it('gives, folder by folder, exactly what verifying each alone gives: the same bytes, digests and file identities', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    const together = await verifyExecutors(dirs, { trustedKeys: [key] });
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
  });

  it('refuses the forged, the tampered and the incomplete among them, each with the reason verifying it alone gives', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(COUNT, key);
    // spread through the list, so some fall to the helper and some to this thread
    await forgeSignature(dirs[3]!, key);
    await forgeSignature(dirs[COUNT - 2]!, key);
    await writeFile(join(dirs[40]!, 'main.ts'), 'export default {};\n');
    await rm(join(dirs[70]!, 'profile.lock'));
    await rm(join(dirs[COUNT - 1]!, 'manifest.sig'));
    const outcomes = await verifyExecutors(dirs, { trustedKeys: [key] });
    const reasons = outcomes.map((outcome) =>
      outcome.error ? (VerificationError.isInstance(outcome.error) ? outcome.error.reason : 'other') : 'ok',
    );
    expect(reasons[3]).toBe('signature_invalid');
    expect(reasons[COUNT - 2]).toBe('signature_invalid');
    expect(reasons[40]).toBe('digest_mismatch');
    expect(reasons[70]).toBe('missing_artefact');
    expect(reasons[COUNT - 1]).toBe('missing_artefact');
    expect(reasons.filter((reason) => reason === 'ok')).toHaveLength(COUNT - 5);
    for (const index of [3, 40, 70, COUNT - 2, COUNT - 1]) {
      const alone = await verifyExecutor(dirs[index]!, { trustedKeys: [key] }).catch((error) => error);
      expect((outcomes[index]!.error as Error).message).toBe((alone as Error).message);
    }
  });
});

/** A statement signed with `key`, its signature, and the same bytes with one bit changed. */
async function signed(key: SigningKey) {
  const { sign } = await import('node:crypto');
  const { nodeSigningKey } = await import('./keys.ts');
  const bytes = statementBytes({
    keyId: key.keyId,
    name: 'a',
    version: '1.0.0',
    manifest: 'm',
    code: 'c',
    schema: 's',
    profileLock: 'p',
  });
  const signature = new Uint8Array(sign(null, bytes, nodeSigningKey(key)));
  const other = Uint8Array.from(bytes);
  other[other.length - 2] = other.at(-2)! ^ 1;
  return { bytes, signature, other };
}

describe('createVerifyWorker', () => {
  it('answers a signature check with the check itself: valid for the signed bytes, invalid for any other', async () => {
    const key = await generateSigningKey();
    const worker = createVerifyWorker([], []);
    expect(worker).toBeDefined();
    const { bytes, signature, other } = await signed(key);
    const answers = await Promise.all([
      worker!.check(bytes, signature, key),
      worker!.check(other, signature, key),
      worker!.check(
        bytes,
        signature.map((byte, index) => (index === 0 ? byte ^ 1 : byte)),
        key,
      ),
      worker!.check(bytes, signature, await generateSigningKey()),
    ]);
    expect(answers).toEqual([true, false, false, false]);
    await worker!.close();
    // once stopped, a check is made on this thread: still a check, never a yes
    expect(await worker!.check(bytes, signature, key)).toBe(true);
    expect(await worker!.check(other, signature, key)).toBe(false);
  });

  it('never reads a folder twice: each is read by the helper or left to this thread, by a shared claim', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const worker = createVerifyWorker(dirs, ['manifest.toml', 'manifest.sig'])!;
    // this thread claims the first half before the helper is up, the helper reads the rest
    const mine = dirs.slice(0, dirs.length / 2).map((_, index) => worker.artefacts(index));
    expect(mine).toEqual(mine.map(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const theirs = await Promise.all(
      dirs.slice(dirs.length / 2).map((_, index) => worker.artefacts(index + dirs.length / 2)),
    );
    for (const [offset, artefacts] of theirs.entries()) {
      const dir = dirs[offset + dirs.length / 2]!;
      expect([...artefacts!.keys()]).toEqual(['manifest.toml', 'manifest.sig']);
      expect(artefacts!.get('manifest.sig')!.bytes.toString('utf8')).toBe(
        await readFile(join(dir, 'manifest.sig'), 'utf8'),
      );
      // the identity of each file, as this thread takes it (manifest first, signature last)
      const stamps = (await verifyExecutor(dir, { trustedKeys: [key] })).stamps.split('|');
      expect(artefacts!.get('manifest.toml')!.stamp).toBe(stamps[0]);
      expect(artefacts!.get('manifest.sig')!.stamp).toBe(stamps[4]);
    }
    // asked again, a folder is never handed out a second time
    expect(dirs.map((_, index) => worker.artefacts(index))).toEqual(dirs.map(() => undefined));
    await worker.close();
  });

  it('reads the folders it claims and checks every signature it is given, and says so', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const worker = createVerifyWorker(dirs, ['manifest.sig'])!;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const read = await Promise.all(dirs.map((_, index) => worker.artefacts(index)));
    expect(read.every((artefacts) => artefacts?.has('manifest.sig'))).toBe(true);
    const { bytes, signature, other } = await signed(key);
    // more than one message's worth, and a few after
    const answers = await Promise.all(
      Array.from({ length: 37 }, (_, index) => worker.check(index % 2 ? other : bytes, signature, key)),
    );
    expect(answers).toEqual(Array.from({ length: 37 }, (_, index) => index % 2 === 0));
    expect(worker.stats()).toEqual({ read: dirs.length, checked: 37, checkedHere: 0, failed: false });
    await worker.close();
    expect(worker.stats().failed).toBe(false);
  });

  it('close waits for the checks already asked, then every later one is made here', async () => {
    const key = await generateSigningKey();
    const worker = createVerifyWorker([], [])!;
    const { bytes, signature, other } = await signed(key);
    // three messages' worth, all asked before close
    const asked = Array.from({ length: 40 }, (_, index) =>
      worker.check(index % 3 ? bytes : other, signature, key),
    );
    await worker.close();
    expect(await Promise.all(asked)).toEqual(Array.from({ length: 40 }, (_, index) => index % 3 !== 0));
    expect(worker.stats()).toMatchObject({ checked: 40, checkedHere: 0 });
    expect(await worker.check(other, signature, key)).toBe(false);
    expect(worker.stats()).toMatchObject({ checkedHere: 1, failed: false });
    expect(worker.artefacts(0)).toBeUndefined();
  });

  it('is not started on one core', () => {
    expect(createVerifyWorker([], [], { cores: 1 })).toBeUndefined();
    expect(createVerifyWorker([], [], { cores: 2 })).toBeDefined();
  });

  describe('fails closed', () => {
    /** A helper program for a misbehaving helper: `body` runs with parentPort and workerData. */
    const program = (body: string) =>
      `const { parentPort, workerData } = require('node:worker_threads');\n${body}`;

    it('a helper that dies at once: every folder is read here and every signature checked here', async () => {
      const key = await generateSigningKey();
      const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
      const worker = createVerifyWorker(dirs, ['manifest.sig'], { program: program('process.exit(3);') })!;
      const { bytes, signature, other } = await signed(key);
      const answers = await Promise.all([
        worker.check(bytes, signature, key),
        worker.check(other, signature, key),
      ]);
      expect(answers).toEqual([true, false]);
      expect(await Promise.all(dirs.map((_, index) => worker.artefacts(index)))).toEqual(
        dirs.map(() => undefined),
      );
      expect(worker.stats()).toMatchObject({ read: 0, checked: 0, checkedHere: 2, failed: true });
      await worker.close();
    });

    it('a helper that dies while folders are promised to it: they are read here', async () => {
      const key = await generateSigningKey();
      const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
      // claims every folder, delivers none, then stops
      const body =
        'const claims = new Int32Array(workerData.claims);' +
        'for (let i = 0; i < workerData.dirs.length; i++) Atomics.store(claims, i, 2);' +
        'setTimeout(() => process.exit(1), 1500);';
      const worker = createVerifyWorker(dirs, ['manifest.sig'], { program: program(body) })!;
      await new Promise((resolve) => setTimeout(resolve, 800));
      const promised = dirs.map((_, index) => worker.artefacts(index));
      expect(promised.every((entry) => entry instanceof Promise)).toBe(true);
      expect(await Promise.all(promised)).toEqual(dirs.map(() => undefined));
      expect(worker.stats().failed).toBe(true);
      await worker.close();
    });

    it('an answer of the wrong length or to nothing asked: the helper is dropped and the checks made here', async () => {
      const key = await generateSigningKey();
      const { bytes, signature, other } = await signed(key);
      for (const answer of [
        "parentPort.postMessage({ kind: 'signatures', first: m.first, valid: new Uint8Array(m.items.length + 1).fill(1) })",
        "parentPort.postMessage({ kind: 'signatures', first: m.first + 100, valid: new Uint8Array(m.items.length).fill(1) })",
        "parentPort.postMessage({ kind: 'signatures', first: m.first })",
      ]) {
        const worker = createVerifyWorker([], [], {
          program: program(`parentPort.on('message', (m) => ${answer});`),
        })!;
        expect(
          await Promise.all([worker.check(bytes, signature, key), worker.check(other, signature, key)]),
        ).toEqual([true, false]);
        expect(worker.stats()).toMatchObject({ checked: 0, checkedHere: 2, failed: true });
        await worker.close();
      }
    });

    it('artefacts for a folder it did not claim, or twice: the helper is dropped', async () => {
      const key = await generateSigningKey();
      const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
      const fake = "{ index: 0, artefacts: [{ bytes: new Uint8Array([1]), stamp: 'forged' }] }";
      for (const body of [
        // folder 0, never claimed
        `parentPort.postMessage({ kind: 'artefacts', batch: [${fake}] });`,
        // claimed, then sent twice
        `Atomics.store(new Int32Array(workerData.claims), 0, 2); parentPort.postMessage({ kind: 'artefacts', batch: [${fake}, ${fake}] });`,
      ]) {
        const worker = createVerifyWorker(dirs, ['manifest.sig'], {
          program: program(`${body} setInterval(() => {}, 1000);`),
        })!;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(worker.stats().failed).toBe(true);
        expect(await worker.artefacts(0)).toBeUndefined();
        await worker.close();
      }
    });

    it('a folder sent again after it was handed out: the helper is dropped', async () => {
      const key = await generateSigningKey();
      const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
      const fake = "{ index: 0, artefacts: [{ bytes: new Uint8Array([1]), stamp: 's' }] }";
      const body =
        'Atomics.store(new Int32Array(workerData.claims), 0, 2);' +
        `parentPort.postMessage({ kind: 'artefacts', batch: [${fake}] });` +
        `setTimeout(() => parentPort.postMessage({ kind: 'artefacts', batch: [${fake}] }), 1500);` +
        'setInterval(() => {}, 1000);';
      const worker = createVerifyWorker(dirs, ['manifest.sig'], { program: program(body) })!;
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect((await worker.artefacts(0))?.get('manifest.sig')?.stamp).toBe('s');
      expect(worker.stats().failed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(worker.stats().failed).toBe(true);
      await worker.close();
    });
  });

  it('hands a folder asked for before it arrived over when it does, and one it never sends back to this thread', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    // claims folders 0 and 1 at once, sends 0 a moment later, never 1, then says it is done
    const body =
      "const { parentPort, workerData } = require('node:worker_threads');" +
      'const claims = new Int32Array(workerData.claims); Atomics.store(claims, 0, 2); Atomics.store(claims, 1, 2);' +
      "setTimeout(() => parentPort.postMessage({ kind: 'artefacts', batch: [{ index: 0, artefacts: [{ bytes: new Uint8Array([7]), stamp: 'late' }, { failed: true }] }] }), 1200);" +
      "setTimeout(() => parentPort.postMessage({ kind: 'artefacts', batch: [], done: true }), 1500);" +
      'setInterval(() => {}, 1000);';
    const worker = createVerifyWorker(dirs, ['manifest.sig', 'schema.json'], { program: body })!;
    // long enough for the helper to be up and claim, on a busy machine
    await new Promise((resolve) => setTimeout(resolve, 800));
    const first = worker.artefacts(0);
    const second = worker.artefacts(1);
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBeInstanceOf(Promise);
    const arrived = await first;
    // what it could not read is left out, for this thread to read and report
    expect([...arrived!.keys()]).toEqual(['manifest.sig']);
    expect(arrived!.get('manifest.sig')).toMatchObject({ stamp: 'late' });
    expect(await second).toBeUndefined();
    // asked again, neither comes a second time; a folder asked after the end is read here
    expect(worker.artefacts(0)).toBeUndefined();
    expect(worker.artefacts(1)).toBeUndefined();
    expect(worker.artefacts(2)).toBeUndefined();
    expect(worker.stats()).toMatchObject({ read: 1, failed: false });
    await worker.close();
  });
});
