import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettings, openStores, readPlan, turnOf } from '../../__fixtures__/engine.ts';
import { createWorld, scripted } from '../../__fixtures__/world.ts';
import { proposalLayer } from './proposal-layer.ts';
import { recoveryLayer } from './recovery-layer.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const CRASH = JSON.stringify({ steps: [{ tool: 'crasher', args: {} }], final_message: 'done' });
const REQUEST = 'get the last line of diary.md somehow';

/** A turn whose proposed plan failed, as L3 leaves it. */
async function failedTurn(model: ReturnType<typeof scripted>) {
  const stores = openStores(world);
  const turn = turnOf(engineSettings(world, stores, { wise: model }), REQUEST);
  await proposalLayer.run(turn);
  return { stores, turn };
}

describe('the Recovery layer', () => {
  it('passes when nothing failed', async () => {
    const stores = openStores(world);
    const turn = turnOf(engineSettings(world, stores, { wise: scripted([]) }), REQUEST);
    expect(await recoveryLayer.run(turn)).toEqual({ pass: 'nothing failed to recover from' });
    stores.close();
  });

  it('tries one alternative without the failed tool and the failed plan, and answers with it', async () => {
    const model = scripted([{ text: CRASH }, { text: readPlan('diary.md', 1) }]);
    const { stores, turn } = await failedTurn(model);
    const outcome = await recoveryLayer.run(turn);
    expect(outcome).toMatchObject({ answer: { layer: 'recovery', finalMessage: 'Last lines:\nfive' } });
    const prompt = model.requests[1]!.messages[0]!;
    expect(prompt.role === 'user' && prompt.content).toContain(
      'Do not use: crasher.\n\nThe previous plan failed: crasher failed',
    );
    stores.close();
  });

  it("hands the Terminator the cause of the alternative's failure (here a missing input)", async () => {
    const junk = JSON.stringify({ steps: [{ tool: 'fs_read', args: { path: 'nowhere.md' } }] });
    const { stores, turn } = await failedTurn(scripted([{ text: CRASH }, { text: junk }]));
    expect(await recoveryLayer.run(turn)).toMatchObject({
      pass: expect.stringContaining('the alternative failed'),
    });
    expect(turn.termination).toMatchObject({ cause: 'missing_input', tool: 'fs_read' });
    stores.close();
  });

  it('leaves an out-of-scope failure to the Terminator without asking the model', async () => {
    const stores = openStores(world);
    const turn = turnOf(engineSettings(world, stores, { wise: scripted([]) }), REQUEST);
    turn.failure = {
      plan: { version: '1', steps: [], fillers: {}, final_message: '' },
      planHash: 'p',
      outcome: {
        ok: false,
        kind: 'failed',
        failedStep: 1,
        tool: 'web_fetch',
        error: { class: 'Blocked', message: 'blocked' },
        recovery: 'out_of_scope',
        steps: [],
        order: [],
        fillers: {},
        memory: [],
        verdicts: [],
      },
    };
    expect(await recoveryLayer.run(turn)).toEqual({ pass: 'web_fetch needs what no alternative can give' });
    expect(turn.modelCalls()).toBe(0);
    stores.close();
  });
});
