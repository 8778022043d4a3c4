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

/** Settings of {@link prefilter}. */
export interface PrefilterSettings {
  /** Fewest candidates passed on when the top one is clearly ahead. Default 5. */
  kMin?: number;
  /** Most candidates passed on when nothing stands out. Default 40. */
  kMax?: number;
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

/** An entry's words, tokenised once per entry object (a catalog's entries live as long as it). */
const entryWords = new WeakMap<PrefilterEntry, { affinity: Set<string>; summary: Set<string> }>();

function wordsOf(entry: PrefilterEntry): { affinity: Set<string>; summary: Set<string> } {
  let words = entryWords.get(entry);
  if (!words) {
    words = {
      affinity: new Set([...entry.affinity.flatMap(tokenize), ...tokenize(entry.name)]),
      summary: new Set(tokenize(entry.summary).filter((token) => !STOP_WORDS.has(token))),
    };
    entryWords.set(entry, words);
  }
  return words;
}

/** One pre-filter entry per loaded executor, kept with it so its words are tokenised once. */
const executorEntries = new WeakMap<VerifiedExecutor, PrefilterEntry & { executor: VerifiedExecutor }>();

/**
 * Ranks executors against a request with bag-of-words (stop words dropped): each request token
 * that appears in an executor's affinity keywords (or name parts) counts 2,
 * one that appears in its summary counts 1. K adapts to the confidence of the
 * top candidate: a clear winner sends `kMin` candidates (without zero scores),
 * a flat ranking sends up to `kMax`.
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
  const ranked = entries.map((entry) => {
    const { affinity, summary } = wordsOf(entry);
    let score = 0;
    for (const token of tokens) {
      if (affinity.has(token)) score += 2;
      else if (summary.has(token)) score += 1;
    }
    return { entry, score };
  });
  ranked.sort((a, b) => b.score - a.score || byName.compare(a.entry.name, b.entry.name));
  const top = ranked[0]?.score ?? 0;
  const second = ranked[1]?.score ?? 0;
  const confidence = top === 0 ? 0 : (top - second) / top;
  const k = Math.max(kMin, Math.min(kMax, Math.round(kMax - confidence * (kMax - kMin))));
  let candidates = ranked.slice(0, k);
  if (top > 0 && confidence >= 0.5) candidates = candidates.filter((candidate) => candidate.score > 0);
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
