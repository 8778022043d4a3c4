import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineOver, readPlan } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const REQUEST = 'read diary.md and tell me the last 2 lines';
/** The plan the user will say is wrong: it reads the whole file. */
const WRONG = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
  final_message: 'Whole file:\n${step1.content}',
});
const RIGHT = readPlan('diary.md', 2);

describe('feedback through engine.feedback', () => {
  it('down drops the L0 shortcut: the same request goes back to the Proposer', async () => {
    const model = scripted([{ text: WRONG }, { text: RIGHT }]);
    const { engine, stores } = engineOver(world, { wise: model });
    const learned = await engine.runTurn(REQUEST);
    const replayed = await engine.runTurn(REQUEST);
    expect(replayed).toMatchObject({ layer: 'fastpath', modelCalls: 0 });

    const outcome = await engine.feedback(replayed.turnId, 'down');
    expect(outcome).toMatchObject({ recorded: true, request: REQUEST, anti: false });
    expect(outcome.droppedShortcuts).toHaveLength(1);
    expect(stores.fastpath.list()).toEqual([]);

    const again = await engine.runTurn(REQUEST);
    expect(again.layer).toBe('engine');
    expect(again.modelCalls).toBeGreaterThan(0);
    expect(again.finalMessage).toBe('Last lines:\nfour\nfive');
    expect(learned.finalMessage).toContain('Whole file');
    stores.close();
  });

  it('a second down on the same plan for the same intent makes an anti-autopath the Proposer may not bring back', async () => {
    const model = scripted([{ text: WRONG }, { text: WRONG }, { text: WRONG }, { text: RIGHT }]);
    const { engine, stores } = engineOver(world, { wise: model });
    const first = await engine.runTurn(REQUEST);
    expect((await engine.feedback(first.turnId, 'down')).anti).toBe(false);
    const second = await engine.runTurn(REQUEST);
    expect(second).toMatchObject({ layer: 'engine', finalMessage: expect.stringContaining('Whole file') });
    expect((await engine.feedback(second.turnId, 'down')).anti).toBe(true);
    expect(stores.autopath.antiFor(first.intent!.hash)).toHaveLength(1);

    const third = await engine.runTurn(REQUEST);
    expect(third).toMatchObject({ layer: 'engine', finalMessage: 'Last lines:\nfour\nfive' });
    const rejected = model.requests.at(-1)!.messages[0]!;
    expect(rejected.role === 'user' && rejected.content).toContain(
      'this plan already failed for this request',
    );
    stores.close();
  });

  it('retry re-runs the request through L3 without the remembered plan', async () => {
    const model = scripted([{ text: WRONG }, { text: WRONG }, { text: RIGHT }]);
    const { engine, stores } = engineOver(world, { wise: model });
    await engine.runTurn(REQUEST);
    const replayed = await engine.runTurn(REQUEST);
    const outcome = await engine.feedback(replayed.turnId, 'retry');
    expect(outcome.retry).toMatchObject({ layer: 'engine', finalMessage: 'Last lines:\nfour\nfive' });
    expect(outcome.retry!.modelCalls).toBeGreaterThan(0);
    expect(outcome.retry!.passes?.map((passed) => passed.reason)).toContain('the turn asked to skip memory');
    expect(outcome.retry!.turnId).not.toBe(replayed.turnId);
    stores.close();
  });

  it('up promotes a plan seen once, so a paraphrase is served by L1 without the model', async () => {
    const model = scripted([{ text: RIGHT }]);
    const { engine, stores } = engineOver(
      world,
      { wise: model },
      { recognition: { fastpathThreshold: 1.01 } },
    );
    const learned = await engine.runTurn(REQUEST);
    expect(stores.autopath.champions()).toEqual([]);
    expect((await engine.feedback(learned.turnId, 'up')).recorded).toBe(true);
    expect(stores.autopath.champions()).toHaveLength(1);
    const paraphrase = await engine.runTurn(`please ${REQUEST}`);
    expect(paraphrase).toMatchObject({
      layer: 'autopath',
      modelCalls: 0,
      finalMessage: 'Last lines:\nfour\nfive',
    });
    stores.close();
  });

  it('records nothing for a turn memory does not know', async () => {
    const { engine, stores } = engineOver(world, { wise: scripted([]) });
    expect(await engine.feedback('no-such-turn', 'down')).toMatchObject({
      recorded: false,
      droppedShortcuts: [],
    });
    stores.close();
  });
});

describe('anti-autopaths from failures', () => {
  it('a shortcut that failed twice for an intent is not replayed a third time, even when it would work', async () => {
    await writeFile(join(world.workspace, 'kept.md'), 'k1\nk2\n');
    const model = scripted([
      { text: readPlan('kept.md', 1) },
      { text: '{"steps": [], "out_of_scope": "no such file"}' },
      { text: '{"steps": [], "out_of_scope": "no such file"}' },
      { text: readPlan('kept.md', 1) },
    ]);
    const { engine, stores } = engineOver(world, { wise: model });
    await engine.runTurn('read kept.md and tell me the last 1 lines');
    for (let attempt = 0; attempt < 2; attempt++) {
      const missing = await engine.runTurn('please read gone.md and tell me the last 1 lines');
      expect(missing.layer).toBe('terminator');
      expect(missing.passes?.[1]?.reason).toMatch(/^meaning match .* failed at fs_read/);
    }
    const [shortcut] = stores.fastpath.list();
    expect(stores.autopath.isAnti(shortcut!.intentHash!, shortcut!.planHash!)).toBe(true);

    await writeFile(join(world.workspace, 'gone.md'), 'g1\ng2\n');
    const back = await engine.runTurn('please read gone.md and tell me the last 1 lines');
    expect(back.passes?.[1]?.reason).toMatch(/anti-autopath/);
    expect(back.modelCalls).toBeGreaterThan(0);
    await rm(join(world.workspace, 'gone.md'));
    stores.close();
  });
});
