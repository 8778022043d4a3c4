import { createHash, verify as opensslVerify } from 'node:crypto';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE, numberToBytesLE } from '@noble/curves/utils.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SodiumVerify } from '../runtime/sodium-verify.mjs';
import { seededRandom } from './__fixtures__/index.ts';
import { keyIdOf, nodePublicKey, type PublicKey, type SigningKey } from './keys.ts';
import { type SignatureStatement, statementBytes, verifySignedBytes } from './signature.ts';

/** libsodium as signature.ts sees it: the real check, unless a test stands another in for it. */
const libsodium = vi.hoisted(() => ({ standIn: undefined as SodiumVerify | undefined }));

vi.mock('../runtime/sodium-verify.mjs', async (importOriginal) => {
  const original = await importOriginal<typeof import('../runtime/sodium-verify.mjs')>();
  return {
    ...original,
    loadSodiumVerify: () => {
      const real = original.loadSodiumVerify();
      return (
        real &&
        ((signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) =>
          (libsodium.standIn ?? real)(signature, message, publicKey))
      );
    },
  };
});

const { loadSodiumVerify, sodiumAccepts } = await vi.importActual<
  typeof import('../runtime/sodium-verify.mjs')
>('../runtime/sodium-verify.mjs');

afterEach(() => {
  libsodium.standIn = undefined;
});

/** Linux on x64 with glibc, for which sodium-native ships its addon (prebuilds/linux-x64). */
const LINUX_X64_GLIBC =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header
    ?.glibcVersionRuntime !== undefined;

const { Point } = ed25519;
/** L, the order of the group Ed25519 signs in. */
const ORDER = Point.Fn.ORDER;
/** The identity point's encoding: y = 1, x = 0. */
const IDENTITY = numberToBytesLE(1n, 32);

/** libsodium's check, which these tests need loaded. */
function loadedSodiumVerify(): SodiumVerify {
  const verify = loadSodiumVerify();
  if (!verify) throw new Error("sodium-native's addon did not load");
  return verify;
}

async function signingKeyFrom(secretKey: Uint8Array): Promise<SigningKey> {
  const publicKey = ed25519.getPublicKey(secretKey);
  return { keyId: await keyIdOf(publicKey), publicKey, secretKey };
}

async function publicKeyFrom(publicKey: Uint8Array): Promise<PublicKey> {
  return { keyId: await keyIdOf(publicKey), publicKey };
}

function statementFor(keyId: string, name = 'fs_read'): Uint8Array {
  const statement: SignatureStatement = {
    keyId,
    name,
    version: '1.0.0',
    manifest: `blake3:${'a'.repeat(64)}`,
    code: `blake3:${'b'.repeat(64)}`,
    schema: `blake3:${'c'.repeat(64)}`,
    profileLock: `blake3:${'d'.repeat(64)}`,
  };
  return statementBytes(statement);
}

/** The private scalar a, as RFC 8032 derives it: the first half of SHA-512(seed), clamped. */
function privateScalar(key: SigningKey): bigint {
  const head = createHash('sha512').update(key.secretKey).digest().subarray(0, 32);
  head[0]! &= 248;
  head[31]! &= 127;
  head[31]! |= 64;
  return bytesToNumberLE(head);
}

/** k = SHA-512(R || A || M) mod L. */
function challenge(r: Uint8Array, publicKey: Uint8Array, message: Uint8Array): bigint {
  return bytesToNumberLE(createHash('sha512').update(r).update(publicKey).update(message).digest()) % ORDER;
}

/** R || S, with S written out as given, reduced or not. */
function signatureOf(r: Uint8Array, s: bigint): Uint8Array {
  const signature = new Uint8Array(64);
  signature.set(r);
  signature.set(numberToBytesLE(s, 32), 32);
  return signature;
}

/** Whether [S]B = R + [k]A, the RFC 8032 equation without the cofactor. */
function equationHolds(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  const r = signature.subarray(0, 32);
  const s = bytesToNumberLE(signature.subarray(32));
  const k = challenge(r, publicKey, message);
  const right = Point.fromBytes(r).add(Point.fromBytes(publicKey).multiplyUnsafe(k));
  return Point.BASE.multiplyUnsafe(s).equals(right);
}

