import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { RemoteError } from './errors.ts';

/** The letters of a pairing code: no 0/O, 1/I/L, so it reads aloud and types without doubt. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
/** Sixteen letters of a 31-letter alphabet: about 79 bits. */
const CODE_LENGTH = 16;

/**
 * A fresh one-time pairing code, in groups of four (`ABCD-EFGH-JKMN-PQRS`).
 *
 * @example
 * newPairingCode(); // 'K7PX-2M9Q-HT4W-ZC8N'
 */
export function newPairingCode(): string {
  let code = '';
  for (let index = 0; index < CODE_LENGTH; index++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code.match(/.{4}/g)!.join('-');
}

/**
 * A code as typed (any case, spaces or dashes) in its one spelling; a string
 * that cannot be a code is refused with `pairing_refused`.
 *
 * @example
 * normalizePairingCode('k7px 2m9q-ht4w zc8n'); // 'K7PX2M9QHT4WZC8N'
 */
export function normalizePairingCode(code: string): string {
  const bare = code.toUpperCase().replace(/[\s-]/g, '');
  if (bare.length !== CODE_LENGTH || [...bare].some((char) => !ALPHABET.includes(char)))
    throw new RemoteError({
      code: 'pairing_refused',
      message: `a pairing code is ${CODE_LENGTH} letters and digits, as \`metnos devices pair\` printed it`,
    });
  return bare;
}

/**
 * The secret both sides derive from a code: the server keeps this (never the
 * code) while the code is open, and both prove knowledge of the code with it.
 */
export function pairingSecret(code: string): Buffer {
  return createHash('sha256')
    .update(`metnos.pairing.v1\n${normalizePairingCode(code)}`)
    .digest();
}

/** The value the server finds an open code by: no use to anyone who does not know the code. */
export function pairingLookup(secret: Buffer): string {
  return createHmac('sha256', secret).update('lookup').digest('hex');
}

/** SHA-256 of DER bytes, hex: how proofs name a certificate or a public key. */
export function derDigest(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('hex');
}

/**
 * The server's proof that it knows the code: an HMAC over the challenge and
 * the digest of its CA certificate, so the laptop learns which CA to pin from
 * a server that a man in the middle could not impersonate without the code.
 */
export function serverPairingProof(secret: Buffer, nonce: string, caDer: Uint8Array): string {
  return createHmac('sha256', secret)
    .update(`server\n${nonce}\n${derDigest(caDer)}`)
    .digest('hex');
}

/** The laptop's proof that it knows the code, bound to the challenge and its new public key. */
export function devicePairingProof(secret: Buffer, nonce: string, spkiDer: Uint8Array): string {
  return createHmac('sha256', secret)
    .update(`device\n${nonce}\n${derDigest(spkiDer)}`)
    .digest('hex');
}

/** The bytes the device signs with its new private key: proof that it holds the key it asks a certificate for. */
export function possessionStatement(nonce: string, spkiDer: Uint8Array, name: string): Buffer {
  return Buffer.from(`metnos.pairing.possession.v1\n${nonce}\n${derDigest(spkiDer)}\n${name}\n`, 'utf8');
}

/** Compares two hex proofs in constant time. */
export function proofMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
