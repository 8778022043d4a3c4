// An Ed25519 public key as OpenSSL's key object, from its 32 raw bytes: one way of making it for
// the calling thread (src/keys.ts) and for the threads that check signatures beside it
// (verify-helper.mjs, signature-helper.mjs). node:crypto is taken when a key is first made, not
// when this module loads: the signature thread starts without it.

/**
 * The key object OpenSSL checks Ed25519 signatures with, for a raw 32-byte public key.
 * Throws when OpenSSL refuses the key.
 */
export function ed25519PublicKey(publicKey) {
  const x = Buffer.from(publicKey).toString('base64url');
  return process
    .getBuiltinModule('node:crypto')
    .createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}
