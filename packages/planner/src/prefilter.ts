import type { VerifiedExecutor } from '@metnos/executor-sdk';

/** What the pre-filter needs to know about an executor. */
export interface PrefilterEntry {
  name: string;
  summary: string;
  affinity: readonly string[];
}

/** One ranked candidate. */
export interface RankedCandidate<Entry extends PrefilterEntry = PrefilterEntry> {
  entry: Entry;
  score: number;
}

/**
 * The history boost: what usually follows the previous step (the
 * mnestome's passages out of it) ranks higher. An executor that follows with
 * weight w gains `boost × w × (the top lexical score, at least 1)`, so the
 * boost keeps its size whatever the catalog's scores are.
 */
export interface PrefilterHistory {
  /** The executor the previous step ran. */
  previous: string;
  /** What usually follows an executor, weights in [0, 1] (`passagesFrom` of `@metnos/mnestome`). */
  passagesFrom(src: string): ReadonlyArray<{ dst: string; weight: number }>;
  /** Share of the top score a weight of 1 adds. Default {@link HISTORY_BOOST}. */
  boost?: number;
}

/** The history boost's default share of the top score (chosen on NESTFUL: see bench/prefilter.bench.ts). */
export const HISTORY_BOOST = 1;

/** Settings of {@link prefilter}. */
export interface PrefilterSettings {
  /** Fewest candidates passed on when the top one is clearly ahead. Default 5. */
  kMin?: number;
  /** Most candidates passed on when nothing stands out. Default 40. */
  kMax?: number;
  /** Rank what usually follows the previous step higher. Off when absent. */
  history?: PrefilterHistory;
}

/** The result: the chosen candidates, K, and how sure the ranking was. */
export interface PrefilterResult<Entry extends PrefilterEntry = PrefilterEntry> {
  candidates: RankedCandidate<Entry>[];
  k: number;
  /** (top − second) / top, 0 when nothing matched. */
  confidence: number;
  tokens: string[];
}

/**
 * Words too common to say anything about a request (English and Italian).
 * Without this list "the" in a summary outranks every real match.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but of to in on at by for with from into as is are was were be been it its this that these those ' +
    'me my i you your we our they them he she his her what which who whom how when where why do does did can could ' +
    'would should will shall may might must please tell show give get let just all any some there here then than so ' +
    'il lo la i gli le un uno una di da in con su per tra fra e o ma che chi cosa come dove quando perche del della dei ' +
    'delle degli al alla ai alle nel nella nei sul sulla mi ti ci vi si ne non piu per favore mio mia tuo tua'
  ).split(' '),
);

/**
 * Lowercase, accent-folded alphanumeric tokens: "Leggi il FILE già" →
 * ["leggi", "il", "file", "gia"].
 */
export function tokenize(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0);
}

/** The same order as `localeCompare`, without building a collator at every comparison. */
const byName = new Intl.Collator();

/** BM25's term-frequency saturation (the usual value). */
const K1 = 1.2;
/** BM25's summary-length normalisation (the usual value); affinity keywords are a set and are not normalised. */
const B = 0.75;
/** An affinity keyword or name word counts as this many summary occurrences (BM25F field weight). */
const AFFINITY_WEIGHT = 3;

/** Suffixes {@link stem} takes off, the first that fits (after plurals). */
const SUFFIXES = ['ing', 'ed', 'er', 'ly', 'ation', 'ment'] as const;

/**
 * Light English suffix folding, so that a request's "recipes", "booking" or
 * "translation" meets a summary's "recipe", "book" or "translate": plurals
 * (-s, -es, -ies), then one of -ing/-ed/-er/-ly/-ation/-ment when at least
 * four letters stay (a doubled final consonant undoubled: "shopping" →
 * "shop"), then a final -e, and a final -y read as -i ("movies" and "movie"
 * both → "movi"). Short words and words with digits are left as they are.
 * Requests and entries are folded alike, so only consistency matters, not
 * real roots.
 */
function stem(word: string): string {
  if (word.length <= 3 || /[0-9]/.test(word)) return word;
  let folded = word;
  if (folded.endsWith('ies') && folded.length > 4) folded = `${folded.slice(0, -3)}y`;
  else if (folded.endsWith('sses')) folded = folded.slice(0, -2);
  else if (folded.endsWith('s') && !/(?:ss|us|is)$/.test(folded)) folded = folded.slice(0, -1);
  for (const suffix of SUFFIXES) {
    if (folded.endsWith(suffix) && folded.length - suffix.length >= 4) {
      folded = folded.slice(0, -suffix.length);
      if (/([^lsz])\1$/.test(folded)) folded = folded.slice(0, -1);
      break;
    }
  }
  if (folded.endsWith('e') && folded.length > 4) folded = folded.slice(0, -1);
  if (folded.endsWith('y') && folded.length > 3) folded = `${folded.slice(0, -1)}i`;
  return folded;
}

