import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { preFastpathLayer } from './pre-fastpath-layer.ts';

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

describe('the pre fast-path layer', () => {
  it('answers the time by rule, as the fastpath layer, with no model, and logs the turn', async () => {
    const settings = engineSettings(world, stores, { wise: scripted([]) }, { actor: 'ada' });
    const turn = turnOf(settings, 'who am I?');
    const outcome = await preFastpathLayer.run(turn);
    expect(outcome).toMatchObject({
      answer: { layer: 'fastpath', finalMessage: 'You are ada.', modelCalls: 0 },
    });
    expect(stores.autopath.observations(turn.turnId)).toMatchObject([
      { layer: 'fastpath', outcome: 'success' },
    ]);
  });

  it('passes anything else on', async () => {
    const settings = engineSettings(world, stores, { wise: scripted([]) });
    expect(await preFastpathLayer.run(turnOf(settings, 'read diary.md'))).toEqual({
      pass: 'not a trivial request',
    });
  });
});
