import { words } from '../src/embedder.ts';

/**
 * The lexical baseline: Okapi BM25 over the stored requests' words, the
 * nearest stored request per label. Scores are divided by the query's BM25
 * against a document made of the query itself, so they sit roughly in [0, 1]
 * and one calibration grid fits every method.
 */
export function createBm25(
  documents: Array<{ text: string; label: string }>,
  settings: { k1?: number; b?: number } = {},
) {
  const k1 = settings.k1 ?? 1.2;
  const b = settings.b ?? 0.75;
  const tokenized = documents.map((document) => words(document.text));
  const averageLength =
    tokenized.reduce((sum, tokens) => sum + tokens.length, 0) / Math.max(1, tokenized.length);
  const postings = new Map<string, Array<{ document: number; count: number }>>();
  tokenized.forEach((tokens, document) => {
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [token, count] of counts) {
      const list = postings.get(token) ?? [];
      if (list.length === 0) postings.set(token, list);
      list.push({ document, count });
    }
  });
  const idf = (token: string) => {
    const frequency = postings.get(token)?.length ?? 0;
    return Math.log(1 + (documents.length - frequency + 0.5) / (frequency + 0.5));
  };
  return {
    /** Per-label best normalised score, best first. */
    labelScores(text: string, exclude?: number): Array<{ label: string; score: number; document: number }> {
      const tokens = [...new Set(words(text))];
      const scores = new Float64Array(documents.length);
      let ideal = 0;
      for (const token of tokens) {
        const weight = idf(token);
        ideal += (weight * (k1 + 1)) / (1 + k1 * (1 - b + (b * tokens.length) / averageLength));
        for (const { document, count } of postings.get(token) ?? []) {
          const length = tokenized[document]!.length;
          scores[document]! +=
            (weight * count * (k1 + 1)) / (count + k1 * (1 - b + (b * length) / averageLength));
        }
      }
      const best = new Map<string, { label: string; score: number; document: number }>();
      scores.forEach((score, document) => {
        if (document === exclude) return;
        const label = documents[document]!.label;
        const normalised = ideal > 0 ? score / ideal : 0;
        const current = best.get(label);
        if (!current || normalised > current.score) best.set(label, { label, score: normalised, document });
      });
      return [...best.values()].sort((left, right) => right.score - left.score);
    },
  };
}
