import type { KeyObject } from 'node:crypto';
/** The key object OpenSSL checks Ed25519 signatures with, for a raw 32-byte public key. */
export declare function ed25519PublicKey(publicKey: Uint8Array): KeyObject;
