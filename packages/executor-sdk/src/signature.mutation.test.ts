import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it, vi } from 'vitest';
import { generateSigningKey, type PublicKey } from './keys.ts';
import {
  claimedStatement,
  DEFAULT_SIGNATURE_BACKEND,
  SIGNATURE_TAG,
  type SignatureStatement,
  signatureFileSchema,
  signStatement,
  statementBytes,
  verifySignedBytesAsync,
  verifyStatement,
  verifyStatementAsync,
} from './signature.ts';

// The real ed25519 object is frozen: the module hands out a copy whose verify can be watched.
vi.mock('@noble/curves/ed25519.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('@noble/curves/ed25519.js')>();
  return { ...original, ed25519: { ...original.ed25519, verify: vi.fn(original.ed25519.verify) } };
});

const digest = (letter: string) => `blake3:${letter.repeat(64)}`;
const unsigned = {
  name: 'fs_read',
  version: '1.0.0',
  manifest: digest('a'),
  code: digest('b'),
  schema: digest('c'),
  profileLock: digest('d'),
};

describe('statementBytes', () => {
  it('writes the tag and each labelled field on its own line, ending with a newline', () => {
    const text = new TextDecoder().decode(statementBytes({ ...unsigned, keyId: 'ed25519:0123456789abcdef' }));
    expect(SIGNATURE_TAG).toBe('metnos.executor.signature.v1');
    expect(text).toBe(
      [
        'metnos.executor.signature.v1',
        'key_id=ed25519:0123456789abcdef',
        'name=fs_read',
        'version=1.0.0',
        `manifest=${digest('a')}`,
        `code=${digest('b')}`,
        `schema=${digest('c')}`,
        `profile_lock=${digest('d')}`,
        '',
      ].join('\n'),
    );
  });

  it('refuses a newline in any field, so no field can forge another line', () => {
    for (const field of ['keyId', 'name', 'version', 'manifest', 'code', 'schema', 'profileLock'] as const) {
      const statement = { ...unsigned, keyId: 'ed25519:0123456789abcdef', [field]: 'x\nname=other' };
      expect(() => statementBytes(statement)).toThrow('signature statement fields cannot contain newlines');
    }
  });
});

describe('manifest.sig', () => {
  it('is written by signStatement and read back by the schema and claimedStatement', async () => {
    const key = await generateSigningKey();
    const text = signStatement(unsigned, key);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "v": 1,');
    const file = signatureFileSchema.parse(JSON.parse(text));
    expect(file).toMatchObject({
      v: 1,
      alg: 'ed25519',
      key_id: key.keyId,
      name: 'fs_read',
      version: '1.0.0',
      digests: { manifest: digest('a'), code: digest('b'), schema: digest('c'), profile_lock: digest('d') },
    });
    expect(claimedStatement(file)).toEqual({ ...unsigned, keyId: key.keyId });
    const signature = Buffer.from(file.signature, 'base64');
    expect(verifyStatement(claimedStatement(file), signature, key)).toBe(true);
  });

  it('refuses files whose fields are out of form', async () => {
    const key = await generateSigningKey();
    const good = JSON.parse(signStatement(unsigned, key));
    expect(signatureFileSchema.safeParse(good).success).toBe(true);
    const variants: Array<Record<string, unknown>> = [
      { ...good, v: 2 },
      { ...good, alg: 'rsa' },
      { ...good, key_id: 'ed25519:0123' },
      { ...good, key_id: 'ed25519:0123456789ABCDEF' },
      { ...good, key_id: 'x-ed25519:0123456789abcdef' },
      { ...good, key_id: `${good.key_id}0` },
      { ...good, digests: { ...good.digests, code: 'blake3:abc' } },
      { ...good, digests: { ...good.digests, code: `sha256:${'b'.repeat(64)}` } },
      { ...good, digests: { ...good.digests, code: `blake3:${'B'.repeat(64)}` } },
      { ...good, digests: { ...good.digests, code: `${digest('b')}0` } },
      { ...good, digests: { ...good.digests, code: `x${digest('b')}` } },
      { ...good, digests: { ...good.digests, extra: digest('e') } },
      { ...good, signature: good.signature.slice(0, -2) },
      { ...good, signature: `${good.signature.slice(0, -2)}=` },
      { ...good, signature: `x${good.signature}` },
      { ...good, signature: `${good.signature}x` },
      { ...good, extra: true },
    ];
    for (const variant of variants) expect(signatureFileSchema.safeParse(variant).success).toBe(false);
  });
});

