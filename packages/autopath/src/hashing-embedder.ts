import {
  type FittableEmbedder,
  InverseFrequency,
  type LabelledText,
  normalizeVector,
  words,
} from './embedder.ts';

/** Settings of {@link createHashingEmbedder}. */
export interface HashingEmbedderSettings {
  /** Length of the vectors. Default 2048; more means fewer hash collisions and more memory. */
  dimensions?: number;
  /** Shortest and longest character n-gram taken inside each `<word>`. Default `[3, 5]`; `null` for none. */
  charNgrams?: [number, number] | null;
  /** Word n-grams: 1 for unigrams, 2 for unigrams and bigrams. Default 2. */
  wordNgrams?: 1 | 2;
  /** Weight of each family of features before IDF. Defaults: words 1, bigrams 1, chars 1. */
  weights?: { words?: number; bigrams?: number; chars?: number };
  /** Weigh features by inverse frequency once `fit` has seen stored texts. Default true. */
  idf?: boolean;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const WORD_SEED = FNV_OFFSET;
const BIGRAM_SEED = 0x2f6b1d53;
const CHAR_SEED = 0x5bd1e995;

function hashRange(text: string, start: number, end: number, seed: number): number {
  let hash = seed;
  for (let index = start; index < end; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** Murmur3's finaliser: spreads a feature hash over all 32 bits before it picks a bucket and a sign. */
function mix(hash: number): number {
  let value = hash;
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}

/**
 * The default embedder: no model, no download, the same vector on every
 * machine. Each request becomes a bag of hashed features — character n-grams
 * inside each word (so "booking" meets "booked"), words and word bigrams —
 * with sublinear term frequency and, after `fit`, inverse frequency computed
 * over the stored requests' labels. Features go to a bucket and a sign chosen
 * by a hash (the signed "hashing trick"), so unseen words need no vocabulary.
 *
 * @example
 * const embedder = createHashingEmbedder({ dimensions: 2048 });
 * embedder.fit(stored.map((entry) => ({ text: entry.text, label: entry.label })));
 * const [vector] = await embedder.embed(['book a table for two']);
 */
export function createHashingEmbedder(settings: HashingEmbedderSettings = {}): FittableEmbedder {
  const dimensions = settings.dimensions ?? 2048;
  const charNgrams = settings.charNgrams === undefined ? ([3, 5] as const) : settings.charNgrams;
  const wordNgrams = settings.wordNgrams ?? 2;
  const weights = { words: 1, bigrams: 1, chars: 1, ...settings.weights };
  const useIdf = settings.idf ?? true;
  const powerOfTwo = (dimensions & (dimensions - 1)) === 0;
  const inverse = new InverseFrequency();

  /** Feature hash → summed weight of its occurrences (before sublinear scaling). */
  function features(text: string): Map<number, { count: number; weight: number }> {
    const found = new Map<number, { count: number; weight: number }>();
    const add = (hash: number, weight: number) => {
      const entry = found.get(hash);
      if (entry) entry.count++;
      else found.set(hash, { count: 1, weight });
    };
    const tokens = words(text);
    const wordHashes = tokens.map((token) => hashRange(token, 0, token.length, WORD_SEED));
    if (weights.words > 0) for (const hash of wordHashes) add(hash, weights.words);
    if (wordNgrams === 2 && weights.bigrams > 0) {
      for (let index = 0; index + 1 < tokens.length; index++) {
        const second = tokens[index + 1]!;
        add(
          hashRange(second, 0, second.length, Math.imul(wordHashes[index]! ^ BIGRAM_SEED, FNV_PRIME) >>> 0),
          weights.bigrams,
        );
      }
    }
    if (charNgrams && weights.chars > 0) {
      const [shortest, longest] = charNgrams;
      for (const token of tokens) {
        const padded = `<${token}>`;
        for (let size = shortest; size <= longest; size++) {
          for (let start = 0; start + size <= padded.length; start++)
            add(hashRange(padded, start, start + size, CHAR_SEED ^ size), weights.chars);
        }
      }
    }
    return found;
  }

  function embedOne(text: string): Float32Array {
    const vector = new Float32Array(dimensions);
    for (const [hash, { count, weight }] of features(text)) {
      const mixed = mix(hash);
      const bucket = powerOfTwo ? mixed & (dimensions - 1) : mixed % dimensions;
      const sign = mixed >>> 31 ? -1 : 1;
      const idf = useIdf ? inverse.weight(hash) : 1;
      vector[bucket]! += sign * (1 + Math.log(count)) * weight * idf;
    }
    return normalizeVector(vector);
  }

  const charId = charNgrams ? `c${charNgrams[0]}-${charNgrams[1]}` : 'c0';
  return {
    id: `hashing-v1:d${dimensions}:${charId}:w${wordNgrams}:${weights.words}/${weights.bigrams}/${weights.chars}${useIdf ? ':idf' : ''}`,
    dimensions,
    fit(corpus: LabelledText[]) {
      inverse.fit(corpus, (text) => features(text).keys());
    },
    async embed(texts: string[]) {
      return texts.map(embedOne);
    },
  };
}
