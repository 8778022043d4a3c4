import type { Layer } from '../layer.ts';
import { observeTurn } from '../memory.ts';
import { planHash } from '../plan.ts';
import { terminationMessage } from '../terminator.ts';
import { finishTurn } from '../turn-context.ts';

/**
 * The Terminator: the honest dead end. It always answers, with the cause
 * the layers above left on the turn and a concrete action from the message
 * dictionary in the user's language, and counts the gap in the gap log.
 */
export const terminatorLayer: Layer = {
  name: 'terminator',
  async run(turn) {
    const termination = turn.termination ?? {
      cause: 'recovery_failed' as const,
      detail: turn.passes.map((passed) => `${passed.layer}: ${passed.reason}`).join('; '),
    };
    const { cause, detail } = termination;
    const message = terminationMessage(cause, turn.language, detail, termination.tool ?? '');
    const intent = turn.knownIntent();
    try {
      turn.parts.settings.gaps.record({
        cause,
        signature: intent?.complete ? `${intent.verb} ${intent.object}` : turn.key.normalized,
        example: turn.request,
        detail,
      });
    } catch {
      // a full disk must not turn an honest answer into a crash
    }
    await observeTurn(turn, {
      layer: 'terminator',
      outcome: 'failure',
      intentHash: intent?.hash,
      planHash: termination.plan ? planHash(termination.plan) : undefined,
      errorClass: cause,
    });
    return {
      answer: finishTurn(turn, {
        layer: 'terminator',
        finalKind: 'terminated',
        finalMessage: message.text,
        plan: termination.plan,
        steps: termination.steps ?? [],
        intent,
        termination: { cause, message: message.cause, action: message.action },
      }),
    };
  },
};
