import type { FastpathEntry } from '@metnos/autopath/stores';
import { type Layer, pass } from '../layer.ts';
import { incompatibleIds, type RememberedPlan, replayPlan } from '../memory.ts';
import { planHash } from '../plan.ts';

/** An L0 entry as a replay sees it; an entry learned before intents were kept stands for its fingerprint. */
export function rememberedShortcut(entry: FastpathEntry): RememberedPlan {
  return {
    id: entry.id,
    intentHash: entry.intentHash ?? entry.fingerprint,
    planHash: entry.planHash ?? planHash(entry.template),
    template: entry.template,
    slots: entry.slots,
    tools: entry.tools,
    qualifiers: entry.qualifiers,
    pinned: entry.pinned,
  };
}

/**
 * L0 Fastpath: the shortcut saved for this request's exact fingerprint,
 * else the calibrated recognizer over the shortcuts' vectors (same embedder,
 * same qualifiers and slots only). A shortcut that fails on an exact match
 * is dropped.
 */
export const fastpathLayer: Layer = {
  name: 'fastpath',
  async run(turn) {
    if (turn.avoid.memory) return pass('the turn asked to skip memory');
    if (turn.executors.length === 0) return pass('the catalog is empty: nothing remembered can run');
    const { fastpath } = turn.parts.settings;
    const exact = fastpath.byFingerprint(turn.key.fingerprint);
    if (exact) {
      return replayPlan(turn, 'fastpath', rememberedShortcut(exact), 'exact', {
        onSuccess: () => fastpath.markUsed(exact.id),
        onFailure: () => fastpath.remove(exact.id),
      });
    }
    const vector = await turn.vector();
    if (!vector) return pass('no exact shortcut, and the request could not be embedded');
    const recognition = turn.parts.recognition.recognize(
      'fastpath',
      vector,
      incompatibleIds(turn, fastpath.list().map(rememberedShortcut)),
    );
    if (recognition.kind === 'miss')
      return pass(
        `no exact shortcut; by meaning: ${recognition.reason} (score ${recognition.score.toFixed(3)})`,
      );
    const entry = fastpath.get(recognition.nearestId);
    if (!entry) return pass('the recognized shortcut is gone');
    return replayPlan(turn, 'fastpath', rememberedShortcut(entry), 'meaning', {
      onSuccess: () => fastpath.markUsed(entry.id),
    });
  },
};
