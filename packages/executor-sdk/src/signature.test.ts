import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, keyIdOf, type PublicKey } from './keys.ts';
import {
  SIGNATURE_TAG,
  type SignatureBackend,
  type SignatureStatement,
  signStatement,
  statementBytes,
  verifyStatementAsync,
} from './signature.ts';

const BACKENDS: SignatureBackend[] = ['webcrypto', 'node', 'noble'];

function statementFor(keyId: string, overrides: Partial<SignatureStatement> = {}): SignatureStatement {
  return {
    keyId,
    name: 'fs_read',
    version: '1.0.0',
    manifest: `blake3:${'a'.repeat(64)}`,
    code: `blake3:${'b'.repeat(64)}`,
    schema: `blake3:${'c'.repeat(64)}`,
    profileLock: `blake3:${'d'.repeat(64)}`,
    ...overrides,
  };
}

async function verdicts(statement: SignatureStatement, signature: Uint8Array, key: PublicKey) {
  return Promise.all(BACKENDS.map((backend) => verifyStatementAsync(statement, signature, key, backend)));
}

describe('the signed statement', () => {
  it('is domain-separated and names every field on its own line', () => {
    const text = new TextDecoder().decode(statementBytes(statementFor('ed25519:0123456789abcdef')));
    expect(text.split('\n')).toEqual([
      SIGNATURE_TAG,
      'key_id=ed25519:0123456789abcdef',
      'name=fs_read',
      'version=1.0.0',
      `manifest=blake3:${'a'.repeat(64)}`,
      `code=blake3:${'b'.repeat(64)}`,
      `schema=blake3:${'c'.repeat(64)}`,
      `profile_lock=blake3:${'d'.repeat(64)}`,
      '',
    ]);
    expect(() => statementBytes(statementFor('x', { name: 'a\nversion=9.9.9' }))).toThrow(/newlines/);
  });

  it('writes manifest.sig as JSON with the key id, the digests and a 64-byte signature', async () => {
    const key = await generateSigningKey();
    const { keyId: _, ...statement } = statementFor(key.keyId);
    const file = JSON.parse(signStatement(statement, key));
    expect(file).toMatchObject({
      v: 1,
      alg: 'ed25519',
      key_id: key.keyId,
      name: 'fs_read',
      version: '1.0.0',
    });
    expect(Buffer.from(file.signature, 'base64')).toHaveLength(64);
  });
});

describe('signature backends', () => {
  it('webcrypto, node:crypto and noble agree on valid, altered and foreign signatures', async () => {
    const key = await generateSigningKey();
    const stranger = await generateSigningKey();
    const statement = statementFor(key.keyId);
    const signature = ed25519.sign(statementBytes(statement), key.secretKey);

    expect(await verdicts(statement, signature, key)).toEqual([true, true, true]);

    const cases: Array<[string, SignatureStatement, Uint8Array, PublicKey]> = [
      ['another version', statementFor(key.keyId, { version: '2.0.0' }), signature, key],
      ['another code digest', statementFor(key.keyId, { code: `blake3:${'e'.repeat(64)}` }), signature, key],
      ['another key id in the statement', statementFor(stranger.keyId), signature, key],
      ['the wrong public key', statement, signature, stranger],
      ['a truncated signature', statement, signature.slice(0, 63), key],
      ['an empty signature', statement, new Uint8Array(), key],
    ];
    for (let bit = 0; bit < 512; bit += 37) {
      const flipped = Uint8Array.from(signature);
      flipped[bit >> 3] = flipped[bit >> 3]! ^ (1 << (bit & 7));
      cases.push([`signature bit ${bit} flipped`, statement, flipped, key]);
    }
    for (const [label, candidate, bytes, publicKey] of cases) {
      expect([label, await verdicts(candidate, bytes, publicKey)]).toEqual([label, [false, false, false]]);
    }
  });

  it('agree on signatures by another key that claims a trusted key id', async () => {
    const trusted = await generateSigningKey();
    const attacker = await generateSigningKey();
    const statement = statementFor(trusted.keyId);
    const forged = ed25519.sign(statementBytes(statement), attacker.secretKey);
    expect(await verdicts(statement, forged, trusted)).toEqual([false, false, false]);
    // A key object carrying the attacker's bytes under the trusted id (a hand-edited trust entry)
    // is checked with its own bytes by every backend, not with a key cached under the same id.
    const mislabelled: PublicKey = { keyId: trusted.keyId, publicKey: attacker.publicKey };
    expect(await verdicts(statement, forged, mislabelled)).toEqual([true, true, true]);
    expect(
      await verdicts(statement, ed25519.sign(statementBytes(statement), trusted.secretKey), mislabelled),
    ).toEqual([false, false, false]);
  });

  it('agree on a weak (small-order) public key that would verify any statement under ZIP-215 rules', async () => {
    // The identity point as a public key, R = identity and S = 0: [S]B = R + [k]A holds for every message.
    const weak = new Uint8Array(32);
    weak[0] = 1;
    const signature = new Uint8Array(64);
    signature[0] = 1;
    const key: PublicKey = { keyId: await keyIdOf(weak), publicKey: weak };
    for (const version of ['1.0.0', '6.6.6']) {
      expect(await verdicts(statementFor(key.keyId, { version }), signature, key)).toEqual([
        false,
        false,
        false,
      ]);
    }
  });
});
