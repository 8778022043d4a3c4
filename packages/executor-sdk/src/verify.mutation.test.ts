import { fstatSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { VerificationError } from './errors.ts';
import { blake3Digest } from './hash.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import type { Manifest } from './manifest.ts';
import { signatureFileSchema, signStatement } from './signature.ts';
import { writeSignedExecutor } from './test/index.ts';
import { openVerificationCache, type VerificationCache } from './verification-cache.ts';
import {
  artefactStamps,
  checkSchema,
  contractSchema,
  isSignatureFile,
  parseSignatureFile,
  type VerifiedExecutor,
  verifyExecutor,
} from './verify.ts';

type Read = (fd: number, buffer: Buffer, offset: number, length: number, position: number) => number;

/** How `readSync` misbehaves in the test that sets it; unset, it is the real one. */
const fileSystem: { read?: (real: Read, ...args: Parameters<Read>) => number } = {};

// node:fs as the artefact reader takes it (process.getBuiltinModule, at each call), with its
// readSync wrapped for this file's tests
const fsModule = process.getBuiltinModule('node:fs');
const realReadSync = fsModule.readSync as unknown as Read;
beforeAll(() => {
  fsModule.readSync = ((...args: Parameters<Read>) =>
    fileSystem.read
      ? fileSystem.read(realReadSync, ...args)
      : realReadSync(...args)) as typeof fsModule.readSync;
});
afterAll(() => {
  fsModule.readSync = realReadSync as unknown as typeof fsModule.readSync;
});

afterEach(() => {
  fileSystem.read = undefined;
});

const temp = useTempDirs('metnos-verify-mutation-');
const digest = (letter: string) => `blake3:${letter.repeat(64)}`;
/** The part of a manifest checkSchema reads: the two contract references. */
const manifest = {
  contract: {
    input_schema: 'schema.json#/definitions/Input',
    output_schema: 'schema.json#/definitions/Output',
  },
} as unknown as Manifest;

function refusal(run: () => unknown): VerificationError {
  try {
    run();
  } catch (error) {
    if (VerificationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('nothing was refused');
}

async function refusedAsync(run: () => Promise<unknown>): Promise<VerificationError> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (VerificationError.isInstance(error)) return error;
  throw new Error(`not a verification error: ${String(error)}`);
}

/** Signs the files the folder holds now, claiming `identity` for them. */
async function signAsIs(dir: string, key: SigningKey, identity: { name: string; version: string }) {
  const digestOf = async (file: string) => blake3Digest(await readFile(join(dir, file)));
  const statement = {
    ...identity,
    manifest: await digestOf('manifest.toml'),
    code: await digestOf('main.ts'),
    schema: await digestOf('schema.json'),
    profileLock: await digestOf('profile.lock'),
  };
  await writeFile(join(dir, 'manifest.sig'), signStatement(statement, key));
}

async function signatureText() {
  const key = await generateSigningKey();
  return signStatement(
    {
      name: 'x',
      version: '1.0.0',
      manifest: digest('a'),
      code: digest('b'),
      schema: digest('c'),
      profileLock: digest('d'),
    },
    key,
  );
}

describe('manifest.sig parsing', () => {
  it('accepts exactly the schema, fast path or not', async () => {
    const text = await signatureText();
    const data = JSON.parse(text);
    expect(isSignatureFile(data)).toBe(true);
    expect(parseSignatureFile(text)).toEqual(data);
    for (const variant of [
      { ...data, extra: 1 },
      { ...data, v: 2 },
      { ...data, alg: 'rsa' },
      { ...data, key_id: 'ed25519:0123' },
      { ...data, key_id: 7 },
      { ...data, name: 1 },
      { ...data, version: null },
      { ...data, signature: 'x' },
      { ...data, signature: 5 },
      { ...data, digests: { ...data.digests, extra: digest('e') } },
      { ...data, digests: { ...data.digests, code: 'sha256:x' } },
      { ...data, digests: { ...data.digests, schema: 1 } },
      { ...data, digests: null },
      [],
      null,
      'text',
    ])
      expect(isSignatureFile(variant)).toBe(false);
  });

  it('names what is wrong: JSON, the first bad field, non-canonical base64', async () => {
    expect(refusal(() => parseSignatureFile('{'))).toMatchObject({
      reason: 'signature_malformed',
      artefact: 'manifest.sig',
      message: 'manifest.sig is not valid JSON',
    });
    const data = JSON.parse(await signatureText());
    expect(
      refusal(() => parseSignatureFile(JSON.stringify({ ...data, digests: { ...data.digests, code: 'x' } }))),
    ).toMatchObject({
      reason: 'signature_malformed',
      artefact: 'manifest.sig',
      message: expect.stringMatching(/^manifest\.sig: field "digests\.code" /),
    });
    // The last character before '==' carries 4 spare bits, zero when canonical: set one.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(data.signature.at(-3));
    const spare = `${data.signature.slice(0, -3)}${alphabet[last | 1]}==`;
    expect(Buffer.from(spare, 'base64')).toEqual(Buffer.from(data.signature, 'base64'));
    expect(isSignatureFile({ ...data, signature: spare })).toBe(false);
    expect(refusal(() => parseSignatureFile(JSON.stringify({ ...data, signature: spare })))).toMatchObject({
      reason: 'signature_malformed',
      message: 'manifest.sig: field "signature" is not canonical base64',
    });
  });
});

describe('schema.json checks', () => {
  const good = { definitions: { Input: { type: 'object' }, Output: { type: 'object' } } };

  it('returns the parsed schema when both contract references resolve', () => {
    expect(checkSchema(JSON.stringify(good), manifest)).toEqual(good);
  });

  it('refuses JSON that is not an object, uses other keywords, or lacks a contract definition', () => {
    const cases: Array<[string, string]> = [
      ['{', 'schema.json is not valid JSON'],
      ['[]', 'schema.json must be a JSON object'],
      ['null', 'schema.json must be a JSON object'],
      ['3', 'schema.json must be a JSON object'],
      [
        JSON.stringify({ ...good, if: {}, contains: {}, a: 1, b: 2, c: 3, d: 4 }),
        'schema.json uses keywords Metnos does not support: /if, /contains, /a, /b, /c',
      ],
      [
        JSON.stringify({ definitions: { Input: { type: 'object' } } }),
        'schema.json has no definition for schema.json#/definitions/Output (named in manifest.toml [contract])',
      ],
      [
        JSON.stringify({ definitions: { Input: true, Output: { type: 'object' } } }),
        'schema.json has no definition for schema.json#/definitions/Input (named in manifest.toml [contract])',
      ],
      [
        JSON.stringify({ definitions: { Input: null, Output: {} } }),
        'schema.json has no definition for schema.json#/definitions/Input (named in manifest.toml [contract])',
      ],
    ];
    for (const [text, message] of cases) {
      expect(refusal(() => checkSchema(text, manifest, 'schema.json'))).toMatchObject({
        reason: 'schema_invalid',
        artefact: 'schema.json',
        message,
      });
    }
    expect(refusal(() => checkSchema('[]', manifest, 'other.json')).message).toBe(
      'other.json must be a JSON object',
    );
  });

  it('refuses a schema nested deeper than the limit before parsing it', () => {
    const deep = `${'['.repeat(70)}${']'.repeat(70)}`;
    expect(refusal(() => checkSchema(deep, manifest))).toMatchObject({
      reason: 'schema_invalid',
      message: expect.stringMatching(/^schema\.json nests deeper than 64 levels; flatten it/),
    });
  });

  it('finds the contract schemas of a verified executor, own properties only', () => {
    const executor = { manifest, schema: good } as unknown as VerifiedExecutor;
    expect(contractSchema(executor, 'input')).toEqual({ type: 'object' });
    expect(contractSchema(executor, 'output')).toEqual({ type: 'object' });
    const inherited = {
      manifest: {
        contract: { input_schema: 'schema.json#/toString', output_schema: 'schema.json#/definitions/x' },
      },
      schema: { definitions: { x: 'text' } },
    } as unknown as VerifiedExecutor;
    expect(contractSchema(inherited, 'input')).toBeUndefined();
    expect(contractSchema(inherited, 'output')).toBeUndefined();
  });
});

describe('verifying a folder names the cause', () => {
  it('returns the verified executor with its files, digests and key', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'named' });
    const verified = await verifyExecutor(dir, { trustedKeys: [key] });
    const sig = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    expect(verified).toMatchObject({
      name: 'named',
      version: '1.0.0',
      dir,
      codeFile: join(dir, 'main.ts'),
      keyId: key.keyId,
      signature: sig.signature,
      digests: {
        manifest: sig.digests.manifest,
        code: sig.digests.code,
        schema: sig.digests.schema,
        profileLock: sig.digests.profile_lock,
      },
    });
    expect(verified.code.toString('utf8')).toBe(await readFile(join(dir, 'main.ts'), 'utf8'));
    expect(verified.stamps.split('|')).toHaveLength(5);
  });

  it('refuses a key nobody trusts, naming the executor and the key', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'stranger' });
    const other = await generateSigningKey();
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [other] }))).toMatchObject({
      reason: 'untrusted_key',
      artefact: 'manifest.sig',
      message: `stranger@1.0.0 is signed by ${key.keyId}, which is not a trusted key`,
    });
  });

  it('refuses a signature over another name, naming both', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'real' });
    await signAsIs(dir, key, { name: 'other', version: '1.0.0' });
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject({
      reason: 'name_mismatch',
      artefact: 'manifest.sig',
      message: 'manifest.sig signs other@1.0.0 but manifest.toml is real@1.0.0',
    });
  });

  it('refuses code changed after signing, naming the code file', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'changed' });
    await writeFile(join(dir, 'main.ts'), `${await readFile(join(dir, 'main.ts'), 'utf8')}\n// changed\n`);
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject({
      reason: 'digest_mismatch',
      artefact: 'main.ts',
      message: 'main.ts of changed@1.0.0 was modified after signing (digest mismatch)',
    });
  });

  it('refuses a missing or unreadable artefact, naming it', async () => {
    const root = await temp.make();
    const { dir, key } = await writeSignedExecutor({ root, name: 'gone' });
    await rm(join(dir, 'schema.json'));
    await mkdir(join(dir, 'schema.json'));
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject({
      reason: 'missing_artefact',
      artefact: 'schema.json',
      message: `schema.json is missing or unreadable in ${dir}`,
    });
  });
});

