import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flipByte, forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { MAX_JSON_DEPTH } from './depth.ts';
import { VerificationError, type VerificationFailureReason } from './errors.ts';
import { blake3Digest } from './hash.ts';
import { generateSigningKey } from './keys.ts';
import { parseManifest } from './manifest.ts';
import { canonicalProfile, profileHash } from './profile.ts';
import { signExecutor } from './sign.ts';
import { writeSignedExecutor } from './test/index.ts';
import { verifyExecutor } from './verify.ts';

const temp = useTempDirs('metnos-verify-');

async function refusal(dir: string, trustedKeys: Parameters<typeof verifyExecutor>[1]['trustedKeys']) {
  try {
    await verifyExecutor(dir, { trustedKeys });
  } catch (error) {
    if (VerificationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`${dir} verified but should have been refused`);
}

describe('the folder as given', () => {
  it('names the code file and a manifest error inside the folder, with or without a trailing slash', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'echo' });
    for (const given of [dir, `${dir}/`]) {
      const executor = await verifyExecutor(given, { trustedKeys: [key] });
      expect(executor.codeFile).toBe(join(dir, 'main.ts'));
    }
    await writeFile(join(dir, 'manifest.toml'), 'not = [toml');
    for (const given of [dir, `${dir}/`]) {
      const error = await refusal(given, [key]);
      expect(error.message).toContain(`${join(dir, 'manifest.toml')}`);
      expect(error.message).not.toContain('//');
    }
  });
});

describe('signing', () => {
  it('writes [sandbox].hash, profile.lock and manifest.sig, and the folder then verifies', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'echo' });
    const manifest = parseManifest(await readFile(join(dir, 'manifest.toml'), 'utf8'), 'manifest.toml');
    const lock = (await readFile(join(dir, 'profile.lock'), 'utf8')).trim();
    expect(lock).toBe(await profileHash(manifest.sandbox));
    expect(manifest.sandbox.hash).toBe(lock);
    const signature = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    expect(signature).toMatchObject({
      v: 1,
      alg: 'ed25519',
      key_id: key.keyId,
      name: 'echo',
      version: '1.0.0',
    });

    const verified = await verifyExecutor(dir, { trustedKeys: [key] });
    expect(verified).toMatchObject({
      name: 'echo',
      version: '1.0.0',
      keyId: key.keyId,
      codeFile: join(dir, 'main.ts'),
    });
  });

  it('signing twice gives the same files (the hash line is replaced, not added)', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'twice' });
    const first = await readFile(join(dir, 'manifest.toml'), 'utf8');
    await signExecutor(dir, key);
    expect(await readFile(join(dir, 'manifest.toml'), 'utf8')).toBe(first);
    expect(first.match(/^hash = /gm)).toHaveLength(1);
  });

  it('the profile hash ignores the order of allow-lists but not their content', async () => {
    const base = parseManifest(
      await readFile(
        join((await writeSignedExecutor({ root: await temp.make(), name: 'order' })).dir, 'manifest.toml'),
        'utf8',
      ),
      'manifest.toml',
    ).sandbox;
    const reordered = { ...base, fs: { read: ['$TMP', '$WORKSPACE', '$TMP'], write: [] } };
    const sorted = { ...base, fs: { read: ['$WORKSPACE', '$TMP'], write: [] } };
    expect(canonicalProfile(reordered)).toBe(canonicalProfile(sorted));
    expect(await profileHash(reordered)).toBe(await profileHash(sorted));
    expect(await profileHash({ ...sorted, fs: { read: ['$WORKSPACE'], write: [] } })).not.toBe(
      await profileHash(sorted),
    );
  });
});

