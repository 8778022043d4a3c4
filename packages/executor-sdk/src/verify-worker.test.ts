import { execFileSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { VerificationError } from './errors.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import { writeSignedExecutor } from './test/index.ts';
import { verifyExecutor, verifyExecutors } from './verify.ts';
import {
  createVerifyWorker,
  type HelperDelivery,
  MAX_VERIFY_HELPERS,
  VERIFY_WORKER_MIN,
  type VerifyWorker,
} from './verify-worker.ts';

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
    const together = await verifyExecutors(dirs, { trustedKeys: [key] }, { helpers: 1 });
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
    const outcomes = await verifyExecutors(dirs, { trustedKeys: [key] }, { helpers: 1 });
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

describe('a FIFO where an artefact belongs', () => {
  it('is refused as a missing artefact on either thread, and nothing waits for a writer', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    // the first folder falls to the helper, the last to this thread
    for (const [dir, file] of [
      [dirs[0]!, 'main.ts'],
      [dirs.at(-1)!, 'manifest.sig'],
    ] as const) {
      await rm(join(dir, file));
      execFileSync('mkfifo', [join(dir, file)]);
    }
    const outcomes = await verifyExecutors(dirs, { trustedKeys: [key] }, { helpers: 1 });
    for (const [index, file] of [
      [0, 'main.ts'],
      [dirs.length - 1, 'manifest.sig'],
    ] as const) {
      expect(outcomes[index]!.error).toMatchObject({ reason: 'missing_artefact', artefact: file });
    }
    expect(outcomes.filter((outcome) => outcome.executor)).toHaveLength(dirs.length - 2);
    await expect(verifyExecutor(dirs[0]!, { trustedKeys: [key] })).rejects.toMatchObject({
      reason: 'missing_artefact',
    });
  });
});

const LAYOUT = {
  files: ['manifest.toml', 'schema.json', 'profile.lock', 'manifest.sig'],
  manifestFile: 'manifest.toml',
  signatureFile: 'manifest.sig',
};

/** Takes every folder from the worker as verifyExecutors does, waiting when the helper holds the rest. */
async function drain(worker: VerifyWorker) {
  const steps: { index: number; delivery?: HelperDelivery }[] = [];
  for (;;) {
    const step = worker.next();
    if (step) steps.push(step);
    else if (!(await worker.wait())) {
      const last = worker.next();
      if (!last) return steps;
      steps.push(last);
    }
  }
}

/** Takes the helper's messages, without claiming anything, until `done()` holds or the helper is gone. */
async function waitUntil(worker: VerifyWorker, done: () => boolean) {
  const deadline = Date.now() + 20_000;
  while (!done() && Date.now() < deadline) if (!(await worker.wait())) return;
}

/** Lets the helper finish everything it will do before this thread takes anything. */
async function settle(worker: VerifyWorker) {
  while (await worker.wait()) {}
}

/** A helper program that misbehaves: `body` runs with workerData and a `send(message)` that also wakes the caller. */
const program = (body: string) =>
  "const { workerData } = require('node:worker_threads');" +
  'const bumps = new Int32Array(workerData.signal);' +
  'const claim = (i) => Atomics.store(new Int32Array(workerData.claims), i, workerData.mark);' +
  'const send = (message, transfer) => { workerData.port.postMessage(message, transfer); Atomics.add(bumps, 0, 1); Atomics.notify(bumps, 0); };' +
  body;

/** A message for folder 0 with one artefact of one byte, in the helper's format; `change` alters the item. */
const oneFolder = (change = '') =>
  `const arena = new Uint8Array([7]).buffer; const item = { index: 0, artefacts: [[0, 1, 'stamp'], null, null, null], code: null, check: null }; ${change}`;