describe('manifest.sig look-alikes', () => {
  it('the fast check refuses ids and digests wrapped in arrays, and anything before or after them', async () => {
    const data = JSON.parse(await signatureText());
    const code = data.digests.code;
    for (const variant of [
      { ...data, key_id: [data.key_id] },
      { ...data, key_id: `x${data.key_id}` },
      { ...data, key_id: `${data.key_id}0` },
      // Four more base64 characters keep the text canonical base64, of 67 bytes.
      { ...data, signature: `AAAA${data.signature}` },
      { ...data, digests: { ...data.digests, code: [code] } },
      { ...data, digests: { ...data.digests, code: `x${code}` } },
      { ...data, digests: { ...data.digests, code: `${code}0` } },
    ]) {
      expect(isSignatureFile(variant)).toBe(false);
      expect(signatureFileSchema.safeParse(variant).success).toBe(false);
    }
  });

  it('a well-formed file is taken without the schema, whose warm-up every fresh process would pay', async () => {
    const text = await signatureText();
    const safeParse = vi.spyOn(signatureFileSchema, 'safeParse');
    try {
      expect(parseSignatureFile(text)).toEqual(JSON.parse(text));
      expect(safeParse).not.toHaveBeenCalled();
    } finally {
      safeParse.mockRestore();
    }
  });
});

