import { type Layer, pass } from '../layer.ts';
import { observeTurn } from '../memory.ts';
import { preFastpath } from '../pre-fastpath.ts';
import { finishTurn } from '../turn-context.ts';

/**
 * The pre fast-path: time, date and "who am I", in English and Italian,
 * answered by rule with no model, no executor and no memory. Reported as
 * the `fastpath` layer.
 */
export const preFastpathLayer: Layer = {
  name: 'pre-fastpath',
  async run(turn) {
    const trivial = preFastpath(turn.request, {
      now: turn.now,
      actor: turn.runtime.actor!,
      language: turn.language,
      timeZone: turn.parts.settings.timeZone,
    });
    if (!trivial) return pass('not a trivial request');
    await observeTurn(turn, { layer: 'fastpath', outcome: 'success' });
    return {
      answer: finishTurn(turn, { layer: 'fastpath', finalKind: 'answer', finalMessage: trivial.answer }),
    };
  },
};
