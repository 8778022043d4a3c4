import { createBLAKE3, type IHasher } from 'hash-wasm';

let hasher: Promise<IHasher> | undefined;

/** The one shared hasher, created on first use. */
function sharedHasher(): Promise<IHasher> {
  if (!hasher) hasher = createBLAKE3();
  return hasher;
}

/** The prefix every Metnos digest string carries, so the algorithm travels with the value. */
export const DIGEST_PREFIX = 'blake3:';

/**
 * BLAKE3 of `data` as `blake3:<hex>`. One WebAssembly hasher is reused; the
 * hashing itself runs synchronously once the module is ready.
 *
 * @example
 * const digest = await blake3Digest('hello'); // 'blake3:ea8f16…'
 */
export async function blake3Digest(data: string | Uint8Array): Promise<string> {
  const instance = await sharedHasher();
  instance.init();
  instance.update(data);
  return DIGEST_PREFIX + instance.digest('hex');
}

/** The shared hasher once it has loaded; {@link blake3DigestSync} needs it. */
let ready: IHasher | undefined;

/** Resolves once the hasher is ready, so hot paths can call {@link blake3DigestSync}. */
export async function prepareBlake3(): Promise<void> {
  ready ??= await sharedHasher();
}

/**
 * Synchronous BLAKE3 for hot paths. Call {@link prepareBlake3} once first.
 *
 * @example
 * await prepareBlake3();
 * blake3DigestSync(buffer);
 */
export function blake3DigestSync(data: string | Uint8Array): string {
  if (!ready) {
    throw new Error('BLAKE3 is not ready: await prepareBlake3() first');
  }
  ready.init();
  ready.update(data);
  // the bytes, spelled in hex natively: cheaper than the hasher's own hex for thousands of files
  const digest = ready.digest('binary');
  return DIGEST_PREFIX + Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex');
}

/** Prepares the hasher and returns the synchronous digest function. */
export async function loadBlake3(): Promise<(data: string | Uint8Array) => string> {
  await prepareBlake3();
  return blake3DigestSync;
}