describe('schema.json references and depth', () => {
  it('accepts a schema nested exactly as deep as the limit', () => {
    // The top object is level 1, definitions 2, Output 3 and each "items" one more.
    const nested = (levels: number) =>
      `{"definitions": {"Input": {}, "Output": ${'{"items": '.repeat(levels - 3)}{}${'}'.repeat(levels - 3)}}}`;
    expect(checkSchema(nested(64), manifest)).toMatchObject({ definitions: { Input: {} } });
    expect(refusal(() => checkSchema(nested(65), manifest)).reason).toBe('schema_invalid');
  });

  it('gives each contract reference its own schema, and none through null or a missing key', () => {
    const executor = {
      manifest,
      schema: { definitions: { Input: { type: 'object' }, Output: { type: 'string' } } },
    } as unknown as VerifiedExecutor;
    expect(contractSchema(executor, 'input')).toEqual({ type: 'object' });
    expect(contractSchema(executor, 'output')).toEqual({ type: 'string' });

    const through = {
      contract: {
        input_schema: 'schema.json#/definitions/Input/properties',
        output_schema: 'schema.json#/definitions/Missing/properties',
      },
    } as unknown as Manifest;
    const schema = { definitions: { Input: null, Output: null } };
    expect(
      contractSchema({ manifest: through, schema } as unknown as VerifiedExecutor, 'input'),
    ).toBeUndefined();
    expect(
      contractSchema({ manifest: through, schema } as unknown as VerifiedExecutor, 'output'),
    ).toBeUndefined();
    expect(contractSchema({ manifest, schema } as unknown as VerifiedExecutor, 'output')).toBeUndefined();
    expect(refusal(() => checkSchema(JSON.stringify(schema), through))).toMatchObject({
      reason: 'schema_invalid',
      message:
        'schema.json has no definition for schema.json#/definitions/Input/properties (named in manifest.toml [contract])',
    });
    const inputOnly = { definitions: { Input: { properties: {} } } };
    expect(refusal(() => checkSchema(JSON.stringify(inputOnly), through))).toMatchObject({
      reason: 'schema_invalid',
      message:
        'schema.json has no definition for schema.json#/definitions/Missing/properties (named in manifest.toml [contract])',
    });
  });
});