/** A request's or a text's content words (stop words dropped), folded by {@link stem}. */
const termsOf = (tokens: readonly string[]) => tokens.filter((token) => !STOP_WORDS.has(token)).map(stem);

/** "fsRead", "PDF&URLTool", "web_fetch" → their words, and the whole name's own tokens. */
function nameTokens(name: string): string[] {
  const split = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return [...tokenize(split), ...tokenize(name)];
}

/** An entry's folded words: its affinity keywords and name words (a set), its summary's with their counts. */
interface EntryTerms {
  affinity: Set<string>;
  summary: Map<string, number>;
  summaryLength: number;
}

/** An entry's words, tokenised once per entry object (a catalog's entries live as long as it). */
const entryTerms = new WeakMap<PrefilterEntry, EntryTerms>();

function termsOfEntry(entry: PrefilterEntry): EntryTerms {
  let terms = entryTerms.get(entry);
  if (!terms) {
    const summaryWords = termsOf(tokenize(entry.summary));
    const summary = new Map<string, number>();
    for (const word of summaryWords) summary.set(word, (summary.get(word) ?? 0) + 1);
    terms = {
      affinity: new Set(termsOf([...entry.affinity.flatMap(tokenize), ...nameTokens(entry.name)])),
      summary,
      summaryLength: summaryWords.length,
    };
    entryTerms.set(entry, terms);
  }
  return terms;
}

/**
 * What a catalog's ranking needs, computed once per catalog: for each word,
 * the entries holding it and its BM25F weight in each (idf over the catalog
 * times the saturated, length-normalised field-weighted count), and the
 * entries' order by name for ties.
 */
interface CatalogIndex {
  entries: readonly PrefilterEntry[];
  postings: Map<string, { positions: Int32Array; weights: Float64Array }>;
  /** Entry positions in name order. */
  byName: Int32Array;
  /** Each entry's position by name (the first, if a name repeats). */
  positionOf: Map<string, number>;
  /** Each entry position's place in name order. */
  nameRank: Int32Array;
  /** Scratch scores, zero between calls. */
  scores: Float64Array;
}

function buildIndex(entries: readonly PrefilterEntry[]): CatalogIndex {
  const count = entries.length;
  const terms = entries.map(termsOfEntry);
  const averageLength = terms.reduce((sum, entry) => sum + entry.summaryLength, 0) / Math.max(1, count);
  const found = new Map<string, { positions: number[]; counts: number[] }>();
  terms.forEach((entry, position) => {
    const lengthNorm = averageLength > 0 ? 1 - B + (B * entry.summaryLength) / averageLength : 1;
    const weighted = new Map<string, number>();
    for (const [word, times] of entry.summary) weighted.set(word, times / lengthNorm);
    for (const word of entry.affinity) weighted.set(word, (weighted.get(word) ?? 0) + AFFINITY_WEIGHT);
    for (const [word, times] of weighted) {
      const posting = found.get(word) ?? { positions: [], counts: [] };
      found.set(word, posting);
      posting.positions.push(position);
      posting.counts.push(times);
    }
  });
  const postings: CatalogIndex['postings'] = new Map();
  for (const [word, { positions, counts }] of found) {
    const idf = Math.log(1 + (count - positions.length + 0.5) / (positions.length + 0.5));
    postings.set(word, {
      positions: Int32Array.from(positions),
      weights: Float64Array.from(counts, (times) => (idf * times * (K1 + 1)) / (times + K1)),
    });
  }
  const byNameOrder = Int32Array.from(entries.keys()).sort((a, b) =>
    byName.compare(entries[a]!.name, entries[b]!.name),
  );
  const nameRank = new Int32Array(count);
  byNameOrder.forEach((position, rank) => {
    nameRank[position] = rank;
  });
  const positionOf = new Map<string, number>();
  entries.forEach((entry, position) => {
    if (!positionOf.has(entry.name)) positionOf.set(entry.name, position);
  });
  return {
    entries: [...entries],
    postings,
    byName: byNameOrder,
    nameRank,
    positionOf,
    scores: new Float64Array(count),
  };
}

/** The last few catalogs' indexes, most recent first; a catalog is the same entries in the same order. */
const indexes: CatalogIndex[] = [];
const KEPT_INDEXES = 4;

function indexOf(entries: readonly PrefilterEntry[]): CatalogIndex {
  const found = indexes.findIndex(
    (index) =>
      index.entries.length === entries.length &&
      index.entries.every((entry, position) => entry === entries[position]),
  );
  const index = found >= 0 ? indexes.splice(found, 1)[0]! : buildIndex(entries);
  indexes.unshift(index);
  indexes.length = Math.min(indexes.length, KEPT_INDEXES);
  return index;
}

/** One pre-filter entry per loaded executor, kept with it so its words are tokenised once. */
const executorEntries = new WeakMap<VerifiedExecutor, PrefilterEntry & { executor: VerifiedExecutor }>();

