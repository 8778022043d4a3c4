/**
 * Turns requests into L2-normalised vectors, so that the cosine of two
 * requests is the dot product of their vectors. Every vector an embedder
 * returns has `dimensions` entries; `id` names the vector space (model and
 * settings), so a store can tell when its vectors were made by another one.
 *
 * @example
 * const embedder: Embedder = createDefaultEmbedder();
 * const [a, b] = await embedder.embed(['play some jazz', 'put on jazz music']);
 */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** A text with the plan (or intent) it belongs to, when known. */
export interface LabelledText {
  text: string;
  label?: string | null;
}

/**
 * An embedder whose weights depend on the texts it has seen (inverse document
 * frequency). `fit` replaces those statistics; vectors made before a fit are
 * stale, which is why `createVectorIndex(...).refit()` re-embeds the store.
 *
 * @example
 * const embedder = createHashingEmbedder();
 * embedder.fit([{ text: 'play jazz', label: 'music' }, { text: 'weather in Rome', label: 'weather' }]);
 */
export interface FittableEmbedder extends Embedder {
  fit(corpus: LabelledText[]): void;
}

/** Whether an embedder learns statistics from stored texts. */
export function isFittable(embedder: Embedder): embedder is FittableEmbedder {
  return typeof (embedder as Partial<FittableEmbedder>).fit === 'function';
}

/**
 * Scales a vector to unit length in place and returns it; an all-zero vector
 * stays zero (it is similar to nothing).
 *
 * @example
 * normalizeVector(Float32Array.of(3, 4)); // Float32Array [0.6, 0.8]
 */
export function normalizeVector(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let index = 0; index < vector.length; index++) sum += vector[index]! * vector[index]!;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index]! *= scale;
  return vector;
}

/**
 * Splits a request into lower-case words of letters and digits, in any
 * script. Shared by the lexical embedders so they agree on what a word is.
 *
 * @example
 * words('Play "Blue in Green", loud!'); // ['play', 'blue', 'in', 'green', 'loud']
 */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Inverse document frequency fitted on labelled texts. When texts carry
 * labels, a "document" is a label (all its texts together): a word that
 * appears in many intents says little about which one a request belongs to,
 * however often it appears inside one. Without labels each text is a document.
 */
export class InverseFrequency {
  private readonly frequency = new Map<number | string, number>();
  private documents = 0;

  fit<Key extends number | string>(corpus: LabelledText[], keysOf: (text: string) => Iterable<Key>): void {
    this.frequency.clear();
    const groups = new Map<string, Set<Key>>();
    let unlabelled = 0;
    for (const entry of corpus) {
      const group = entry.label ?? `\u0000${unlabelled++}`;
      const keys = groups.get(group) ?? new Set<Key>();
      groups.set(group, keys);
      for (const key of keysOf(entry.text)) keys.add(key);
    }
    this.documents = groups.size;
    for (const keys of groups.values()) {
      for (const key of keys) this.frequency.set(key, (this.frequency.get(key) ?? 0) + 1);
    }
  }

  get fitted(): boolean {
    return this.documents > 0;
  }

  /** `ln((1 + documents) / (1 + df)) + 1`: 1 for a key in every document, highest for unseen keys. */
  weight(key: number | string): number {
    if (this.documents === 0) return 1;
    return Math.log((1 + this.documents) / (1 + (this.frequency.get(key) ?? 0))) + 1;
  }
}

/** One part of a combined embedder and the weight its (unit) vector gets. */
export interface CombinedPart {
  embedder: Embedder;
  weight?: number;
}

/**
 * Concatenates several embedders' vectors, each scaled by its weight, and
 * normalises the result, so the cosine becomes a weighted mix of the parts'
 * cosines. `fit` reaches the parts that can be fitted.
 *
 * @example
 * const hybrid = createCombinedEmbedder({ parts: [{ embedder: createHashingEmbedder() }, { embedder: glove, weight: 0.8 }] });
 */
export function createCombinedEmbedder(settings: { parts: CombinedPart[]; id?: string }): FittableEmbedder {
  const parts = settings.parts.map((part) => ({ embedder: part.embedder, weight: part.weight ?? 1 }));
  const dimensions = parts.reduce((sum, part) => sum + part.embedder.dimensions, 0);
  return {
    id: settings.id ?? `combined(${parts.map((part) => `${part.embedder.id}*${part.weight}`).join('+')})`,
    dimensions,
    fit(corpus) {
      for (const part of parts) if (isFittable(part.embedder)) part.embedder.fit(corpus);
    },
    async embed(texts) {
      const outputs = await Promise.all(parts.map((part) => part.embedder.embed(texts)));
      return texts.map((_, row) => {
        const vector = new Float32Array(dimensions);
        let offset = 0;
        parts.forEach((part, column) => {
          const source = outputs[column]![row]!;
          for (let index = 0; index < source.length; index++)
            vector[offset + index] = source[index]! * part.weight;
          offset += part.embedder.dimensions;
        });
        return normalizeVector(vector);
      });
    },
  };
}