/** Makes reads of `path` end after `length` bytes, as if it shrank once its size was taken. */
async function endEarly(path: string, length: number) {
  const { ino } = await stat(path);
  let atTheEnd = 0;
  fileSystem.read = (real, fd, buffer, offset, wanted, position) => {
    if (fstatSync(fd).ino !== ino) return real(fd, buffer, offset, wanted, position);
    if (position < length) return real(fd, buffer, offset, Math.min(wanted, length - position), position);
    // A reader that keeps asking at the end would spin for ever on a real file.
    if (++atTheEnd > 3) throw new Error('read at the end again and again');
    // What the rest of the buffer holds is garbage; make it visible.
    buffer.fill('#', offset);
    return 0;
  };
}

/** The files under `dir` this process holds open. */
async function openFilesUnder(dir: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((target) => target.startsWith(`${dir}/`));
}

describe('reading the artefacts', () => {
  it('reads whole files that the file system hands back a few bytes at a time', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'short_reads' });
    fileSystem.read = (real, fd, buffer, offset, wanted, position) =>
      real(fd, buffer, offset, offset === 0 ? Math.min(wanted, 16) : wanted, position);
    expect(await verifyExecutor(dir, { trustedKeys: [key] })).toMatchObject({ name: 'short_reads' });
  });

  it('uses the bytes there are when a file ends before its stated size, and does not spin at its end', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'shrunk' });
    // manifest.sig without its last newline is still the same signature file.
    await endEarly(join(dir, 'manifest.sig'), (await stat(join(dir, 'manifest.sig'))).size - 1);
    expect(await verifyExecutor(dir, { trustedKeys: [key] })).toMatchObject({ name: 'shrunk' });
    await endEarly(join(dir, 'main.ts'), 10);
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject({
      reason: 'digest_mismatch',
      artefact: 'main.ts',
    });
  });

  it('refuses an artefact that is not a regular file, such as a device behind a symlink', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'device' });
    await rm(join(dir, 'schema.json'));
    await symlink('/dev/null', join(dir, 'schema.json'));
    const error = await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }));
    expect(error).toMatchObject({ reason: 'missing_artefact', artefact: 'schema.json' });
    expect((error.cause as Error).message).toBe('not a regular file');
  });

  it.runIf(process.platform === 'linux')(
    'leaves no file of the folder open, verified or refused',
    async () => {
      const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'closed' });
      await verifyExecutor(dir, { trustedKeys: [key] });
      expect(await openFilesUnder(dir)).toEqual([]);
      await rm(join(dir, 'schema.json'));
      await mkdir(join(dir, 'schema.json'));
      await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }));
      expect(await openFilesUnder(dir)).toEqual([]);
    },
  );

  it('stamps a verified folder as artefactStamps does, and a missing file as "missing"', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'stamped' });
    const verified = await verifyExecutor(dir, { trustedKeys: [key] });
    expect(await artefactStamps(dir, 'main.ts')).toBe(verified.stamps);
    await rm(join(dir, 'schema.json'));
    const stamps = verified.stamps.split('|');
    stamps[2] = 'missing';
    expect(await artefactStamps(dir, 'main.ts')).toBe(stamps.join('|'));
  });
});