describe('createVerifyWorker', () => {
  it('is not started on one core', async () => {
    expect(createVerifyWorker([], LAYOUT, [], { cores: 1 })).toBeUndefined();
    const worker = createVerifyWorker([], LAYOUT, [], { cores: 2 });
    expect(worker).toBeDefined();
    await worker!.close();
  });

  it('hands out every folder exactly once: the helper works from the first, this thread claims from the last', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key])!;
    // before the helper is up, this thread has the last folder, then the one before it
    expect(worker.next()).toEqual({ index: dirs.length - 1 });
    expect(worker.next()).toEqual({ index: dirs.length - 2 });
    await settle(worker);
    const steps = [{ index: dirs.length - 1 }, { index: dirs.length - 2 }, ...(await drain(worker))];
    expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    const stats = worker.stats();
    expect(stats.delivered + stats.claimedHere).toBe(dirs.length);
    expect(stats).toMatchObject({ delivered: dirs.length - 2, claimedHere: 2, takenBack: 0, failed: false });
    await worker.close();
  });

  it('delivers the bytes of every artefact with the identity of its file, the code file the manifest names, and a signature check', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    await forgeSignature(dirs[5]!, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key])!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.every((step) => step.delivery !== undefined)).toBe(true);
    for (const { index, delivery } of steps.filter((step) => step.index < 8)) {
      const dir = dirs[index]!;
      const files = ['manifest.toml', 'main.ts', 'schema.json', 'profile.lock', 'manifest.sig'];
      const stamps = (await verifyExecutors([dir], { trustedKeys: [key] }))[0]!.executor?.stamps.split('|');
      expect([...delivery!.artefacts.keys()].sort()).toEqual([...files].sort());
      for (const [position, file] of files.entries()) {
        const artefact = delivery!.artefacts.get(file)!;
        expect(Buffer.compare(artefact.bytes, await readFile(join(dir, file)))).toBe(0);
        if (stamps) expect(artefact.stamp).toBe(stamps[position]);
      }
      const signature = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
      expect(Buffer.from(delivery!.check!.signature).toString('base64')).toBe(signature.signature);
      expect(delivery!.check!.keyIndex).toBe(0);
      expect(delivery!.check!.valid).toBe(index !== 5);
    }
    await worker.close();
  });

  it('takes nothing back from a helper still at work: drained as it goes, every folder comes once', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key])!;
    const steps: number[] = [];
    // this thread takes a folder only now and then, so the helper is at work while it drains
    for (;;) {
      const step = worker.next();
      if (step) {
        steps.push(step.index);
        await new Promise((resolve) => setTimeout(resolve, 2));
      } else if (!(await worker.wait())) {
        const last = worker.next();
        if (!last) break;
        steps.push(last.index);
      }
    }
    expect(steps.sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    expect(worker.stats()).toMatchObject({ takenBack: 0, failed: false });
    expect(worker.stats().delivered).toBeGreaterThan(0);
    await worker.close();
  });

  it('only reads when told not to check signatures (a filled signature cache needs none)', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const worker = createVerifyWorker(dirs, { ...LAYOUT, checkSignatures: false }, [key])!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.every((step) => step.delivery !== undefined && step.delivery.check === undefined)).toBe(
      true,
    );
    expect(steps.every((step) => step.delivery!.artefacts.size === 5)).toBe(true);
    await worker.close();
  });

  it('leaves a check it cannot make, and a file it cannot read, to this thread', async () => {
    const key = await generateSigningKey();
    const other = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    await rm(join(dirs[1]!, 'schema.json'));
    await writeFile(join(dirs[2]!, 'manifest.sig'), 'not json');
    // only `other` is trusted: no folder's key is known to the helper
    const worker = createVerifyWorker(dirs.slice(0, 3), LAYOUT, [other], { cores: 2 })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.map((step) => step.index).sort()).toEqual([0, 1, 2]);
    for (const step of steps) {
      expect(step.delivery?.check).toBeUndefined();
      expect(step.delivery?.artefacts.has('schema.json')).toBe(step.index !== 1);
    }
    await worker.close();
  });
});