describe('verifying a statement', () => {
  it('accepts the signed statement with every backend, sync and async, and the node backend by default', async () => {
    const key = await generateSigningKey();
    const file = signatureFileSchema.parse(JSON.parse(signStatement(unsigned, key)));
    const statement = claimedStatement(file);
    const signature = Buffer.from(file.signature, 'base64');
    expect(DEFAULT_SIGNATURE_BACKEND).toBe('node');
    expect(verifyStatement(statement, signature, key)).toBe(true);
    expect(verifyStatement(statement, signature, key, 'noble')).toBe(true);
    for (const backend of ['node', 'webcrypto', 'noble'] as const) {
      expect(await verifyStatementAsync(statement, signature, key, backend)).toBe(true);
      expect(await verifySignedBytesAsync(statementBytes(statement), signature, key, backend)).toBe(true);
    }
    expect(await verifyStatementAsync(statement, signature, key)).toBe(true);
  });

  it('refuses a change to any field, another key, and a changed signature, with every backend', async () => {
    const key = await generateSigningKey();
    const other = await generateSigningKey();
    const file = signatureFileSchema.parse(JSON.parse(signStatement(unsigned, key)));
    const statement = claimedStatement(file);
    const signature = Buffer.from(file.signature, 'base64');
    const flipped = Uint8Array.from(signature);
    flipped[10] = flipped[10]! ^ 1;
    const changed: SignatureStatement[] = [
      { ...statement, name: 'fs_write' },
      { ...statement, version: '1.0.1' },
      { ...statement, keyId: other.keyId },
      { ...statement, manifest: digest('e') },
      { ...statement, code: digest('e') },
      { ...statement, schema: digest('e') },
      { ...statement, profileLock: digest('e') },
    ];
    for (const backend of ['node', 'noble'] as const) {
      for (const statementChanged of changed)
        expect(verifyStatement(statementChanged, signature, key, backend)).toBe(false);
      expect(verifyStatement(statement, signature, other, backend)).toBe(false);
      expect(verifyStatement(statement, flipped, key, backend)).toBe(false);
    }
    for (const backend of ['node', 'webcrypto', 'noble'] as const) {
      for (const statementChanged of changed)
        expect(await verifyStatementAsync(statementChanged, signature, key, backend)).toBe(false);
      expect(await verifyStatementAsync(statement, signature, other, backend)).toBe(false);
      expect(await verifyStatementAsync(statement, flipped, key, backend)).toBe(false);
    }
  });

  it('answers false, never throws, for malformed keys and signatures', async () => {
    const key = await generateSigningKey();
    const statement = { ...unsigned, keyId: key.keyId };
    const signature = Buffer.from(JSON.parse(signStatement(unsigned, key)).signature, 'base64');
    const badKey: PublicKey = { keyId: key.keyId, publicKey: new Uint8Array(5) };
    for (const backend of ['node', 'noble'] as const) {
      expect(verifyStatement(statement, new Uint8Array(3), key, backend)).toBe(false);
      expect(verifyStatement(statement, signature, badKey, backend)).toBe(false);
    }
    for (const backend of ['node', 'webcrypto', 'noble'] as const) {
      expect(await verifyStatementAsync(statement, new Uint8Array(3), key, backend)).toBe(false);
      expect(await verifyStatementAsync(statement, signature, badKey, backend)).toBe(false);
    }
  });

  it('caches imported webcrypto keys by their bytes, not by the id someone wrote', async () => {
    const key = await generateSigningKey();
    const other = await generateSigningKey();
    const statement = { ...unsigned, keyId: key.keyId };
    const signature = Buffer.from(JSON.parse(signStatement(unsigned, key)).signature, 'base64');
    expect(await verifyStatementAsync(statement, signature, key, 'webcrypto')).toBe(true);
    const impostor: PublicKey = { keyId: key.keyId, publicKey: other.publicKey };
    expect(await verifyStatementAsync(statement, signature, impostor, 'webcrypto')).toBe(false);
    expect(await verifyStatementAsync(statement, signature, key, 'webcrypto')).toBe(true);
  });
});

