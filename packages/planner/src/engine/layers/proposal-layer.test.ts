import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, readPlan, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { parsePlan } from '../plan.ts';
import { templateHash } from '../propose.ts';
import { proposalLayer } from './proposal-layer.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const REQUEST = 'read diary.md and tell me the last 2 lines';
const CRASH = JSON.stringify({ steps: [{ tool: 'crasher', args: {} }], final_message: 'done' });
const lastPrompt = (model: ReturnType<typeof scripted>) => {
  const message = model.requests.at(-1)!.messages[0]!;
  return message.role === 'user' ? message.content : '';
};

describe('the L3 layer (Proposer, Validator, Executor)', () => {
  it('runs the proposed plan and remembers it with the request qualifiers', async () => {
    const stores = openStores(world);
    const model = scripted([{ text: readPlan('diary.md', 2) }]);
    const outcome = await proposalLayer.run(turnOf(engineSettings(world, stores, { wise: model }), REQUEST));
    expect(outcome).toMatchObject({ answer: { layer: 'engine', finalMessage: 'Last lines:\nfour\nfive' } });
    expect(stores.fastpath.list()).toMatchObject([
      { qualifiers: ['position:last'], slots: ['number_1', 'path_1'] },
    ]);
    expect(lastPrompt(model)).toContain('Qualifiers (the plan must honour each): position:last');
    stores.close();
  });

  it('asks once more when the Validator finds errors, then gives up with plan_unreadable', async () => {
    const stores = openStores(world);
    const dangling = JSON.stringify({
      steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
      final_message: '${step2.content}',
    });
    const model = scripted([{ text: dangling }, { text: dangling }]);
    const turn = turnOf(engineSettings(world, stores, { wise: model }), REQUEST);
    expect(await proposalLayer.run(turn)).toEqual({ pass: 'no plan to run: plan_unreadable' });
    expect(model.requests).toHaveLength(2);
    expect(turn.termination).toMatchObject({
      cause: 'plan_unreadable',
      detail: expect.stringContaining('step2'),
    });
    stores.close();
  });

  it('refuses a plan the turn must avoid and takes the re-proposal', async () => {
    const stores = openStores(world);
    const whole = JSON.stringify({ steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }] });
    const parsed = parsePlan(whole);
    const avoided = parsed.ok ? templateHash(parsed.plan, REQUEST) : '';
    const model = scripted([{ text: whole }, { text: readPlan('diary.md', 2) }]);
    const turn = turnOf(engineSettings(world, stores, { wise: model }), REQUEST, {
      avoid: { planHashes: [avoided] },
    });
    expect(await proposalLayer.run(turn)).toMatchObject({
      answer: { finalMessage: 'Last lines:\nfour\nfive' },
    });
    expect(lastPrompt(model)).toContain('this plan already failed for this request');
    stores.close();
  });

  it('leaves a failed plan on the turn for Recovery and counts it towards its anti-autopath', async () => {
    const stores = openStores(world);
    const turn = turnOf(
      engineSettings(world, stores, { wise: scripted([{ text: CRASH }]) }),
      'crash the thing now',
    );
    const outcome = await proposalLayer.run(turn);
    expect(outcome).toMatchObject({
      pass: expect.stringContaining('the plan failed at crasher (wrong_tool)'),
    });
    expect(turn.failure).toMatchObject({ outcome: { tool: 'crasher', recovery: 'wrong_tool' } });
    expect(turn.termination).toBeUndefined();
    const [observation] = stores.autopath.observations(turn.turnId);
    expect(observation).toMatchObject({
      layer: 'engine',
      outcome: 'failure',
      planHash: turn.failure!.planHash,
    });
    stores.close();
  });

  it('ends out-of-scope requests and empty catalogs for the Terminator, the latter with no model call', async () => {
    const stores = openStores(world);
    const model = scripted([{ text: '{"steps": [], "out_of_scope": "no flight executor"}' }]);
    const settings = engineSettings(world, stores, { wise: model });
    const flight = turnOf(settings, 'book me a flight to Paris');
    await proposalLayer.run(flight);
    expect(flight.termination).toEqual({ cause: 'out_of_scope', detail: 'no flight executor' });
    const empty = turnOf({ ...settings, catalog: { executors: () => [] } }, 'book me a flight to Paris');
    expect(await proposalLayer.run(empty)).toEqual({ pass: 'the catalog is empty' });
    expect(empty.termination?.cause).toBe('empty_catalog');
    expect(empty.modelCalls()).toBe(0);
    stores.close();
  });
});
