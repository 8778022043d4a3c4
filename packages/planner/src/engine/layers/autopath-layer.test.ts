import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, readPlan, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { intentFromRules } from '../intent.ts';
import { learnPlan } from '../memory.ts';
import { parsePlan } from '../plan.ts';
import type { EngineSettings } from '../types.ts';
import { autopathLayer } from './autopath-layer.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const LEARNED = 'read diary.md and tell me the last 2 lines';
const INTENT = { text: '{"verb":"read","object":"file","qualifiers":["diary"]}' };

/** Two successes of a plan for a request: the plan becomes its cluster's champion. */
async function championOf(settings: EngineSettings, request: string, planText: string) {
  const parsed = parsePlan(planText);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  for (let turn = 0; turn < 2; turn++)
    await learnPlan(turnOf(settings, request), parsed.plan, intentFromRules(request));
}

describe('the L1 autopath layer', () => {
  it("serves the champion of the request's cluster with no model", async () => {
    const stores = openStores(world);
    const settings = engineSettings(world, stores, { wise: scripted([]) });
    await championOf(settings, LEARNED, readPlan('diary.md', 2));
    const outcome = await autopathLayer.run(turnOf(settings, `please ${LEARNED}`));
    expect(outcome).toMatchObject({
      answer: { layer: 'autopath', modelCalls: 0, finalMessage: 'Last lines:\nfour\nfive' },
    });
    stores.close();
  });

  it('does not serve a champion of other qualifiers, by cluster or by intent', async () => {
    const stores = openStores(world);
    const settings = engineSettings(world, stores, { wise: scripted([]), fast: scripted([INTENT]) });
    await championOf(settings, LEARNED, readPlan('diary.md', 2));
    const outcome = await autopathLayer.run(turnOf(settings, 'read diary.md and tell me the first 2 lines'));
    expect(outcome).toEqual({
      pass: 'no cluster champion: empty (score 0.000); no champion for the intent',
    });
    stores.close();
  });

  it("serves the exact intent's champion when no cluster is close enough, at the cost of the intent call", async () => {
    const stores = openStores(world);
    const settings = engineSettings(
      world,
      stores,
      { wise: scripted([]), fast: scripted([INTENT]) },
      { recognition: { autopathThreshold: 1.01 } },
    );
    await championOf(settings, LEARNED, readPlan('diary.md', 2));
    const outcome = await autopathLayer.run(turnOf(settings, 'show diary.md, the last 2 lines of it'));
    expect(outcome).toMatchObject({ answer: { layer: 'autopath', modelCalls: 1, intent: { verb: 'read' } } });
    stores.close();
  });

  it('passes when the turn asks to skip memory', async () => {
    const stores = openStores(world);
    const settings = engineSettings(world, stores, { wise: scripted([]) });
    await championOf(settings, LEARNED, readPlan('diary.md', 2));
    expect(await autopathLayer.run(turnOf(settings, LEARNED, { avoid: { memory: true } }))).toEqual({
      pass: 'the turn asked to skip memory',
    });
    stores.close();
  });
});