/** A statement signed by a fresh key, with the signature's bytes. */
async function signedStatement() {
  const key = await generateSigningKey();
  const file = signatureFileSchema.parse(JSON.parse(signStatement(unsigned, key)));
  return { key, statement: claimedStatement(file), signature: Buffer.from(file.signature, 'base64') };
}

describe('the backend that checks', () => {
  it('is the one named: noble in JavaScript, webcrypto through crypto.subtle, node (the default) through neither', async () => {
    const { key, statement, signature } = await signedStatement();
    const nobleVerify = vi.mocked(ed25519.verify);
    const subtleVerify = vi.spyOn(crypto.subtle, 'verify');
    const used = async (check: () => boolean | Promise<boolean>) => {
      nobleVerify.mockClear();
      subtleVerify.mockClear();
      expect(await check()).toBe(true);
      return { noble: nobleVerify.mock.calls.length, webcrypto: subtleVerify.mock.calls.length };
    };
    try {
      const bytes = statementBytes(statement);
      const neither = { noble: 0, webcrypto: 0 };
      expect(await used(() => verifyStatement(statement, signature, key))).toEqual(neither);
      expect(await used(() => verifyStatement(statement, signature, key, 'node'))).toEqual(neither);
      expect(await used(() => verifyStatement(statement, signature, key, 'noble'))).toEqual({
        noble: 1,
        webcrypto: 0,
      });
      expect(await used(() => verifyStatementAsync(statement, signature, key))).toEqual(neither);
      expect(await used(() => verifySignedBytesAsync(bytes, signature, key, 'node'))).toEqual(neither);
      expect(await used(() => verifySignedBytesAsync(bytes, signature, key, 'noble'))).toEqual({
        noble: 1,
        webcrypto: 0,
      });
      expect(await used(() => verifySignedBytesAsync(bytes, signature, key, 'webcrypto'))).toEqual({
        noble: 0,
        webcrypto: 1,
      });
    } finally {
      subtleVerify.mockRestore();
    }
  });

  it('applies RFC 8032, not ZIP-215: a non-canonical encoding of a small-order key is refused by every backend', async () => {
    // y = p + 1 (the identity point, spelled with a y past the field prime) and the
    // "signature" R = B, S = 1, which the identity key satisfies for any message.
    const key: PublicKey = {
      keyId: 'ed25519:0123456789abcdef',
      publicKey: Uint8Array.from({ length: 32 }, (_, index) =>
        index === 0 ? 0xee : index === 31 ? 0x7f : 0xff,
      ),
    };
    const scalarOne = Uint8Array.from({ length: 32 }, (_, index) => (index === 0 ? 1 : 0));
    const signature = new Uint8Array([...ed25519.Point.BASE.toBytes(), ...scalarOne]);
    const statement = { ...unsigned, keyId: key.keyId };
    const bytes = statementBytes(statement);
    // What the ZIP-215 rules (noble's default) would accept:
    expect(ed25519.verify(signature, bytes, key.publicKey)).toBe(true);
    for (const backend of ['node', 'noble'] as const) {
      expect(verifyStatement(statement, signature, key, backend)).toBe(false);
    }
    for (const backend of ['node', 'webcrypto', 'noble'] as const) {
      expect(await verifyStatementAsync(statement, signature, key, backend)).toBe(false);
    }
  });

  it('imports a webcrypto key once per key bytes, whatever id it comes with, and not extractable', async () => {
    const { key, statement, signature } = await signedStatement();
    const other = await generateSigningKey();
    const importKey = vi.spyOn(crypto.subtle, 'importKey');
    try {
      expect(await verifyStatementAsync(statement, signature, key, 'webcrypto')).toBe(true);
      expect(await verifyStatementAsync(statement, signature, key, 'webcrypto')).toBe(true);
      const relabelled: PublicKey = {
        keyId: 'ed25519:ffffffffffffffff',
        publicKey: Uint8Array.from(key.publicKey),
      };
      expect(await verifyStatementAsync(statement, signature, relabelled, 'webcrypto')).toBe(true);
      expect(importKey).toHaveBeenCalledTimes(1);
      const imported = await importKey.mock.results[0]!.value;
      expect(imported.extractable).toBe(false);
      expect(imported.usages).toEqual(['verify']);
      expect(await verifyStatementAsync(statement, signature, other, 'webcrypto')).toBe(false);
      expect(importKey).toHaveBeenCalledTimes(2);
    } finally {
      importKey.mockRestore();
    }
  });
});
