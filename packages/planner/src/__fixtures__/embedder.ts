import { createHash } from 'node:crypto';

/**
 * A small deterministic embedder for engine tests: hashed word unigrams and
 * character trigrams, L2-normalised. Tests that need the real default use
 * `@metnos/autopath`'s embedders.
 */
export function testEmbedder(dimensions = 512) {
  return {
    id: 'test-hash',
    dimensions,
    async embed(texts: string[]): Promise<Float32Array[]> {
      return texts.map((text) => {
        const vector = new Float32Array(dimensions);
        const words = text
          .toLowerCase()
          .split(/[^a-z0-9<>]+/)
          .filter(Boolean);
        const features = [
          ...words,
          ...words.flatMap((word) =>
            Array.from(
              { length: Math.max(0, word.length - 2) },
              (_, index) => `#${word.slice(index, index + 3)}`,
            ),
          ),
        ];
        for (const feature of features) {
          const digest = createHash('md5').update(feature).digest();
          vector[digest.readUInt32LE(0) % dimensions]! += digest[4]! & 1 ? 1 : -1;
        }
        const norm = Math.hypot(...vector) || 1;
        return vector.map((value) => value / norm);
      });
    },
  };
}
