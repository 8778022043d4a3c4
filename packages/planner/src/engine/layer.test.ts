import { describe, expect, it } from 'vitest';
import { dispatch, type Layer, pass } from './layer.ts';
import { finishTurn, type TurnContext } from './turn-context.ts';

/** Just what dispatch and finishTurn read from a turn. */
function bareTurn(): TurnContext {
  return {
    turnId: 't1',
    language: 'en',
    passes: [],
    emit: () => undefined,
    modelCalls: () => 0,
    elapsedMs: () => 1,
  } as unknown as TurnContext;
}

const passing = (name: string, reason: string, seen: string[]): Layer => ({
  name,
  async run() {
    seen.push(name);
    return pass(reason);
  },
});

describe('dispatch', () => {
  it('walks the layers in order, records why each passed, and stops at the first answer', async () => {
    const seen: string[] = [];
    const answering: Layer = {
      name: 'second',
      async run(turn) {
        seen.push('second');
        return { answer: finishTurn(turn, { layer: 'engine', finalKind: 'answer', finalMessage: 'done' }) };
      },
    };
    const result = await dispatch(
      [passing('first', 'not mine', seen), answering, passing('third', 'never asked', seen)],
      bareTurn(),
    );
    expect(seen).toEqual(['first', 'second']);
    expect(result).toMatchObject({
      layer: 'engine',
      finalMessage: 'done',
      passes: [{ layer: 'first', reason: 'not mine' }],
    });
  });

  it('leaves passes out of a result nobody passed before', async () => {
    const answering: Layer = {
      name: 'only',
      run: async (turn) => ({
        answer: finishTurn(turn, { layer: 'engine', finalKind: 'answer', finalMessage: '' }),
      }),
    };
    expect((await dispatch([answering], bareTurn())).passes).toBeUndefined();
  });

  it('says which layers passed when none answered', async () => {
    await expect(dispatch([passing('a', 'x', []), passing('b', 'y', [])], bareTurn())).rejects.toThrow(
      'no layer answered: a, b',
    );
  });
});