describe('the file blamed for a refusal', () => {
  it('names schema.json for a broken schema unless manifest.sig says only manifest.toml changed', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'blame' });
    await writeFile(join(dir, 'schema.json'), '[]');
    await writeFile(
      join(dir, 'manifest.toml'),
      (await readFile(join(dir, 'manifest.toml'), 'utf8')).replace('Test executor', 'Best executor'),
    );
    const schemaBlamed = { reason: 'schema_invalid', artefact: 'schema.json' };
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject(schemaBlamed);
    await writeFile(join(dir, 'manifest.sig'), 'not json');
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject(schemaBlamed);
  });

  it('says which value disagrees with a changed profile, and blames the file manifest.sig says changed', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'profile' });
    const path = join(dir, 'manifest.toml');
    const original = await readFile(path, 'utf8');
    const refused = () => refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }));
    const message = (value: string) =>
      `the declared [sandbox] profile of profile@1.0.0 does not match ${value}: the profile changed without re-signing`;

    // Widened, with neither the hash line nor profile.lock updated and no readable manifest.sig.
    await writeFile(path, original.replace('max_duration_ms = 2000', 'max_duration_ms = 600000'));
    await writeFile(join(dir, 'manifest.sig'), 'not json');
    expect(await refused()).toMatchObject({
      reason: 'profile_lock_mismatch',
      artefact: 'manifest.toml',
      message: message('profile.lock'),
    });

    // Only the hash line is wrong.
    const wrongHash = original.replace(
      /hash = "blake3:(.)/,
      (_, first) => `hash = "blake3:${first === 'a' ? 'b' : 'a'}`,
    );
    await writeFile(path, wrongHash);
    expect(await refused()).toMatchObject({ artefact: 'manifest.toml', message: message('[sandbox].hash') });

    // That manifest signed as it is, then profile.lock changed: manifest.sig names profile.lock.
    await signAsIs(dir, key, { name: 'profile', version: '1.0.0' });
    await writeFile(join(dir, 'profile.lock'), `blake3:${'0'.repeat(64)}\n`);
    expect(await refused()).toMatchObject({ artefact: 'profile.lock', message: message('profile.lock') });
  });

  it('refuses a signature over another version, naming both', async () => {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name: 'versioned' });
    await signAsIs(dir, key, { name: 'versioned', version: '2.0.0' });
    expect(await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key] }))).toMatchObject({
      reason: 'name_mismatch',
      message: 'manifest.sig signs versioned@2.0.0 but manifest.toml is versioned@1.0.0',
    });
  });
});

/** A cache that vouches for every signed set and remembers `manifest` for every manifest digest. */
function vouchingCache(manifest: unknown) {
  const remember = vi.fn();
  const cache: VerificationCache = {
    manifestFor: () => JSON.stringify(manifest),
    confirm: () => true,
    remember,
    save: async () => ({ saved: false }),
    disabled: undefined,
    hits: 0,
    stored: 0,
  };
  return { cache, remember };
}

