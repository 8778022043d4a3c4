import { inSpan, passReasonForSpan } from './telemetry.ts';
import type { TurnContext } from './turn-context.ts';
import type { EngineResult } from './types.ts';

/** What a layer did with a turn: answered it, or passed it on and said why. */
export type LayerOutcome = { answer: EngineResult } | { pass: string };

/**
 * One layer of the engine: it gets the turn and either answers or passes.
 * A layer that passes may leave something for the layers below on the turn
 * (`turn.failure` for Recovery, `turn.termination` for the Terminator); it
 * never calls them.
 *
 * @example
 * const greeting: Layer = {
 *   name: 'greeting',
 *   async run(turn) {
 *     if (!/^hi\b/i.test(turn.request)) return { pass: 'not a greeting' };
 *     return { answer: finishTurn(turn, { layer: 'fastpath', finalKind: 'answer', finalMessage: 'Hi.' }) };
 *   },
 * };
 */
export interface Layer {
  readonly name: string;
  run(turn: TurnContext): Promise<LayerOutcome>;
}

/** Passes a turn on with a reason. */
export const pass = (reason: string): LayerOutcome => ({ pass: reason });

/**
 * The dispatcher: walks the layers in order until one answers, recording
 * on the turn why each one above it passed. The last layer must always
 * answer (the Terminator does). Each layer tried runs in a
 * `metnos.layer <name>` span (see `telemetry.ts`).
 *
 * @example
 * const result = await dispatch([preFastpathLayer, fastpathLayer, ..., terminatorLayer], turn);
 */
export async function dispatch(layers: readonly Layer[], turn: TurnContext): Promise<EngineResult> {
  for (const layer of layers) {
    turn.emit({ type: 'layer', layer: layer.name });
    const outcome = await inSpan(
      `metnos.layer ${layer.name}`,
      { 'metnos.layer': layer.name },
      async (span) => {
        const outcome = await layer.run(turn);
        if ('answer' in outcome) span.setAttribute('metnos.layer.outcome', 'answered');
        else
          span.setAttributes({
            'metnos.layer.outcome': 'passed',
            'metnos.layer.pass_reason': passReasonForSpan(outcome.pass),
          });
        return outcome;
      },
    );
    if ('answer' in outcome) return outcome.answer;
    turn.passes.push({ layer: layer.name, reason: outcome.pass });
    turn.emit({ type: 'pass', layer: layer.name, reason: outcome.pass });
  }
  throw new Error(`no layer answered: ${turn.passes.map((passed) => passed.layer).join(', ')}`);
}
