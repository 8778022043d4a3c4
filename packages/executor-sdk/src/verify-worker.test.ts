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

describe('createVerifyWorker', () => {
  it('answers a signature check with the check itself: valid for the signed bytes, invalid for any other', async () => {
    const key = await generateSigningKey();
    const worker = createVerifyWorker([], []);
    expect(worker).toBeDefined();
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
    await new Promise((resolve) => setTimeout(resolve, 500));
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
});
