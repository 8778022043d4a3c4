import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { VerificationError } from './errors.ts';
import { generateSigningKey } from './keys.ts';
import type { Manifest } from './manifest.ts';
import { signStatement } from './signature.ts';
import { writeSignedExecutor } from './test/index.ts';
import {
  checkSchema,
  contractSchema,
  isSignatureFile,
  parseSignatureFile,
  type VerifiedExecutor,
  verifyExecutor,
} from './verify.ts';

const temp = useTempDirs('metnos-verify-mutation-');
const digest = (letter: string) => `blake3:${letter.repeat(64)}`;

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
  const manifest = {
    contract: {
      input_schema: 'schema.json#/definitions/Input',
      output_schema: 'schema.json#/definitions/Output',
    },
  } as unknown as Manifest;
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
    const sig = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    const resigned = signStatement(
      {
        name: 'other',
        version: '1.0.0',
        manifest: sig.digests.manifest,
        code: sig.digests.code,
        schema: sig.digests.schema,
        profileLock: sig.digests.profile_lock,
      },
      key,
    );
    await writeFile(join(dir, 'manifest.sig'), resigned);
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
