import type { CardDraft, IntrospectionInput } from './types.ts';

/**
 * Archive proposals for fused executors whose mnests have faded: a version
 * the synt marked `fused` (a merge or generalisation replaced it) once no
 * active mnest leads into it or out of it any more. The person confirms; the
 * approval moves it to the executors folder's `.archive/`.
 *
 * @example
 * fadedFusedCandidates({ executors, listing, mnests, now }); // [{ kind: 'archive', key: 'archive:csv_total@1.0.0', … }]
 */
export function fadedFusedCandidates(input: IntrospectionInput): CardDraft[] {
  const cards: CardDraft[] = [];
  for (const row of input.listing) {
    if (row.state !== 'fused') continue;
    const live = input.mnests.filter(
      (mnest) =>
        mnest.dstExists && mnest.state === 'active' && (mnest.src === row.name || mnest.dst === row.name),
    );
    if (live.length > 0) continue;
    cards.push({
      kind: 'archive',
      key: `archive:${row.name}@${row.version}`,
      title: `archive ${row.name}@${row.version}: fused, and its mnests have faded`,
      motivation: { kind: 'archive', executor: row.name, version: row.version },
      evidence: {
        measured: 'active mnests into or out of it in the mnestome',
        active: 0,
        fusedReason: row.reason ?? null,
      },
      note: `${row.reason ?? 'fused'}; no active mnest cites it any more: approve to archive it (it can be rehabilitated)`,
    });
  }
  return cards;
}
