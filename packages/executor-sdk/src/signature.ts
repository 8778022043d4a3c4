import { verify as nodeVerify, type webcrypto } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';
import { loadSodiumVerify, type SodiumVerify, sodiumAccepts } from '../runtime/sodium-verify.mjs';
import {
  claimedStatement,
  SIGNATURE_TAG,
  type SignatureStatement,
  statementBytes,
} from '../runtime/statement.mjs';
import { nodePublicKey, type PublicKey, type SigningKey } from './keys.ts';

export { claimedStatement, SIGNATURE_TAG, type SignatureStatement, statementBytes };

/** The digests a signature binds together. */
export type SignedDigests = Omit<SignatureStatement, 'keyId' | 'name' | 'version'>;

const digest = z.string().regex(/^blake3:[0-9a-f]{64}$/);

/**
 * The parsed content of `manifest.sig`. It repeats the signed digests so a
 * failed check can name the artefact that changed.
 */
export const signatureFileSchema = z
  .object({
    v: z.literal(1),
    alg: z.literal('ed25519'),
    key_id: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
    name: z.string(),
    version: z.string(),
    digests: z
      .object({
        manifest: digest,
        code: digest,
        schema: digest,
        profile_lock: digest,
      })
      .strict(),
    signature: z.string().regex(/^[A-Za-z0-9+/]{86}==$/),
  })
  .strict();

export type SignatureFile = z.infer<typeof signatureFileSchema>;

/** Signs a statement and returns the text of `manifest.sig`. */
export function signStatement(statement: Omit<SignatureStatement, 'keyId'>, key: SigningKey): string {
  const bytes = statementBytes({ ...statement, keyId: key.keyId });
  const signature = ed25519.sign(bytes, key.secretKey);
  const file: SignatureFile = {
    v: 1,
    alg: 'ed25519',
    key_id: key.keyId,
    name: statement.name,
    version: statement.version,
    digests: {
      manifest: statement.manifest,
      code: statement.code,
      schema: statement.schema,
      profile_lock: statement.profileLock,
    },
    signature: Buffer.from(signature).toString('base64'),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * How signatures are checked, all over the same bytes and the same RFC 8032 rules:
 * - `node`: OpenSSL through `crypto.verify`; in async contexts (catalog loads)
 *   with a callback, so checks run on libuv's thread pool while the main
 *   thread reads and parses the next executor. The default: the fastest for
 *   whole catalogs in `pnpm bench:catalog`.
 * - `webcrypto`: `crypto.subtle.verify`, the same OpenSSL on the same pool,
 *   with more per-call overhead on the main thread.
 * - `noble`: `@noble/curves`, pure JavaScript, for hosts without Ed25519 in OpenSSL.
 */
export type SignatureBackend = 'node' | 'webcrypto' | 'noble';

/** The backend used when none is named. */
export const DEFAULT_SIGNATURE_BACKEND: SignatureBackend = 'node';

const subtleKeys = new Map<string, Promise<webcrypto.CryptoKey>>();

function subtleKey(key: PublicKey): Promise<webcrypto.CryptoKey> {
  // Cached by the key's bytes, never by its id: an id is only a label someone wrote down.
  const cacheKey = Buffer.from(key.publicKey).toString('base64');
  let imported = subtleKeys.get(cacheKey);
  if (!imported) {
    imported = crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, ['verify']);
    subtleKeys.set(cacheKey, imported);
  }
  return imported;
}

/**
 * Checks an Ed25519 signature over a statement with any backend, off the
 * calling thread where the backend allows. Never rejects on bad input: a
 * malformed key or signature is `false`.
 */
export function verifyStatementAsync(
  statement: SignatureStatement,
  signature: Uint8Array,
  key: PublicKey,
  backend: SignatureBackend = DEFAULT_SIGNATURE_BACKEND,
): Promise<boolean> {
  return verifySignedBytesAsync(statementBytes(statement), signature, key, backend);
}

/** {@link verifyStatementAsync} over statement bytes already built with {@link statementBytes}. */
export async function verifySignedBytesAsync(
  bytes: Uint8Array,
  signature: Uint8Array,
  key: PublicKey,
  backend: SignatureBackend = DEFAULT_SIGNATURE_BACKEND,
): Promise<boolean> {
  try {
    if (backend === 'noble') return ed25519.verify(signature, bytes, key.publicKey, { zip215: false });
    if (backend === 'webcrypto') {
      return await crypto.subtle.verify({ name: 'Ed25519' }, await subtleKey(key), signature, bytes);
    }
    const publicKey = nodePublicKey(key);
    return await new Promise<boolean>((resolve) => {
      nodeVerify(null, bytes, publicKey, signature, (error, valid) => resolve(!error && valid));
    });
  } catch {
    return false;
  }
}

/**
 * Checks an Ed25519 signature over statement bytes on the calling thread, accepting exactly
 * what OpenSSL accepts (the `node` backend, RFC 8032 rules); libsodium confirms good signatures
 * first where its addon loads. Never throws on bad input: a malformed key or signature is
 * `false`.
 */
export function verifySignedBytes(bytes: Uint8Array, signature: Uint8Array, key: PublicKey): boolean {
  try {
    // the key OpenSSL would check with, first: a key it refuses verifies nothing, as before
    const keyObject = nodePublicKey(key);
    sodium ??= { verify: loadSodiumVerify() };
    // libsodium settles a good signature in about half OpenSSL's time; what it refuses,
    // OpenSSL decides (see runtime/sodium-verify.mjs)
    return (
      sodiumAccepts(sodium.verify, signature, bytes, key.publicKey) ||
      nodeVerify(null, bytes, keyObject, signature)
    );
  } catch {
    return false;
  }
}

/** libsodium's check, loaded on the first signature checked (undefined where it does not load). */
let sodium: { verify: SodiumVerify | undefined } | undefined;

/** Checks an Ed25519 signature over a statement. Never throws on bad input. */
export function verifyStatement(
  statement: SignatureStatement,
  signature: Uint8Array,
  key: PublicKey,
  // Stryker disable next-line StringLiteral: every backend but 'noble' is node here, so the default's spelling changes nothing
  backend: Exclude<SignatureBackend, 'webcrypto'> = 'node',
): boolean {
  const bytes = statementBytes(statement);
  try {
    // Strict encodings (no ZIP-215 leniency). noble checks the equation multiplied by the
    // cofactor, so a few crafted signatures that node:crypto refuses pass here: the `node`
    // backend, the default, is the reference.
    if (backend === 'noble') return ed25519.verify(signature, bytes, key.publicKey, { zip215: false });
  } catch {
    return false;
  }
  return verifySignedBytes(bytes, signature, key);
}
