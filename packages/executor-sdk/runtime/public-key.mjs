// An Ed25519 public key as OpenSSL's key object, from its 32 raw bytes: one way of making it for
// the calling thread (src/keys.ts) and for the threads that check signatures beside it
// (verify-helper.mjs, signature-helper.mjs). node: built-ins only, so those threads start fast.
import { createPublicKey } from 'node:crypto';

/**
 * The key object OpenSSL checks Ed25519 signatures with, for a raw 32-byte public key.
 * Throws when OpenSSL refuses the key.
 */
export function ed25519PublicKey(publicKey) {
  const x = Buffer.from(publicKey).toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}
