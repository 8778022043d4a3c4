import { sign } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, nodeSigningKey } from './keys.ts';

// Receipts and their head are signed with OpenSSL through nodeSigningKey; the
// signatures must be the very bytes @noble/curves gives (Ed25519 is deterministic).

describe('nodeSigningKey', () => {
  it('signs byte for byte as @noble/curves does, and keeps one key object per key', async () => {
    for (let round = 0; round < 3; round++) {
      const key = await generateSigningKey();
      for (let index = 0; index < 20; index++) {
        const message = new TextEncoder().encode(
          `metnos receipt ${round}/${index} ${'x'.repeat(index * 13)}`,
        );
        expect(Buffer.from(sign(null, message, nodeSigningKey(key)))).toEqual(
          Buffer.from(ed25519.sign(message, key.secretKey)),
        );
      }
      expect(nodeSigningKey(key)).toBe(nodeSigningKey(key));
    }
  });
});
