import type { DeclaredProfile, VerifiedExecutor } from '@metnos/executor-sdk';
import type { Mnest } from '@metnos/mnestome';
import { type CardDraft, type IntrospectionInput, ownActive } from './types.ts';

/** When two executors' traces overlap enough to propose a merge. */
export interface MergeRules {
  /** Jaccard overlap of their neighbours in the mnestome. Default 0.5. */
  minOverlap?: number;
  /** Neighbours they must share. Default 2. */
  minShared?: number;
}

/**
 * An executor's trace in the mnestome: the executors that feed it (`in:`)
 * and those it feeds (`out:`), over active real mnests.
 */
function traceOf(name: string, mnests: readonly Mnest[]): Set<string> {
  const trace = new Set<string>();
  for (const mnest of mnests) {
    if (!mnest.dstExists || mnest.state !== 'active') continue;
    if (mnest.dst === name) trace.add(`in:${mnest.src}`);
    if (mnest.src === name) trace.add(`out:${mnest.dst}`);
  }
  return trace;
}

/**
 * Profiles a merged executor could hold without widening either side's
 * kind of access: no exec, the same network mode, and both writing or
 * neither.
 */
export function compatibleProfiles(a: DeclaredProfile, b: DeclaredProfile): boolean {
  return (
    a.exec.mode === 'none' &&
    b.exec.mode === 'none' &&
    a.network.mode === b.network.mode &&
    a.fs.write.length > 0 === b.fs.write.length > 0 &&
    a.min_tier === b.min_tier
  );
}

/**
 * Merge proposals: pairs of the person's active executors (seeds are the
 * release's to change) whose traces in the mnestome overlap — they stand
 * between the same executors — and whose profiles are compatible. The card
 * names the shared neighbours and the overlap measured.
 *
 * @example
 * mergeCandidates({ executors, listing, mnests, now }); // [{ kind: 'merge', key: 'merge:csv_sum+csv_total', … }]
 */
export function mergeCandidates(input: IntrospectionInput, rules: MergeRules = {}): CardDraft[] {
  const minOverlap = rules.minOverlap ?? 0.5;
  const minShared = rules.minShared ?? 2;
  const own = ownActive(input).sort((a, b) => a.name.localeCompare(b.name));
  const traces = new Map(own.map((executor) => [executor.name, traceOf(executor.name, input.mnests)]));
  const cards: CardDraft[] = [];
  for (const [index, a] of own.entries()) {
    for (const b of own.slice(index + 1)) {
      const ta = traces.get(a.name)!;
      const tb = traces.get(b.name)!;
      const shared = [...ta].filter((neighbour) => tb.has(neighbour)).sort();
      const union = new Set([...ta, ...tb]).size;
      const overlap = union === 0 ? 0 : shared.length / union;
      if (shared.length < minShared || overlap < minOverlap) continue;
      if (!compatibleProfiles(a.manifest.sandbox, b.manifest.sandbox)) continue;
      cards.push(mergeCard(a, b, shared, overlap));
    }
  }
  return cards;
}

function mergeCard(a: VerifiedExecutor, b: VerifiedExecutor, shared: string[], overlap: number): CardDraft {
  const rounded = Math.round(overlap * 100) / 100;
  return {
    kind: 'merge',
    key: `merge:${a.name}+${b.name}`,
    title: `merge ${a.name} and ${b.name} into one executor`,
    motivation: { kind: 'merge', executors: [a.name, b.name], shared, overlap: rounded },
    evidence: {
      measured:
        'neighbours shared in the mnestome (executors feeding them or fed by them) and their Jaccard overlap',
      shared,
      overlap: rounded,
      profiles: 'compatible: no exec, the same network mode, the same write access',
    },
    note: `they stand between the same executors (${shared.join(', ')}): approve to generate one executor covering both; the two go fused once it is installed, then archived as their mnests fade`,
  };
}