describe('schema checks', () => {
  it('refuses to sign a contract that points at an inherited property instead of a definition', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'proto' });
    const path = join(dir, 'manifest.toml');
    await writeFile(
      path,
      (await readFile(path, 'utf8')).replace('#/definitions/Input', '#/definitions/__proto__'),
    );
    await expect(signExecutor(dir, key)).rejects.toMatchObject({
      name: 'VerificationError',
      reason: 'schema_invalid',
      message: expect.stringContaining('no definition for schema.json#/definitions/__proto__'),
    });
  });

  it('refuses a schema.json that is not a JSON object or uses keywords outside the subset', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'schemas' });
    for (const [text, message] of [
      ['[]', 'must be a JSON object'],
      ['{"definitions": {"Input": {}, ', 'not valid JSON'],
      ['{"definitions": {"Input": {"type": "object"}}}', 'no definition for schema.json#/definitions/Output'],
      [
        '{"definitions": {"Input": {"dependentRequired": {}}, "Output": {}}}',
        'does not support: /definitions/Input/dependentRequired',
      ],
    ]) {
      await writeFile(join(dir, 'schema.json'), text!);
      const error = await refusal(dir, [key]);
      expect([text, error.reason, error.artefact, error.message]).toEqual([
        text,
        'schema_invalid',
        'schema.json',
        expect.stringContaining(message!),
      ]);
    }
  });

  it('refuses a schema.json nested 20,000 levels deep when signing, verifying and loading, never with a RangeError', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'deep_schema' });
    const levels = 20_000;
    const deep = `{"definitions": {"Input": {"type": "object"}, "Output": ${'{"items": '.repeat(levels)}{}${'}'.repeat(levels)}}}`;
    await writeFile(join(dir, 'schema.json'), deep);
    const expected = {
      name: 'VerificationError',
      reason: 'schema_invalid',
      artefact: 'schema.json',
      message: expect.stringContaining(`nests deeper than ${MAX_JSON_DEPTH} levels`),
    };
    expect(await refusal(dir, [key])).toMatchObject(expected);
    await expect(signExecutor(dir, key)).rejects.toMatchObject({
      ...expected,
      artefact: join(dir, 'schema.json'),
    });
    const catalog = createCatalog({ root, trustedKeys: [key], stateDir: await temp.make() });
    const report = await catalog.load();
    expect(report.loaded).toEqual([]);
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        name: 'deep_schema',
        reason: 'schema_invalid',
        message: expect.stringContaining(`nests deeper than ${MAX_JSON_DEPTH} levels`),
      }),
    ]);
  });
});

