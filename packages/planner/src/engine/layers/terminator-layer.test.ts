import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { terminatorLayer } from './terminator-layer.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
let stores: ReturnType<typeof openStores>;
beforeAll(async () => {
  world = await createWorld();
  stores = openStores(world);
});
afterAll(() => {
  stores.close();
  world.scratchpad.close();
});

describe('the terminator layer', () => {
  it('answers with the cause the layers above left, in the request language, and counts the gap', async () => {
    const settings = engineSettings(world, stores, { wise: scripted([]) });
    const turn = turnOf(settings, 'prenotami un volo per Parigi per favore');
    turn.termination = { cause: 'out_of_scope', detail: 'nessun executor per i voli' };
    const outcome = await terminatorLayer.run(turn);
    expect(outcome).toMatchObject({
      answer: {
        layer: 'terminator',
        finalKind: 'terminated',
        language: 'it',
        termination: { cause: 'out_of_scope' },
      },
    });
    expect('answer' in outcome && outcome.answer.finalMessage).toContain('Non posso farlo');
    expect(stores.gaps.list()).toMatchObject([{ cause: 'out_of_scope', count: 1 }]);
    expect(stores.autopath.observations(turn.turnId)).toMatchObject([
      { layer: 'terminator', outcome: 'failure', errorClass: 'out_of_scope' },
    ]);
  });

  it('always answers, naming the passes when no layer left a cause', async () => {
    const settings = engineSettings(world, stores, { wise: scripted([]) });
    const turn = turnOf(settings, 'do the thing');
    turn.passes.push({ layer: 'proposal', reason: 'something odd' });
    const outcome = await terminatorLayer.run(turn);
    expect(outcome).toMatchObject({ answer: { termination: { cause: 'recovery_failed' } } });
    expect('answer' in outcome && outcome.answer.finalMessage).toContain('proposal: something odd');
  });
});
