import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { type FindChainOptions, findChain } from './find-chain.ts';
import type { Motivation } from './generate/types.ts';
import type { CardDraft } from './introspect/types.ts';

type ProtoMotivation = Extract<Motivation, { kind: 'proto' }>;

/**
 * The cards for recurring proto-mnests, compose-only (seed 000's
 * `synt_suggest`): for each, {@link findChain} over the active executors. A
 * chain that closes it makes a `compose` card (no new executor: the chain is
 * the answer); a closed road makes a `generate` card, which the person may
 * approve to start the seven stages. No model is asked here.
 *
 * @example
 * protoCards(recurringProtos(mnestome, now), catalog.executors(), { isActive });
 * // [{ kind: 'generate', key: 'generate:csv_sum', title: 'generate csv_sum: …', … }]
 */
export function protoCards(
  protos: readonly ProtoMotivation[],
  executors: readonly VerifiedExecutor[],
  options: FindChainOptions = {},
): CardDraft[] {
  const present = new Set(executors.map((executor) => executor.name));
  const cards: CardDraft[] = [];
  for (const proto of protos) {
    if (present.has(proto.dst)) continue;
    const evidence = {
      measured: 'uses and weight of the proto-mnest in the window',
      uses: proto.uses,
      weight: proto.weight,
      from: proto.src,
      lastUsedAt: proto.lastUsedAt,
    };
    const chain = findChain(proto.src, proto.desired, executors, options);
    if (chain.found) {
      cards.push({
        kind: 'compose',
        key: `compose:${proto.src}>${proto.dst}`,
        title: `${proto.dst} can be done with ${[proto.src, ...chain.chain].join(' → ')}`,
        motivation: { ...proto, chain: chain.chain },
        evidence: { ...evidence, chain: chain.chain },
        note: `wished for ${proto.uses} times; existing executors do it (no new executor): approve to accept the chain, or reject`,
      });
      continue;
    }
    cards.push({
      kind: 'generate',
      key: `generate:${proto.dst}`,
      title: `generate ${proto.dst}: wished for ${proto.uses} times after ${proto.src}, no chain of existing executors does it`,
      motivation: proto,
      evidence: { ...evidence, compose: chain.reason },
      note: 'approve to start generating it (the wise tier drafts a spec you approve or edit; nothing is signed before your final approval)',
    });
  }
  return cards;
}
