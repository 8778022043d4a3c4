import { join } from 'node:path';
import { createMnestome } from '@metnos/mnestome';
import { damageOpenStore } from '@metnos/mnestome/test';
import { createComposer } from '@metnos/synt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addEchoExecutor, addWordsCountExecutor, engineOver } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
  await addEchoExecutor(world);
  await addWordsCountExecutor(world);
});
afterAll(() => world.scratchpad.close());

let files = 0;
const mnestomeFile = () => join(world.root, `engine-mnestome-${files++}.sqlite`);

const plan = (steps: unknown[], finalMessage = '') => JSON.stringify({ steps, final_message: finalMessage });
const READ = { tool: 'fs_read', args: { path: 'diary.md', tail: 2 } };
const WANTS_WORD_COUNT = plan([READ, { tool: 'word_count', args: { text: '${step1.content}' } }]);

describe('the mnestome hooks of the engine', () => {
  it('records the passages of a plan that ran: ${stepN…} and from_step from a step that succeeded', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([
      {
        text: plan(
          [
            READ,
            { tool: 'fs_write', args: { path: 'tail.md', content: '${step1.content}' } },
            { tool: 'echo', args: { from_step: 1 } },
          ],
          'Saved.',
        ),
      },
    ]);
    const { engine, stores } = engineOver(world, { wise: model }, { mnestome });
    const result = await engine.runTurn('save the last two lines of diary.md to tail.md');
    expect(result).toMatchObject({ layer: 'engine', finalKind: 'answer' });
    expect(mnestome.passagesFrom('fs_read').map((mnest) => [mnest.dst, mnest.uses])).toEqual([
      ['echo', 1],
      ['fs_write', 1],
    ]);
    expect(mnestome.passagesFrom('fs_write')).toEqual([]);
    expect(mnestome.age(undefined, { executors: ['fs_read', 'fs_write', 'echo'] }).belowThreshold).toEqual(
      [],
    );
    stores.close();
    mnestome.close();
  });

  it('registers a proto-mnest, once per turn, for a tool a plan named that does not exist', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([{ text: WANTS_WORD_COUNT }, { text: WANTS_WORD_COUNT }]);
    const { engine, stores } = engineOver(world, { wise: model }, { mnestome });
    const result = await engine.runTurn('read diary.md and count its words');
    expect(result.layer).toBe('terminator');
    expect(mnestome.protoMnests()).toEqual([
      expect.objectContaining({
        src: 'fs_read',
        dst: 'word_count',
        uses: 1,
        desiredSignature: {
          name: 'word_count',
          args: ['text'],
          piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
          sourceOutput: [],
          purpose: ['read', 'diary', 'md', 'count', 'words'],
        },
      }),
    ]);
    stores.close();
    mnestome.close();
  });

  it('Recovery asks reactive compose before giving up, tells the Proposer the chain, and answers with it', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const withChain = plan(
      [READ, { tool: 'words_count', args: { text: '${step1.content}' } }],
      '${step2.content.words} words',
    );
    const model = scripted([{ text: WANTS_WORD_COUNT }, { text: WANTS_WORD_COUNT }, { text: withChain }]);
    const { engine, stores } = engineOver(world, { wise: model }, { mnestome, composer: createComposer() });
    const result = await engine.runTurn('read diary.md and count its words');
    expect(result).toMatchObject({ layer: 'recovery', finalKind: 'answer', finalMessage: '2 words' });
    const prompt = model.requests[2]!.messages[0]!;
    expect(prompt.role === 'user' && prompt.content).toContain(
      'word_count does not exist; the existing tools words_count do the same in a chain: use them in its place, starting with words_count',
    );
    expect(mnestome.passagesFrom('fs_read').map((mnest) => mnest.dst)).toEqual(['words_count']);
    stores.close();
    mnestome.close();
  });

  it('without a composer, Recovery passes on a missing tool as before', async () => {
    const model = scripted([{ text: WANTS_WORD_COUNT }, { text: WANTS_WORD_COUNT }]);
    const { engine, stores } = engineOver(world, { wise: model });
    const result = await engine.runTurn('read diary.md and count its words');
    expect(result.layer).toBe('terminator');
    expect(result.passes).toContainEqual({ layer: 'recovery', reason: 'nothing failed to recover from' });
    expect(model.requests).toHaveLength(2);
    stores.close();
  });

  it('says the road is closed when no chain of existing tools does what the missing tool was wished for', async () => {
    const wantsFax = plan([READ, { tool: 'fax_send', args: { document: '${step1.content}' } }]);
    const model = scripted([{ text: wantsFax }, { text: wantsFax }]);
    const { engine, stores } = engineOver(world, { wise: model }, { composer: createComposer() });
    const result = await engine.runTurn('fax the last lines of diary.md');
    expect(result.layer).toBe('terminator');
    expect(result.passes).toContainEqual({
      layer: 'recovery',
      reason: 'fax_send does not exist and no chain of existing tools does it: the road is closed',
    });
    expect(result.termination?.cause).toBe('no_capability');
    expect(result.finalMessage).toContain(
      'None of my executors can do this (fax_send does not exist, and no chain of the existing executors does it)',
    );
    expect(model.requests).toHaveLength(2);
    stores.close();
  });

  it('answers the turn when the mnestome file is damaged under it', async () => {
    const file = mnestomeFile();
    const failures: string[] = [];
    const mnestome = createMnestome({ path: file, onError: (_error, operation) => failures.push(operation) });
    mnestome.recordUse('fs_read');
    damageOpenStore(file);
    const model = scripted([
      {
        text: plan(
          [READ, { tool: 'fs_write', args: { path: 'tail2.md', content: '${step1.content}' } }],
          'Saved.',
        ),
      },
    ]);
    const { engine, stores } = engineOver(world, { wise: model }, { mnestome });
    const result = await engine.runTurn('save the last two lines of diary.md to tail2.md');
    expect(result).toMatchObject({ layer: 'engine', finalKind: 'answer', finalMessage: 'Saved.' });
    expect(failures).toContain('record a passage');
    stores.close();
  });
});
