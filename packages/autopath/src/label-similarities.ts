import type { LabelSimilarity, ScanOptions } from './vector-index.ts';

/** One stored vector with the label (plan) it stands for. */
export interface LabelledVector {
  id: string;
  label: string;
  vector: Float32Array;
}

/**
 * Every label's nearest vector and centroid as seen from `query`, by an exact
 * scan — the same figures {@link VectorIndex.labelSimilarities} gives, for
 * stores that keep their vectors in their own rows (the L0 and L1 stores) and
 * want the recognizer's decision rule over them. Vectors of another length
 * and `excludeIds` are left out. Best nearest first.
 *
 * @example
 * const similarities = labelSimilaritiesOf(entries.map((entry) => ({ id: entry.id, label: entry.planHash, vector: entry.vector })), query);
 */
export function labelSimilaritiesOf(
  items: readonly LabelledVector[],
  query: Float32Array,
  options: ScanOptions = {},
): LabelSimilarity[] {
  const byLabel = new Map<string, { nearest: number; nearestId: string; sum: Float64Array; count: number }>();
  for (const item of items) {
    if (item.vector.length !== query.length || options.excludeIds?.has(item.id)) continue;
    let score = 0;
    for (let dimension = 0; dimension < query.length; dimension++)
      score += query[dimension]! * item.vector[dimension]!;
    let label = byLabel.get(item.label);
    if (!label) {
      label = { nearest: score, nearestId: item.id, sum: new Float64Array(query.length), count: 0 };
      byLabel.set(item.label, label);
    } else if (score > label.nearest) {
      label.nearest = score;
      label.nearestId = item.id;
    }
    for (let dimension = 0; dimension < query.length; dimension++)
      label.sum[dimension]! += item.vector[dimension]!;
    label.count++;
  }
  const result: LabelSimilarity[] = [];
  for (const [label, { nearest, nearestId, sum, count }] of byLabel) {
    let projection = 0;
    let squaredNorm = 0;
    for (let dimension = 0; dimension < query.length; dimension++) {
      projection += query[dimension]! * sum[dimension]!;
      squaredNorm += sum[dimension]! * sum[dimension]!;
    }
    const centroid = squaredNorm > 1e-12 ? projection / Math.sqrt(squaredNorm) : 0;
    result.push({ label, nearest, nearestId, centroid, count });
  }
  return result.sort((first, second) => second.nearest - first.nearest);
}
