import { type Layer, pass } from '../layer.ts';
import { incompatibleIds, replayPlan } from '../memory.ts';

/**
 * L1 Autopath: the calibrated recognizer over the champions of the semantic
 * clusters (one per cluster and qualifier group), then — for a complete
 * intent (verb + object) — the exact intent's champion. Only the second
 * needs the intent, and so a model call.
 */
export const autopathLayer: Layer = {
  name: 'autopath',
  async run(turn) {
    if (turn.avoid.memory) return pass('the turn asked to skip memory');
    if (turn.executors.length === 0) return pass('the catalog is empty: nothing remembered can run');
    const { autopath } = turn.parts.settings;
    const reasons: string[] = [];
    const vector = await turn.vector();
    if (vector) {
      const recognition = turn.parts.recognition.recognize(
        'autopath',
        vector,
        incompatibleIds(turn, autopath.champions(turn.parts.embedderId)),
      );
      const champion = recognition.kind === 'serve' ? autopath.get(recognition.label) : undefined;
      if (champion) {
        const served = await replayPlan(turn, 'autopath', champion, 'meaning');
        if ('answer' in served) return served;
        reasons.push(served.pass);
      } else if (recognition.kind === 'miss') {
        reasons.push(`no cluster champion: ${recognition.reason} (score ${recognition.score.toFixed(3)})`);
      }
    }
    const intent = await turn.intent();
    if (!intent.complete) return pass([...reasons, 'the intent is incomplete'].join('; '));
    const champion = autopath.championForIntent(intent.hash);
    if (!champion) return pass([...reasons, 'no champion for the intent'].join('; '));
    const served = await replayPlan(turn, 'autopath', champion, 'meaning');
    return 'answer' in served ? served : pass([...reasons, served.pass].join('; '));
  },
};