describe('verifying with a verification cache', () => {
  async function remembered(name: string) {
    const { dir, key } = await writeSignedExecutor({ root: await temp.make(), name });
    const base = await temp.make();
    const settings = { file: join(base, 'cache.json'), secretFile: join(base, 'cache.secret') };
    const first = await openVerificationCache(settings);
    const full = await verifyExecutor(dir, { trustedKeys: [key], verificationCache: first });
    await first.save();
    return { dir, key, full, reopen: () => openVerificationCache(settings) };
  }

  it('hands out a remembered version as the full check did, its key found by id among the trusted', async () => {
    const { dir, key, full, reopen } = await remembered('remembered');
    const cache = await reopen();
    const other = await generateSigningKey();
    const verified = await verifyExecutor(dir, { trustedKeys: [other, key], verificationCache: cache });
    expect(cache.hits).toBe(1);
    expect(verified).toEqual(full);
  });

  it('refuses a remembered version whose schema.json or profile.lock changed, even to well-formed content', async () => {
    const { dir, key, reopen } = await remembered('changed');
    const schema = join(dir, 'schema.json');
    const original = await readFile(schema);
    await writeFile(schema, JSON.stringify({ definitions: { Input: {}, Output: {} } }));
    expect(
      await refusedAsync(async () =>
        verifyExecutor(dir, { trustedKeys: [key], verificationCache: await reopen() }),
      ),
    ).toMatchObject({ reason: 'digest_mismatch', artefact: 'schema.json' });
    await writeFile(schema, original);
    await writeFile(join(dir, 'profile.lock'), `blake3:${'0'.repeat(64)}\n`);
    expect(
      await refusedAsync(async () =>
        verifyExecutor(dir, { trustedKeys: [key], verificationCache: await reopen() }),
      ),
    ).toMatchObject({ reason: 'profile_lock_mismatch', artefact: 'profile.lock' });
  });

  it('takes a version the cache vouches for without checking it again', async () => {
    const { dir, key, full } = await remembered('vouched');
    const { cache, remember } = vouchingCache(full.manifest);
    expect(await verifyExecutor(dir, { trustedKeys: [key], verificationCache: cache })).toEqual(full);
    expect(remember).not.toHaveBeenCalled();
  });

  it('still holds a vouched-for version to the signed digests and to its name and version', async () => {
    const { dir, key, full } = await remembered('held');
    for (const executor of [
      { ...full.manifest.executor, name: 'other' },
      { ...full.manifest.executor, version: '9.9.9' },
    ]) {
      const { cache, remember } = vouchingCache({ ...full.manifest, executor });
      expect(await verifyExecutor(dir, { trustedKeys: [key], verificationCache: cache })).toEqual(full);
      expect(remember).toHaveBeenCalledTimes(1);
    }
    await forgeSignature(dir, key, (file) => {
      file.digests.manifest = digest('e');
    });
    const { cache } = vouchingCache(full.manifest);
    expect(
      await refusedAsync(() => verifyExecutor(dir, { trustedKeys: [key], verificationCache: cache })),
    ).toMatchObject({ reason: 'signature_invalid' });
  });

  it('ignores a remembered manifest whose entry is not a plain file name in the folder', async () => {
    const { dir, key, full } = await remembered('entry');
    for (const entry of ['main.tsx', '../main.ts', ['main.ts']]) {
      const { cache } = vouchingCache({ ...full.manifest, executor: { ...full.manifest.executor, entry } });
      const verified = await verifyExecutor(dir, { trustedKeys: [key], verificationCache: cache });
      expect([entry, verified.codeFile]).toEqual([entry, join(dir, 'main.ts')]);
    }
  });

  it('checks in full when a remembered manifest names a code file the folder does not have', async () => {
    const { dir, key, full } = await remembered('gone');
    const { cache } = vouchingCache({
      ...full.manifest,
      executor: { ...full.manifest.executor, entry: 'gone.ts' },
    });
    const verified = await verifyExecutor(dir, { trustedKeys: [key], verificationCache: cache });
    expect(verified.codeFile).toBe(join(dir, 'main.ts'));
    expect(verified.digests).toEqual(full.digests);
  });
});