/** Adds the history boost to the executors that usually follow the previous step (see {@link PrefilterHistory}). */
function boostFollowers(index: CatalogIndex, history: PrefilterHistory, touched: number[]): void {
  let passages: ReadonlyArray<{ dst: string; weight: number }>;
  try {
    passages = history.passagesFrom(history.previous);
  } catch {
    return;
  }
  const { scores } = index;
  const top = touched.reduce((highest, position) => Math.max(highest, scores[position]!), 1);
  const boost = history.boost ?? HISTORY_BOOST;
  for (const { dst, weight } of passages) {
    const position = index.positionOf.get(dst);
    if (position === undefined || !(weight > 0)) continue;
    if (scores[position] === 0) touched.push(position);
    scores[position]! += boost * Math.min(1, weight) * top;
  }
}

/**
 * Ranks executors against a request with BM25F over two fields: affinity
 * keywords with the name's words (a name like `fsRead` or `web_fetch` split
 * into its words), and the summary. Request and entry words are lowercased,
 * accent-folded, stop words dropped and folded by a light English stemmer
 * ("recipes" meets "recipe"). A word's weight is its idf over the catalog
 * (rare words count more than words many entries share), saturated (k1 1.2)
 * and, in the summary, normalised by length (b 0.75); an affinity match
 * counts as three summary occurrences. The catalog's statistics are computed
 * once and reused while the same entries are passed. Ties go by name. K
 * adapts to the confidence of the top candidate: a clear winner sends `kMin`
 * candidates (without zero scores), a flat ranking sends up to `kMax`.
 * With `history`, what usually follows the previous step ranks higher
 * ({@link PrefilterHistory}).
 *
 * @example
 * const { candidates } = prefilter('fetch https://example.com', catalogEntries);
 * candidates[0].entry.name; // 'web_fetch'
 */
export function prefilter<Entry extends PrefilterEntry>(
  request: string,
  entries: readonly Entry[],
  settings: PrefilterSettings = {},
): PrefilterResult<Entry> {
  const kMin = settings.kMin ?? 5;
  const kMax = settings.kMax ?? 40;
  const tokens = [...new Set(tokenize(request))].filter((token) => !STOP_WORDS.has(token));
  const index = indexOf(entries);
  const { scores, nameRank } = index;
  const touched: number[] = [];
  for (const word of new Set(tokens.map(stem))) {
    const posting = index.postings.get(word);
    if (!posting) continue;
    const { positions, weights } = posting;
    for (let at = 0; at < positions.length; at++) {
      const position = positions[at]!;
      if (scores[position] === 0) touched.push(position);
      scores[position]! += weights[at]!;
    }
  }
  if (settings.history) boostFollowers(index, settings.history, touched);
  touched.sort((a, b) => scores[b]! - scores[a]! || nameRank[a]! - nameRank[b]!);
  const top = touched.length > 0 ? scores[touched[0]!]! : 0;
  const second = touched.length > 1 ? scores[touched[1]!]! : 0;
  const confidence = top === 0 ? 0 : (top - second) / top;
  const k = Math.max(kMin, Math.min(kMax, Math.round(kMax - confidence * (kMax - kMin))));
  const candidates: RankedCandidate<Entry>[] = touched
    .slice(0, k)
    .map((position) => ({ entry: entries[position]!, score: scores[position]! }));
  // Fewer matches than K: the rest in name order with a zero score, unless the winner is clear.
  if (candidates.length < k && !(top > 0 && confidence >= 0.5)) {
    for (let rank = 0; rank < index.byName.length && candidates.length < k; rank++) {
      const position = index.byName[rank]!;
      if (scores[position] === 0) candidates.push({ entry: entries[position]!, score: 0 });
    }
  }
  for (const position of touched) scores[position] = 0;
  return { candidates, k, confidence, tokens };
}

/**
 * Ranks loaded executors with {@link prefilter} (affinity and summary from each
 * manifest) and returns the chosen executors with the ranking's confidence.
 *
 * @example
 * const { executors } = rankExecutors('fetch https://example.com', catalog.executors());
 */
export function rankExecutors(
  request: string,
  executors: readonly VerifiedExecutor[],
  settings: PrefilterSettings = {},
): { executors: VerifiedExecutor[]; confidence: number } {
  const ranked = prefilter(
    request,
    executors.map((executor) => {
      let entry = executorEntries.get(executor);
      if (!entry) {
        entry = {
          name: executor.name,
          summary: executor.manifest.executor.summary,
          affinity: executor.manifest.executor.affinity,
          executor,
        };
        executorEntries.set(executor, entry);
      }
      return entry;
    }),
    settings,
  );
  return {
    executors: ranked.candidates.map((candidate) => candidate.entry.executor),
    confidence: ranked.confidence,
  };
}