function opensslAccepts(message: Uint8Array, signature: Uint8Array, key: PublicKey): boolean {
  try {
    return opensslVerify(null, message, nodePublicKey(key), signature);
  } catch {
    return false;
  }
}

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const flipped = bytes.slice();
  flipped[bit >> 3]! ^= 1 << (bit & 7);
  return flipped;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe("libsodium's check from sodium-native's addon", () => {
  it.runIf(LINUX_X64_GLIBC)(
    'loads on Linux x64 with glibc, accepts a good Metnos signature and refuses it with one bit flipped',
    async () => {
      const verify = loadedSodiumVerify();
      expect(verify).toBeTypeOf('function');
      const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
      const bytes = statementFor(key.keyId);
      const signature = ed25519.sign(bytes, key.secretKey);

      expect(sodiumAccepts(verify, signature, bytes, key.publicKey)).toBe(true);
      expect(sodiumAccepts(verify, flipBit(signature, 77), bytes, key.publicKey)).toBe(false);
      expect(sodiumAccepts(verify, signature, flipBit(bytes, 3), key.publicKey)).toBe(false);
    },
  );
});

describe('sodiumAccepts', () => {
  it('is false when there is no libsodium, even for a good signature', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const bytes = statementFor(key.keyId);
    expect(sodiumAccepts(undefined, ed25519.sign(bytes, key.secretKey), bytes, key.publicKey)).toBe(false);
  });

  it.runIf(LINUX_X64_GLIBC)(
    'is false, and does not throw, for a 63-byte signature or a 31-byte key, which libsodium throws on',
    async () => {
      const verify = loadedSodiumVerify();
      const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
      const bytes = statementFor(key.keyId);
      const signature = ed25519.sign(bytes, key.secretKey);
      const shortSignature = signature.slice(0, 63);
      const shortKey = key.publicKey.slice(0, 31);

      expect(() => verify(shortSignature, bytes, key.publicKey)).toThrow();
      expect(() => verify(signature, bytes, shortKey)).toThrow();
      expect(sodiumAccepts(verify, shortSignature, bytes, key.publicKey)).toBe(false);
      expect(sodiumAccepts(verify, signature, bytes, shortKey)).toBe(false);
    },
  );

  it('is false, and does not throw, when the check itself throws', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const bytes = statementFor(key.keyId);
    const failing: SodiumVerify = () => {
      throw new Error('the addon failed');
    };
    expect(sodiumAccepts(failing, ed25519.sign(bytes, key.secretKey), bytes, key.publicKey)).toBe(false);
  });
});

