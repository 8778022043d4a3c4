/**
 * How mnests grow, fade and go. Every number has a default; the seed's
 * recurrence rule (a proto-mnest used 3 times in a month) crosses a weight of
 * 0.30 with these defaults: 0.15 → 0.28 → 0.39.
 */
export interface MnestomeRules {
  /** The weight a mnest is born with. Default 0.15. */
  bootstrapWeight?: number;
  /** Each passage moves the weight this share of the way to 1. Default 0.15. */
  learningRate?: number;
  /** Days after which an unused mnest's weight has halved. Default 30. */
  halfLifeDays?: number;
  /** A mnest whose weight falls below this goes dormant (not offered to the pre-filter). Default 0.05. */
  demoteBelow?: number;
  /** A proto-mnest unused for this many days is purged. Default 30. */
  protoPurgeDays?: number;
  /** An executor unused for this many days is proposed for `below_threshold`. Default 60. */
  belowThresholdDays?: number;
}

/** The rules with every default filled in. */
export type ResolvedRules = Required<MnestomeRules>;

export const DEFAULT_RULES: ResolvedRules = {
  bootstrapWeight: 0.15,
  learningRate: 0.15,
  halfLifeDays: 30,
  demoteBelow: 0.05,
  protoPurgeDays: 30,
  belowThresholdDays: 60,
};

export const DAY_MS = 86_400_000;

/**
 * A weight brought from `from` to `to` by exponential decay with the rules'
 * half-life; no time (or time running backwards) leaves it as it is.
 *
 * @example
 * decayed(0.4, '2026-01-01T00:00:00Z', '2026-01-31T00:00:00Z', DEFAULT_RULES); // 0.2
 */
export function decayed(weight: number, from: string, to: string, rules: ResolvedRules): number {
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS;
  if (!(days > 0)) return weight;
  return weight * 0.5 ** (days / rules.halfLifeDays);
}

/**
 * The weight after one more passage: a share `learningRate` of the way to 1.
 *
 * @example
 * reinforced(0.15, DEFAULT_RULES); // 0.2775
 */
export function reinforced(weight: number, rules: ResolvedRules): number {
  return weight + rules.learningRate * (1 - weight);
}