describe('tampering', () => {
  const allowed: Record<string, VerificationFailureReason[]> = {
    'manifest.toml': ['manifest_invalid', 'profile_lock_mismatch', 'digest_mismatch'],
    'main.ts': ['digest_mismatch'],
    'schema.json': ['schema_invalid', 'digest_mismatch'],
    'profile.lock': ['profile_lock_mismatch', 'digest_mismatch'],
    'manifest.sig': ['signature_malformed', 'signature_invalid', 'untrusted_key'],
  };

  for (const artefact of Object.keys(allowed)) {
    it(`refuses every one-byte change to ${artefact}, naming ${artefact}`, async () => {
      const root = await temp.make();
      const { dir, key } = await writeSignedExecutor({ root, name: 'tamper' });
      const path = join(dir, artefact);
      const size = (await stat(path)).size;
      const text = await readFile(path, 'utf8');
      // The one line where a flip renames the code file: the refusal then names the missing file.
      const entryValue = artefact === 'manifest.toml' ? text.indexOf('"main.ts"') : -1;
      const wrong: string[] = [];
      for (let index = 0; index < size; index++) {
        const restore = await flipByte(path, index);
        try {
          const error = await refusal(dir, [key]);
          const renamesCode = index > entryValue && index < entryValue + '"main.ts"'.length - 1;
          const ok = renamesCode
            ? error.reason === 'missing_artefact' || error.artefact === artefact
            : error.artefact === artefact && allowed[artefact]!.includes(error.reason);
          if (!ok)
            wrong.push(`byte ${index} (${JSON.stringify(text[index])}): ${error.reason} ${error.artefact}`);
        } catch (error) {
          wrong.push(`byte ${index} (${JSON.stringify(text[index])}): ${(error as Error).message}`);
        } finally {
          await restore();
        }
      }
      expect(wrong).toEqual([]);
      await expect(verifyExecutor(dir, { trustedKeys: [key] })).resolves.toMatchObject({ name: 'tamper' });
    });
  }

  it('refuses a signature made by another key that claims the trusted key id', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'forged' });
    // The attacker changes the code and signs the new digests, claiming to be the trusted key.
    await writeFile(join(dir, 'main.ts'), `${await readFile(join(dir, 'main.ts'), 'utf8')}\n// evil\n`);
    await forgeSignature(dir, key, async (file) => {
      file.digests.code = await blake3Digest(await readFile(join(dir, 'main.ts')));
    });

    const error = await refusal(dir, [key]);
    expect(error).toMatchObject({ reason: 'signature_invalid', artefact: 'manifest.sig' });
    expect(error.message).toContain('forged or corrupted');
  });

  it('refuses a signature whose bytes were altered', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'altered' });
    const file = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    const bytes = Buffer.from(file.signature, 'base64');
    bytes[10] = bytes[10]! ^ 0x80;
    file.signature = bytes.toString('base64');
    await writeFile(join(dir, 'manifest.sig'), JSON.stringify(file));
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'signature_invalid',
      artefact: 'manifest.sig',
    });
  });

  it('refuses a signature spelled with non-canonical base64 (same bytes, different file)', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'padding' });
    const file = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(file.signature[85]);
    // The last character carries 2 bits of the signature and 4 unused bits.
    file.signature = `${file.signature.slice(0, 85)}${alphabet[last ^ 0b0001]}==`;
    expect(Buffer.from(file.signature, 'base64')).toEqual(
      Buffer.from(JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8')).signature, 'base64'),
    );
    await writeFile(join(dir, 'manifest.sig'), JSON.stringify(file));
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'signature_malformed',
      artefact: 'manifest.sig',
    });
  });

  it('refuses a signature by a key nobody trusted, naming the key id', async () => {
    const root = await temp.make();
    const trusted = await generateSigningKey();
    const { dir, key } = await writeSignedExecutor({ root, name: 'stranger' });
    const error = await refusal(dir, [trusted]);
    expect(error).toMatchObject({ reason: 'untrusted_key', artefact: 'manifest.sig' });
    expect(error.message).toContain(key.keyId);
    await expect(refusal(dir, [])).resolves.toMatchObject({ reason: 'untrusted_key' });
  });

  it('refuses a profile changed without re-signing, whether or not [sandbox].hash was edited too', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'profile' });
    const path = join(dir, 'manifest.toml');
    const original = await readFile(path, 'utf8');
    await writeFile(path, original.replace('max_duration_ms = 2000', 'max_duration_ms = 600000'));
    const edited = await refusal(dir, [key]);
    expect(edited).toMatchObject({ reason: 'profile_lock_mismatch', artefact: 'manifest.toml' });
    expect(edited.message).toContain('without re-signing');

    // Someone also rewrites [sandbox].hash to the new profile's hash: profile.lock still disagrees.
    const widened = parseManifest(
      original.replace('max_duration_ms = 2000', 'max_duration_ms = 600000'),
      path,
    ).sandbox;
    const newHash = await profileHash(widened);
    await writeFile(
      path,
      original
        .replace('max_duration_ms = 2000', 'max_duration_ms = 600000')
        .replace(/hash = ".*"/, `hash = "${newHash}"`),
    );
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'manifest.toml',
    });

    // And rewrites profile.lock as well: the three agree, but not with what was signed.
    await writeFile(join(dir, 'profile.lock'), `${newHash}\n`);
    expect(await refusal(dir, [key])).toMatchObject({ reason: 'digest_mismatch', artefact: 'manifest.toml' });

    // profile.lock alone rewritten: it is named.
    await writeFile(path, original);
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'profile.lock',
    });

    // A hash line that disagrees with an unchanged profile names the manifest.
    await writeFile(
      join(dir, 'profile.lock'),
      `${await profileHash(parseManifest(original, path).sandbox)}\n`,
    );
    await writeFile(
      path,
      original.replace(/hash = "blake3:(.)/, (_, first) => `hash = "blake3:${first === 'a' ? 'b' : 'a'}`),
    );
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'manifest.toml',
    });

    // Without a readable manifest.sig the odd one out is still named.
    await rm(join(dir, 'manifest.sig'));
    await writeFile(join(dir, 'manifest.sig'), 'not json');
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'manifest.toml',
    });
    await writeFile(path, original);
    await writeFile(join(dir, 'profile.lock'), `${newHash}\n`);
    expect(await refusal(dir, [key])).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'profile.lock',
    });
  });

  for (const artefact of ['manifest.toml', 'main.ts', 'schema.json', 'profile.lock', 'manifest.sig']) {
    it(`refuses a folder without ${artefact}, naming it`, async () => {
      const root = await temp.make();
      const { dir, key } = await writeSignedExecutor({ root, name: 'missing' });
      await rm(join(dir, artefact));
      const error = await refusal(dir, [key]);
      expect(error).toMatchObject({ reason: 'missing_artefact', artefact });
      expect(error.message).toContain(artefact);
    });
  }
});