describe('verifySignedBytes accepts exactly what OpenSSL accepts', () => {
  it('a signature whose R is the identity point, made with the private key: libsodium refuses it and verifySignedBytes answers as OpenSSL does', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const a = privateScalar(key);
    expect(Point.BASE.multiply(a % ORDER).toBytes()).toEqual(key.publicKey);
    const bytes = statementFor(key.keyId);
    // With R the identity, [S]B = [k]A = [k·a]B.
    const signature = signatureOf(IDENTITY, (challenge(IDENTITY, key.publicKey, bytes) * a) % ORDER);

    expect(equationHolds(signature, bytes, key.publicKey)).toBe(true);
    expect(sodiumAccepts(loadSodiumVerify(), signature, bytes, key.publicKey)).toBe(false);
    // OpenSSL's own check accepts it, but Node may refuse small-order points before OpenSSL sees
    // them (24.21 does): verifySignedBytes must give node:crypto's answer, whichever it is.
    expect(verifySignedBytes(bytes, signature, key)).toBe(opensslAccepts(bytes, signature, key));
  });

  it('a public key of small order (the identity), under which one signature fits every statement: libsodium refuses it and verifySignedBytes answers as OpenSSL does', async () => {
    const key = await publicKeyFrom(IDENTITY);
    const r = bytesToNumberLE(ed25519.utils.randomSecretKey()) % ORDER;
    const signature = signatureOf(Point.BASE.multiply(r).toBytes(), r);

    for (const name of ['fs_read', 'fs_write']) {
      const bytes = statementFor(key.keyId, name);
      expect(equationHolds(signature, bytes, key.publicKey)).toBe(true);
      expect(sodiumAccepts(loadSodiumVerify(), signature, bytes, key.publicKey)).toBe(false);
      expect(verifySignedBytes(bytes, signature, key)).toBe(opensslAccepts(bytes, signature, key));
    }
  });

  it('a signature whose R carries a small-order part, which holds only once multiplied by the cofactor: libsodium, OpenSSL and verifySignedBytes all refuse it', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const a = privateScalar(key);
    const bytes = statementFor(key.keyId);
    const r = bytesToNumberLE(ed25519.utils.randomSecretKey()) % ORDER;
    const eighthRoot = Point.fromHex(ED25519_TORSION_SUBGROUP[1]!);
    const mixed = Point.BASE.multiply(r).add(eighthRoot).toBytes();
    const signature = signatureOf(mixed, (r + challenge(mixed, key.publicKey, bytes) * a) % ORDER);

    expect(equationHolds(signature, bytes, key.publicKey)).toBe(false);
    expect(sodiumAccepts(loadSodiumVerify(), signature, bytes, key.publicKey)).toBe(false);
    expect(opensslAccepts(bytes, signature, key)).toBe(false);
    expect(verifySignedBytes(bytes, signature, key)).toBe(false);
  });

  it('a signature with L added to its S is refused by libsodium, OpenSSL and verifySignedBytes, which all accept it with S itself', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const bytes = statementFor(key.keyId);
    const signature = ed25519.sign(bytes, key.secretKey);
    const widened = signatureOf(signature.subarray(0, 32), bytesToNumberLE(signature.subarray(32)) + ORDER);

    expect(opensslAccepts(bytes, signature, key)).toBe(true);
    expect(verifySignedBytes(bytes, signature, key)).toBe(true);
    expect(sodiumAccepts(loadSodiumVerify(), widened, bytes, key.publicKey)).toBe(false);
    expect(opensslAccepts(bytes, widened, key)).toBe(false);
    expect(verifySignedBytes(bytes, widened, key)).toBe(false);
  });

  it('a good signature with bytes added after its 64 is refused by OpenSSL, so libsodium must not settle it and verifySignedBytes refuses it', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const bytes = statementFor(key.keyId);
    const signature = ed25519.sign(bytes, key.secretKey);

    for (const extra of [1, 64]) {
      const longer = new Uint8Array(64 + extra);
      longer.set(signature);
      expect({
        openssl: opensslAccepts(bytes, longer, key),
        libsodium: sodiumAccepts(loadSodiumVerify(), longer, bytes, key.publicKey),
        verifySignedBytes: verifySignedBytes(bytes, longer, key),
      }).toEqual({ openssl: false, libsodium: false, verifySignedBytes: false });
    }
  });

  it('over 300 random messages and signatures with random bits flipped, a yes from libsodium is always a yes from OpenSSL, and verifySignedBytes answers as OpenSSL does', async () => {
    const random = seededRandom(8032);
    const keys = await Promise.all([0, 1, 2, 3].map(() => signingKeyFrom(random.bytes(32))));
    const verify = loadSodiumVerify();
    const disagreements: string[] = [];
    let accepted = 0;

    for (let round = 0; round < 300; round++) {
      const signer = keys[random.below(keys.length)]!;
      let message: Uint8Array = random.bytes(1 + random.below(300));
      let signature: Uint8Array = ed25519.sign(message, signer.secretKey);
      let publicKey: Uint8Array = signer.publicKey;
      for (let flips = random.below(4); flips > 0; flips--) {
        const place = random.below(3);
        if (place === 0) signature = flipBit(signature, random.below(signature.length * 8));
        if (place === 1) message = flipBit(message, random.below(message.length * 8));
        if (place === 2) publicKey = flipBit(publicKey, random.below(publicKey.length * 8));
      }
      const key = await publicKeyFrom(publicKey);

      const openssl = opensslAccepts(message, signature, key);
      const sodium = sodiumAccepts(verify, signature, message, publicKey);
      const checked = verifySignedBytes(message, signature, key);
      if ((sodium && !openssl) || checked !== openssl) {
        disagreements.push(
          `key ${hex(publicKey)} message ${hex(message)} signature ${hex(signature)}: ` +
            `OpenSSL ${openssl}, libsodium ${sodium}, verifySignedBytes ${checked}`,
        );
      }
      if (openssl) accepted++;
    }

    expect(disagreements).toEqual([]);
    expect(accepted).toBeGreaterThan(30);
    expect(accepted).toBeLessThan(270);
  });

  it('when libsodium refuses or fails, OpenSSL decides: a good Metnos signature is still accepted and a bad one still refused', async () => {
    const key = await signingKeyFrom(ed25519.utils.randomSecretKey());
    const bytes = statementFor(key.keyId);
    const signature = ed25519.sign(bytes, key.secretKey);
    const standIns: SodiumVerify[] = [
      () => false,
      () => {
        throw new Error('the addon failed');
      },
    ];

    for (const standIn of standIns) {
      libsodium.standIn = standIn;
      expect(verifySignedBytes(bytes, signature, key)).toBe(true);
      expect(verifySignedBytes(bytes, flipBit(signature, 300), key)).toBe(false);
      expect(verifySignedBytes(flipBit(bytes, 9), signature, key)).toBe(false);
    }
  });
});
