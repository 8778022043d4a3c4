import type { FittableEmbedder } from './embedder.ts';
import { createHashingEmbedder, type HashingEmbedderSettings } from './hashing-embedder.ts';

/**
 * The embedder Metnos uses when no model is configured, chosen by the memory
 * benchmark (see the package README): hashed character n-grams, words and
 * bigrams with label-level inverse frequency. It needs no download and no
 * native code, and it is the same on every machine.
 *
 * @example
 * const embedder = createDefaultEmbedder();
 * const index = await createVectorIndex({ path: 'memory.sqlite' }, embedder);
 */
export function createDefaultEmbedder(settings: HashingEmbedderSettings = {}): FittableEmbedder {
  return createHashingEmbedder(settings);
}
