import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import { claimedStatement, statementBytes } from './signature.ts';
import { writeSignedExecutor } from './test/index.ts';
import { openVerificationCache } from './verification-cache.ts';
import { verifyExecutors } from './verify.ts';

const temp = useTempDirs('metnos-sigcache-');

async function world(count = 3) {
  const base = await temp.make();
  const root = join(base, 'executors');
  const stateDir = join(base, 'state');
  const secretFile = join(base, 'config', 'verification-cache.secret');
  const cacheFile = join(stateDir, 'verification-cache.json');
  const key = await generateSigningKey();
  const dirs: string[] = [];
  for (let index = 0; index < count; index++) {
    dirs.push((await writeSignedExecutor({ root, name: `tool_${index}`, key })).dir);
  }
  const start = async (trustedKeys: SigningKey[] = [key]) => {
    const cache = await openVerificationCache({ file: cacheFile, secretFile });
    const catalog = createCatalog({ root, trustedKeys, stateDir, verificationCache: cache });
    const report = await catalog.load();
    return { cache, catalog, report };
  };
  return { base, root, stateDir, secretFile, cacheFile, key, dirs, start };
}

/** The signed set of a version as its manifest.sig states it. */
async function signedSet(dir: string, key: SigningKey) {
  const file = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
  return {
    manifestDigest: file.digests.manifest as string,
    set: {
      statement: statementBytes(claimedStatement(file)),
      signature: new Uint8Array(Buffer.from(file.signature, 'base64')),
      publicKey: key.publicKey,
    },
  };
}

