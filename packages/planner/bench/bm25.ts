/**
 * The lexical baseline for tool retrieval: Okapi BM25 (k1 = 1.2, b = 0.75,
 * Lucene's idf `ln(1 + (N − df + 0.5) / (df + 0.5))`) over each tool's text,
 * with an inverted index built once. Tokens come from the caller, so the
 * baseline and the pre-filter can see exactly the same words.
 */
export interface Bm25Ranker {
  /** The `k` best documents with a score above zero, best first; ties by `order`. */
  top(queryTokens: readonly string[], k: number): Array<{ document: number; score: number }>;
}

/**
 * Builds the index over tokenised documents. `order` breaks ties (the
 * pre-filter breaks them by name; pass each document's rank in that order).
 *
 * @example
 * const bm25 = createBm25Ranker(tools.map((tool) => tokens(tool.text)), tools.map((_, index) => index));
 * bm25.top(tokens('will it rain tomorrow'), 5); // [{ document: 3, score: 4.2 }, …]
 */
export function createBm25Ranker(
  documents: readonly (readonly string[])[],
  order: readonly number[],
  settings: { k1?: number; b?: number } = {},
): Bm25Ranker {
  const k1 = settings.k1 ?? 1.2;
  const b = settings.b ?? 0.75;
  const averageLength =
    documents.reduce((sum, tokens) => sum + tokens.length, 0) / Math.max(1, documents.length);
  // Per token: the documents holding it and the term weight each gets, computed once.
  const postings = new Map<string, { documents: number[]; weights: number[] }>();
  documents.forEach((tokens, document) => {
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    const lengthNorm = 1 - b + (b * tokens.length) / averageLength;
    for (const [token, count] of counts) {
      const posting = postings.get(token) ?? { documents: [], weights: [] };
      postings.set(token, posting);
      posting.documents.push(document);
      posting.weights.push((count * (k1 + 1)) / (count + k1 * lengthNorm));
    }
  });
  for (const posting of postings.values()) {
    const frequency = posting.documents.length;
    const idf = Math.log(1 + (documents.length - frequency + 0.5) / (frequency + 0.5));
    posting.weights = posting.weights.map((weight) => weight * idf);
  }
  const scores = new Float64Array(documents.length);
  const touched: number[] = [];

  return {
    top(queryTokens, k) {
      for (const token of new Set(queryTokens)) {
        const posting = postings.get(token);
        if (!posting) continue;
        posting.documents.forEach((document, index) => {
          if (scores[document] === 0) touched.push(document);
          scores[document]! += posting.weights[index]!;
        });
      }
      const hits = touched.map((document) => ({ document, score: scores[document]! }));
      for (const document of touched) scores[document] = 0;
      touched.length = 0;
      hits.sort((left, right) => right.score - left.score || order[left.document]! - order[right.document]!);
      return hits.slice(0, k);
    },
  };
}