describe('the helper fails closed', () => {
  it('a helper that dies at once: every folder is done here', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key], {
      helpers: 1,
      program: program('process.exit(3);'),
    })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps).toHaveLength(dirs.length);
    expect(steps.every((step) => step.delivery === undefined)).toBe(true);
    expect(worker.stats()).toMatchObject({ delivered: 0, claimedHere: dirs.length });
    await worker.close();
  });

  it('a helper that claims every folder and dies without delivering: each is taken back and done here', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body =
      'for (let i = 0; i < workerData.dirs.length; i++) claim(i); setTimeout(() => process.exit(1), 300);';
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.map((step) => step.index)).toEqual(dirs.map((_, index) => index));
    expect(steps.every((step) => step.delivery === undefined)).toBe(true);
    expect(worker.stats()).toMatchObject({ delivered: 0, takenBack: dirs.length, failed: true });
    await worker.close();
  });

  it('a helper that says it is done with a folder still undelivered: that folder is done here, and no failure is claimed for the rest', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body = `claim(0); claim(1); ${oneFolder()} send({ arena, items: [item], done: true }, [arena]);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await settle(worker);
    const steps = await drain(worker);
    const delivered = steps.filter((step) => step.delivery);
    expect(delivered.map((step) => step.index)).toEqual([0]);
    expect(delivered[0]!.delivery!.artefacts.get('manifest.toml')).toEqual({
      bytes: Buffer.from([7]),
      stamp: 'stamp',
    });
    expect([...delivered[0]!.delivery!.artefacts.keys()]).toEqual(['manifest.toml']);
    expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    expect(worker.stats()).toMatchObject({ delivered: 1, takenBack: 1, failed: false });
    await worker.close();
  });

  for (const [what, body] of [
    ['a folder it never claimed', `${oneFolder()} send({ arena, items: [item] }, [arena]);`],
    ['a folder twice', `claim(0); ${oneFolder()} send({ arena, items: [item, item] }, [arena]);`],
    [
      'bytes outside its buffer',
      `claim(0); ${oneFolder("item.artefacts[0] = [0, 2, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a file identity that is not text',
      `claim(0); ${oneFolder('item.artefacts[0] = [0, 1, 5];')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'too few artefacts',
      `claim(0); ${oneFolder('item.artefacts.pop();')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a code file without a name',
      `claim(0); ${oneFolder("item.code = [0, 1, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check with a key it was not given',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], signature: [0, 1], keyIndex: 1, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check without a verdict',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], signature: [0, 1], keyIndex: 0 };')} send({ arena, items: [item] }, [arena]);`,
    ],
    ['no buffer', `claim(0); ${oneFolder()} send({ arena: new Uint8Array(1), items: [item] });`],
    ['no items', `claim(0); ${oneFolder()} send({ arena, items: null }, [arena]);`],
    ['nothing in it', 'claim(0); send(null);'],
    ['an item that is null', `claim(0); ${oneFolder()} send({ arena, items: [null] }, [arena]);`],
    [
      'an index that is not a whole number',
      `claim(0); ${oneFolder('item.index = 0.5;')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a negative index',
      `claim(0); ${oneFolder('item.index = -1;')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'an index past the last folder',
      `claim(0); ${oneFolder('item.index = workerData.dirs.length;')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a negative offset',
      `claim(0); ${oneFolder("item.artefacts[0] = [-1, 1, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'an offset that is not a number',
      `claim(0); ${oneFolder("item.artefacts[0] = ['0', 1, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a length that is not a whole number',
      `claim(0); ${oneFolder("item.artefacts[0] = [0, 0.5, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a negative length',
      `claim(0); ${oneFolder("item.artefacts[0] = [1, -1, 's'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'an artefact that is not a list',
      `claim(0); ${oneFolder("item.artefacts[0] = { bytes: [0, 1], stamp: 's' };")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a code file outside the buffer',
      `claim(0); ${oneFolder("item.code = [0, 2, 's', 'main.ts'];")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check over bytes outside the buffer',
      `claim(0); ${oneFolder('item.check = { statement: [0, 2], signature: [0, 1], keyIndex: 0, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check of a signature outside the buffer',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], signature: [1, 1], keyIndex: 0, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check without a statement',
      `claim(0); ${oneFolder('item.check = { signature: [0, 1], keyIndex: 0, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check without a signature',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], keyIndex: 0, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check with a negative key',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], signature: [0, 1], keyIndex: -1, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check with a key that is not a whole number',
      `claim(0); ${oneFolder('item.check = { statement: [0, 1], signature: [0, 1], keyIndex: 0.5, valid: true };')} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check with a verdict that is not true or false',
      `claim(0); ${oneFolder("item.check = { statement: [0, 1], signature: [0, 1], keyIndex: 0, valid: 'yes' };")} send({ arena, items: [item] }, [arena]);`,
    ],
    [
      'a check that is not an object',
      `claim(0); ${oneFolder('item.check = 1;')} send({ arena, items: [item] }, [arena]);`,
    ],
  ] as const) {
    it(`a message with ${what}: nothing more is taken from the helper, and its folders are done here`, async () => {
      const key = await generateSigningKey();
      const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
      const worker = createVerifyWorker(dirs, LAYOUT, [key], {
        helpers: 1,
        program: program(`${body} setInterval(() => {}, 1000);`),
      })!;
      // the helper is up and has sent its message before this thread takes anything
      await waitUntil(worker, () => worker.stats().failed);
      const steps = await drain(worker);
      expect(steps.every((step) => step.delivery === undefined)).toBe(true);
      expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
      expect(worker.stats()).toMatchObject({ delivered: 0, failed: true });
      await worker.close();
    });
  }

  it('a bad message followed by a good one: the good one is not taken either', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body = `claim(0); { ${oneFolder('item.index = 5;')} send({ arena, items: [item] }, [arena]); } { ${oneFolder()} send({ arena, items: [item], done: true }, [arena]); } setInterval(() => {}, 1000);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await waitUntil(worker, () => worker.stats().failed);
    // both messages are on the port before anything more is taken
    await new Promise((resolve) => setTimeout(resolve, 300));
    const steps = await drain(worker);
    expect(steps.every((step) => step.delivery === undefined)).toBe(true);
    expect(worker.stats()).toMatchObject({ delivered: 0, failed: true, takenBack: 1 });
    await worker.close();
  });

  it('a helper that dies after delivering, without saying it is done: a failure, and the rest is done here', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body = `claim(0); claim(1); ${oneFolder()} send({ arena, items: [item] }, [arena]); process.exit(0);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.filter((step) => step.delivery).map((step) => step.index)).toEqual([0]);
    expect(worker.stats()).toMatchObject({ delivered: 1, takenBack: 1, failed: true });
    await worker.close();
  });

  it('takes an empty file, and keeps the fixed artefact when the code file has the same name', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body = `claim(0); ${oneFolder("item.artefacts[1] = [1, 0, 'empty']; item.code = [0, 1, 'code', 'manifest.toml'];")} send({ arena, items: [item], done: true }, [arena]);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await settle(worker);
    const steps = await drain(worker);
    const delivery = steps.find((step) => step.delivery)!.delivery!;
    expect(delivery.artefacts.get('manifest.toml')).toMatchObject({ stamp: 'stamp' });
    expect(delivery.artefacts.get('schema.json')).toEqual({ bytes: Buffer.alloc(0), stamp: 'empty' });
    expect(worker.stats()).toMatchObject({ delivered: 1, failed: false });
    await worker.close();
  });

  it('a good folder followed by a bad one in the same message: the good one is not kept either', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body = `claim(0); ${oneFolder()} const bad = { ...item, index: 1 }; send({ arena, items: [item, bad] }, [arena]); setInterval(() => {}, 1000);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await waitUntil(worker, () => worker.stats().failed);
    const steps = await drain(worker);
    expect(steps.every((step) => step.delivery === undefined)).toBe(true);
    expect(steps.filter((step) => step.index === 0)).toHaveLength(1);
    expect(worker.stats()).toMatchObject({ failed: true, takenBack: 1 });
    await worker.close();
  });

  it('a folder sent again after it was handed out: the helper is dropped, the folder is not handed out twice', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    const body =
      `claim(0); claim(1); ${oneFolder()} send({ arena, items: [item] }, [arena]);` +
      `setTimeout(() => { ${oneFolder()} send({ arena, items: [item] }, [arena]); }, 300); setInterval(() => {}, 1000);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    await waitUntil(worker, () => worker.stats().delivered === 1);
    const first = worker.next();
    expect(first).toMatchObject({ index: 0, delivery: { index: 0 } });
    await waitUntil(worker, () => worker.stats().failed);
    const steps = await drain(worker);
    expect(steps.filter((step) => step.index === 0)).toHaveLength(0);
    expect(steps.filter((step) => step.index === 1)).toEqual([{ index: 1 }]);
    expect(worker.stats()).toMatchObject({ delivered: 1, failed: true });
    await worker.close();
  });

  it('a helper that overwrites a claim this thread made: the folder is still handed out once', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    // waits for this thread to claim the last folder, takes the claim over, then delivers it and dies
    const last = dirs.length - 1;
    const body =
      `const claims = new Int32Array(workerData.claims); while (Atomics.load(claims, ${last}) !== 1) {}` +
      `claim(${last}); ${oneFolder(`item.index = ${last};`)} send({ arena, items: [item] }, [arena]); process.exit(0);`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { helpers: 1, program: program(body) })!;
    expect(worker.next()).toEqual({ index: last });
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.filter((step) => step.index === last)).toHaveLength(0);
    expect(steps).toHaveLength(dirs.length - 1);
    expect(worker.stats()).toMatchObject({ delivered: 0, failed: true });
    await worker.close();
  });
});

describe('a check from the helper counts only for the statement this thread derives', () => {
  /**
   * A helper that reads nothing and vouches for every folder: the right bytes are left for this
   * thread to read, and each check says "valid" over `statement`, with the key at `keyIndex`.
   */
  const vouching = (statement: string, keyIndex = 0) =>
    program(
      'const n = workerData.dirs.length; for (let i = 0; i < n; i++) claim(i);' +
        `const items = []; const arena = new Uint8Array([...Buffer.from(${statement}), ...new Uint8Array(64)]).buffer; const len = arena.byteLength - 64;` +
        `for (let i = 0; i < n; i++) items.push({ index: i, artefacts: [null, null, null, null], code: null, check: { statement: [0, len], signature: [len, 64], keyIndex: ${keyIndex}, valid: true } });` +
        'send({ arena, items, done: true }, [arena]);',
    );

  it('a helper that vouches for a forged signature over other bytes is not believed', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN, key);
    await forgeSignature(dirs[0]!, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key], {
      helpers: 1,
      program: vouching("'not the statement'"),
    })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.every((step) => step.delivery?.check?.valid === true)).toBe(true);
    await worker.close();
    // the same lie, through verifyExecutors: the forged folder is still refused
    const outcomes = await verifyExecutors(
      dirs,
      { trustedKeys: [key] },
      { helpers: 1, program: vouching("'not the statement'") },
    );
    expect(VerificationError.isInstance(outcomes[0]!.error) && outcomes[0]!.error.reason).toBe(
      'signature_invalid',
    );
    expect(outcomes.slice(1).every((outcome) => outcome.executor !== undefined)).toBe(true);
  });
});

describe('several helpers, on a machine with more cores', () => {
  /** The real helper's program, for a helper that behaves (eval'd helpers are CommonJS: import() it). */
  const honest = `import(${JSON.stringify(new URL('../runtime/verify-helper.mjs', import.meta.url).href)});`;

  it('starts one helper per core beside this one, at most one per VERIFY_WORKER_MIN folders and at most MAX_VERIFY_HELPERS', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    for (const [cores, helpers] of [
      [2, 1],
      [3, 2],
      [64, 2],
    ] as const) {
      const worker = createVerifyWorker(dirs, LAYOUT, [key], { cores })!;
      expect(worker.stats().helpers).toBe(helpers);
      await worker.close();
    }
    const many = createVerifyWorker(
      Array.from({ length: VERIFY_WORKER_MIN * 16 }, () => dirs[0]!),
      LAYOUT,
      [key],
      { cores: 64, program: 'setTimeout(() => {}, 1);' },
    )!;
    expect(many.stats().helpers).toBe(MAX_VERIFY_HELPERS);
    await many.close();
  });

  it('two helpers and this thread: every folder handed out exactly once, and the outcomes those of verifying each alone', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    await forgeSignature(dirs[9]!, key);
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { cores: 3, helpers: 2 })!;
    const steps = await drain(worker);
    expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    const stats = worker.stats();
    expect(stats).toMatchObject({ helpers: 2, takenBack: 0, failed: false });
    expect(stats.delivered + stats.claimedHere).toBe(dirs.length);
    await worker.close();
    const outcomes = await verifyExecutors(dirs, { trustedKeys: [key] }, { helpers: 2 });
    for (const [index, dir] of dirs.entries()) {
      const alone = await verifyExecutor(dir, { trustedKeys: [key] }).catch((error: unknown) => error);
      if (index === 9) {
        expect(VerificationError.isInstance(outcomes[index]!.error) && outcomes[index]!.error.reason).toBe(
          'signature_invalid',
        );
      } else expect(outcomes[index]!.executor!.stamps).toBe((alone as { stamps: string }).stamps);
    }
  });

  it('a helper that delivers a folder another helper claimed is dropped; the folder is not taken from it', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    // the first helper claims folder 0 and ends without delivering it; the second, once that
    // claim is there, delivers folder 0 as its own
    const body =
      'const claims = new Int32Array(workerData.claims);' +
      'if (workerData.mark === 2) { claim(0); setTimeout(() => process.exit(0), 300); }' +
      `else { while (Atomics.load(claims, 0) !== 2) {} ${oneFolder()} send({ arena, items: [item] }, [arena]); setInterval(() => {}, 1000); }`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { cores: 3, helpers: 2, program: program(body) })!;
    await waitUntil(worker, () => worker.stats().failed);
    const steps = await drain(worker);
    expect(steps.some((step) => step.delivery)).toBe(false);
    expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    expect(worker.stats()).toMatchObject({ helpers: 2, delivered: 0, takenBack: 1, failed: true });
    await worker.close();
  });

  it("a helper dropped for a bad message loses only its own deliveries: the other helper's stay", async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    // the second helper waits until the real one is well under way, then sends garbage
    const body =
      'const claims = new Int32Array(workerData.claims);' +
      `if (workerData.mark === 2) { ${honest} }` +
      'else { while (Atomics.load(claims, 40) !== 2) {} setTimeout(() => send({ arena: 1, items: [] }), 50); setInterval(() => {}, 1000); }';
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { cores: 3, helpers: 2, program: program(body) })!;
    // nothing is handed out until both are gone: the real helper's deliveries wait beside the garbage
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.map((step) => step.index)).toEqual(dirs.map((_, index) => index));
    expect(steps.every((step) => step.delivery !== undefined)).toBe(true);
    expect(worker.stats()).toMatchObject({ helpers: 2, delivered: dirs.length, takenBack: 0, failed: true });
    await worker.close();
  });

  it('a helper that claims folders and dies: they are taken back while the other helper goes on', async () => {
    const key = await generateSigningKey();
    const dirs = await catalogOf(VERIFY_WORKER_MIN * 2, key);
    // the second helper claims the first folders before the first can, then dies undelivered;
    // the first is the real helper, held back until then
    const body =
      'const claims = new Int32Array(workerData.claims);' +
      'if (workerData.mark === 3) { for (let i = 0; i < 8; i++) claim(i); process.exit(1); }' +
      `else { while (Atomics.load(claims, 7) !== 3) {} ${honest} }`;
    const worker = createVerifyWorker(dirs, LAYOUT, [key], { cores: 3, helpers: 2, program: program(body) })!;
    await settle(worker);
    const steps = await drain(worker);
    expect(steps.map((step) => step.index).sort((a, b) => a - b)).toEqual(dirs.map((_, index) => index));
    const takenBack = steps.filter((step) => step.index < 8);
    expect(takenBack.every((step) => step.delivery === undefined)).toBe(true);
    const stats = worker.stats();
    expect(stats).toMatchObject({ helpers: 2, delivered: dirs.length - 8, takenBack: 8, failed: true });
    await worker.close();
  });
});
