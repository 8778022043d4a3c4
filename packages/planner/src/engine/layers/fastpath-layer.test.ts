import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, readPlan, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { intentFromRules } from '../intent.ts';
import { learnPlan } from '../memory.ts';
import { parsePlan } from '../plan.ts';
import type { EngineSettings } from '../types.ts';
import { fastpathLayer } from './fastpath-layer.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

/** Remembers `plan` for `request`, as a turn of L3 that worked would. */
async function remember(settings: EngineSettings, request: string, planText: string) {
  const parsed = parsePlan(planText);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  await learnPlan(turnOf(settings, request), parsed.plan, intentFromRules(request));
}

function setup() {
  const stores = openStores(world);
  return { stores, settings: engineSettings(world, stores, { wise: scripted([]) }) };
}

describe('the L0 fastpath layer', () => {
  it('replays the shortcut of the exact fingerprint, bound to the new slots, with no model', async () => {
    const { stores, settings } = setup();
    await remember(settings, 'read diary.md and tell me the last 2 lines', readPlan('diary.md', 2));
    const outcome = await fastpathLayer.run(turnOf(settings, 'read diary.md and tell me the last 3 lines'));
    expect(outcome).toMatchObject({
      answer: { layer: 'fastpath', modelCalls: 0, finalMessage: 'Last lines:\nthree\nfour\nfive' },
    });
    expect(stores.fastpath.list()[0]?.uses).toBe(1);
    stores.close();
  });

  it('serves a paraphrase through the recognizer, and never a plan learned for other qualifiers', async () => {
    const { stores, settings } = setup();
    await remember(settings, 'read diary.md and tell me the last 2 lines', readPlan('diary.md', 2));
    const paraphrase = await fastpathLayer.run(
      turnOf(settings, 'please read diary.md and tell me the last 2 lines'),
    );
    expect(paraphrase).toMatchObject({ answer: { layer: 'fastpath', modelCalls: 0 } });
    const first = await fastpathLayer.run(
      turnOf(settings, 'please read diary.md and tell me the first 2 lines'),
    );
    expect(first).toEqual({ pass: 'no exact shortcut; by meaning: empty (score 0.000)' });
    stores.close();
  });

  it('refuses an exact fingerprint whose pinned slot has another value', async () => {
    const { stores, settings } = setup();
    const plan = JSON.stringify({ steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: 1 } }] });
    await remember(settings, 'show the line number 4 of diary.md', plan);
    expect(stores.fastpath.list()[0]?.pinned).toEqual({ number_1: '4' });
    const outcome = await fastpathLayer.run(turnOf(settings, 'show the line number 2 of diary.md'));
    expect(outcome).toMatchObject({ pass: expect.stringContaining('number_1 was "4", now "2"') });
    stores.close();
  });

  it('drops a shortcut that fails on its exact fingerprint, counting the failure', async () => {
    const { stores, settings } = setup();
    await remember(settings, 'read diary.md and tell me the last 2 lines', readPlan('diary.md', 2));
    const outcome = await fastpathLayer.run(turnOf(settings, 'read nowhere.md and tell me the last 2 lines'));
    expect(outcome).toMatchObject({ pass: expect.stringMatching(/^exact match .* failed at fs_read/) });
    expect(stores.fastpath.list()).toEqual([]);
    stores.close();
  });

  it('passes when the turn asks to skip memory, or the catalog is empty', async () => {
    const { stores, settings } = setup();
    await remember(settings, 'read diary.md and tell me the last 2 lines', readPlan('diary.md', 2));
    const request = 'read diary.md and tell me the last 2 lines';
    expect(await fastpathLayer.run(turnOf(settings, request, { avoid: { memory: true } }))).toEqual({
      pass: 'the turn asked to skip memory',
    });
    const empty = { ...settings, catalog: { executors: () => [] } };
    expect(await fastpathLayer.run(turnOf(empty, request))).toMatchObject({
      pass: expect.stringContaining('empty'),
    });
    stores.close();
  });
});