describe('the verification cache', () => {
  it('confirms every version at a restart, while every artefact is still re-read and re-hashed', async () => {
    const { start, dirs } = await world();
    const first = await start();
    expect(first.report.loaded).toHaveLength(3);
    expect(first.cache.hits).toBe(0);
    const second = await start();
    expect(second.report.loaded).toHaveLength(3);
    expect(second.cache.hits).toBe(3);
    // What a restart hands out is what a full check produces.
    expect(
      second.report.loaded.map(({ manifest, schema, digests }) => ({ manifest, schema, digests })),
    ).toEqual(first.report.loaded.map(({ manifest, schema, digests }) => ({ manifest, schema, digests })));

    // A changed artefact is caught by its digest although its version is remembered.
    await writeFile(join(dirs[0]!, 'main.ts'), '// changed after signing\n');
    const third = await start();
    expect(third.report.loaded).toHaveLength(2);
    expect(third.report.quarantined[0]).toMatchObject({ reason: 'digest_mismatch', artefact: 'main.ts' });
  });

  it('holds only keyed tags: entries written without the secret pass neither a forged signature nor a widened profile', async () => {
    const { start, dirs, key, cacheFile, secretFile, base } = await world(2);
    await start();
    await forgeSignature(dirs[0]!, key);
    // The attacker can write the cache file but cannot read the secret: their tags use another one.
    const own = await openVerificationCache({
      file: join(base, 'attacker.json'),
      secretFile: join(base, 'attacker.secret'),
    });
    const forged = await signedSet(dirs[0]!, key);
    own.remember(forged.manifestDigest, JSON.stringify({ forged: true }), forged.set);
    const genuine = await signedSet(dirs[1]!, key);
    const stored = JSON.parse(await readFile(cacheFile, 'utf8'));
    const widened = JSON.parse(stored.entries[genuine.manifestDigest].manifest);
    widened.sandbox.network = { mode: 'allowlist', domains: ['exfil.example.com'] };
    own.remember(genuine.manifestDigest, JSON.stringify(widened), genuine.set);
    await own.save();
    await writeFile(cacheFile, await readFile(join(base, 'attacker.json')));
    expect((await readFile(secretFile)).length).toBe(32);

    const { report, cache } = await start();
    expect(cache.hits).toBe(0);
    expect(report.quarantined).toHaveLength(1);
    expect(report.quarantined[0]).toMatchObject({ reason: 'signature_invalid', artefact: 'manifest.sig' });
    // The genuine version is checked in full and carries the profile its files declare.
    expect(report.loaded).toHaveLength(1);
    expect(report.loaded[0]!.manifest.sandbox.network).toEqual({ mode: 'none', domains: [] });
  });

  it('refuses a one-byte change to any artefact of a remembered version, naming that artefact', async () => {
    const { start, dirs } = await world(1);
    await start();
    for (const artefact of ['manifest.toml', 'main.ts', 'schema.json', 'profile.lock', 'manifest.sig']) {
      const path = join(dirs[0]!, artefact);
      const original = await readFile(path);
      const changed = Buffer.from(original);
      const at = Math.floor(changed.length / 2);
      changed[at] = changed[at] === 0x41 ? 0x42 : 0x41;
      await writeFile(path, changed);
      const { report } = await start();
      expect(report.loaded, artefact).toHaveLength(0);
      expect(report.quarantined[0]?.artefact, artefact).toBe(artefact);
      await writeFile(path, original);
    }
  });

  it('never overrides trust: a remembered version signed by a key no longer trusted is refused', async () => {
    const { start } = await world(2);
    await start();
    const { report, cache } = await start([await generateSigningKey()]);
    expect(cache.hits).toBe(0);
    expect(report.loaded).toHaveLength(0);
    expect(report.quarantined.map((entry) => entry.reason)).toEqual(['untrusted_key', 'untrusted_key']);
  });

  it('turns itself off, and the catalog checks everything, when the secret is readable by others', async () => {
    const { start, secretFile } = await world(2);
    await start();
    await chmod(secretFile, 0o644);
    const { report, cache } = await start();
    expect(cache.disabled).toMatch(/readable by other users/);
    expect(cache.hits).toBe(0);
    expect(report.loaded).toHaveLength(2);
  });

  it('treats a corrupt cache file as empty and a failed save as a report, never an exception', async () => {
    const { start, cacheFile, secretFile, dirs, key } = await world(2);
    await start();
    await writeFile(cacheFile, '{"v":1,"entries":{"blake3:00": 42');
    const afterCorruption = await start();
    expect(afterCorruption.cache.hits).toBe(0);
    expect(afterCorruption.report.loaded).toHaveLength(2);

    // The file's place taken by a directory: the write fails, the load does not.
    await rm(cacheFile, { force: true });
    await mkdir(cacheFile, { recursive: true });
    const cache = await openVerificationCache({ file: cacheFile, secretFile });
    const { manifestDigest, set } = await signedSet(dirs[0]!, key);
    cache.remember(manifestDigest, '{}', set);
    const saved = await cache.save();
    expect(saved.saved).toBe(false);
    expect(saved.error).toMatch(/could not be written/);
    const { report } = await start();
    expect(report.loaded).toHaveLength(2);
  });

  it('drops the entries of versions that are gone at the next save', async () => {
    const { start, dirs, cacheFile } = await world(3);
    await start();
    expect(Object.keys(JSON.parse(await readFile(cacheFile, 'utf8')).entries)).toHaveLength(3);
    await rm(dirs[2]!, { recursive: true });
    const { cache } = await start();
    expect(cache.hits).toBe(2);
    expect(Object.keys(JSON.parse(await readFile(cacheFile, 'utf8')).entries)).toHaveLength(2);
  });
});

describe('verifyExecutors', () => {
  it('returns one outcome per directory, in order, with the errors as data', async () => {
    const { dirs, key } = await world(3);
    await writeFile(join(dirs[1]!, 'schema.json'), '{ not json');
    const outcomes = await verifyExecutors([...dirs, join(dirs[0]!, 'missing')], { trustedKeys: [key] });
    expect(outcomes.map((outcome) => outcome.dir)).toEqual([...dirs, join(dirs[0]!, 'missing')]);
    expect(outcomes[0]!.executor?.name).toBe('tool_0');
    expect(outcomes[1]!.error).toMatchObject({ reason: 'schema_invalid', artefact: 'schema.json' });
    expect(outcomes[2]!.executor?.name).toBe('tool_2');
    expect(outcomes[3]!.error).toMatchObject({ reason: 'missing_artefact', artefact: 'manifest.toml' });
  });

  it('works in a fresh module instance: the synchronous hasher is prepared first', async () => {
    const { dirs, key } = await world(1);
    vi.resetModules();
    const fresh = await import('./verify.ts');
    const [outcome] = await fresh.verifyExecutors(dirs, { trustedKeys: [key] });
    expect(outcome?.error).toBeUndefined();
    expect(outcome?.executor?.name).toBe('tool_0');
  });
});
