import { join } from 'node:path';
import { createMnestome } from '@metnos/mnestome';
import { damageOpenStore } from '@metnos/mnestome/test';
import { createComposer } from '@metnos/synt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addWordsCountExecutor } from '../__fixtures__/engine.ts';
import { approveAll, createWorld, scripted } from '../__fixtures__/world.ts';
import { createPlanner } from '../turn.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
  await addWordsCountExecutor(world);
});
afterAll(() => world.scratchpad.close());

let files = 0;
const mnestomeFile = () => join(world.root, `loop-mnestome-${files++}.sqlite`);

function planner(
  model: ReturnType<typeof scripted>,
  extra: Partial<Parameters<typeof createPlanner>[0]> = {},
) {
  return createPlanner({
    catalog: world.catalog,
    invoker: world.invoker,
    models: { fast: model },
    reviewer: approveAll,
    scratchpad: world.scratchpad,
    workspace: world.workspace,
    retry: { sleep: async () => {} },
    ...extra,
  });
}

const READ = { name: 'fs_read', args: { path: 'diary.md', tail: 1 } };

describe('the mnestome hooks of the loop planner', () => {
  it('records a passage when a resolved {{stepM.field}} of a real executor fed the next one', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([
      { calls: [READ] },
      { calls: [{ name: 'fs_write', args: { path: 'copy.txt', content: '{{step1.content}}' } }] },
      { text: 'copied' },
    ]);
    const result = await planner(model, { mnestome }).runTurn('copy the last line of diary.md to copy.txt');
    expect(result.finalKind).toBe('answer');
    expect(mnestome.passagesFrom('fs_read')).toEqual([
      expect.objectContaining({ src: 'fs_read', dst: 'fs_write', dstExists: true, uses: 1 }),
    ]);
    expect(mnestome.age(undefined, { executors: ['fs_read', 'fs_write'] }).belowThreshold).toEqual([]);
    mnestome.close();
  });

  it('records nothing for steps that were not piped', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([
      { calls: [READ] },
      { calls: [{ name: 'fs_write', args: { path: 'fixed.txt', content: 'hello' } }] },
      { text: 'done' },
    ]);
    await planner(model, { mnestome }).runTurn('read diary.md, then write hello to fixed.txt');
    expect(mnestome.mnests()).toEqual([]);
    mnestome.close();
  });

  it('registers a proto-mnest for an unknown tool fed from a real step, and reactive compose answers beside the observation', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([
      { calls: [READ] },
      { calls: [{ name: 'word_count', args: { text: '{{step1.content}}', language: 'en' } }] },
      { text: 'I could not count them' },
    ]);
    const result = await planner(model, { mnestome, composer: createComposer() }).runTurn(
      'read diary.md and count the words of its last line',
    );
    expect(mnestome.protoMnests()).toEqual([
      expect.objectContaining({
        src: 'fs_read',
        dst: 'word_count',
        dstExists: false,
        desiredSignature: {
          name: 'word_count',
          args: ['language', 'text'],
          piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
          sourceOutput: [],
          purpose: ['read', 'diary', 'md', 'count', 'words', 'last', 'line'],
        },
      }),
    ]);
    const synt = {
      strategy: 'compose',
      state: 'composed',
      chain: ['words_count'],
      first_hop: 'words_count',
      suggestion: "Retry by invoking 'words_count' as the next step",
    };
    expect(result.steps[1]!.observation).toMatchObject({
      ok: false,
      error: { class: 'ToolUnavailable' },
      synt,
    });
    const told = model.requests[2]!.messages.at(-1)!;
    expect(told).toMatchObject({ role: 'tool', toolName: 'word_count' });
    expect(JSON.parse((told as { content: string }).content).synt).toEqual(synt);
    mnestome.close();
  });

  it('tells the model the road is closed when no chain of existing tools does it', async () => {
    const model = scripted([
      { calls: [READ] },
      { calls: [{ name: 'fax_send', args: { document: '{{step1.content}}' } }] },
      { text: 'no fax' },
    ]);
    const result = await planner(model, { composer: createComposer() }).runTurn(
      'fax the last line of diary.md',
    );
    expect(result.steps[1]!.observation.synt).toMatchObject({
      state: 'abandoned',
      chain: [],
      first_hop: null,
    });
  });

  it('registers nothing for an unknown tool called without piping', async () => {
    const mnestome = createMnestome({ path: mnestomeFile() });
    const model = scripted([{ calls: [{ name: 'word_count', args: { text: 'a b c' } }] }, { text: 'no' }]);
    const result = await planner(model, { mnestome, composer: createComposer() }).runTurn('count a b c');
    expect(mnestome.protoMnests()).toEqual([]);
    expect(result.steps[0]!.observation).not.toHaveProperty('synt');
    mnestome.close();
  });

  it('answers the turn when the mnestome file is damaged under it, or the hooks throw', async () => {
    const file = mnestomeFile();
    const failures: string[] = [];
    const damaged = createMnestome({ path: file, onError: (_error, operation) => failures.push(operation) });
    damaged.recordUse('fs_read');
    damageOpenStore(file);
    const turn = () =>
      scripted([
        { calls: [READ] },
        { calls: [{ name: 'fs_write', args: { path: 'copy2.txt', content: '{{step1.content}}' } }] },
        { calls: [{ name: 'word_count', args: { text: '{{step1.content}}' } }] },
        { text: 'done' },
      ]);
    const result = await planner(turn(), { mnestome: damaged }).runTurn(
      'read diary.md, copy it and count its words',
    );
    expect(result).toMatchObject({ finalKind: 'answer', finalMessage: 'done' });
    expect(failures).toContain('record a passage');
    const throwing = {
      recordPassing() {
        throw new Error('boom');
      },
      recordUse() {
        throw new Error('boom');
      },
      passagesFrom(): never {
        throw new Error('boom');
      },
    };
    const composer = {
      compose(): never {
        throw new Error('boom');
      },
    };
    const again = await planner(turn(), { mnestome: throwing, composer }).runTurn(
      'read diary.md, copy it and count its words',
    );
    expect(again).toMatchObject({ finalKind: 'answer', finalMessage: 'done' });
  });

  it('offers, after a step, what usually follows its executor (the history boost)', async () => {
    const request = 'read diary.md';
    const offered = async (mnestome?: ReturnType<typeof createMnestome>) => {
      const model = scripted([{ calls: [READ] }, { text: 'five' }]);
      await planner(model, { mnestome, prefilter: { kMin: 2, kMax: 2 } }).runTurn(request);
      return model.requests.map((sent) => sent.tools.map((tool) => tool.name));
    };
    expect(await offered()).toEqual([['fs_read'], ['fs_read']]);
    const mnestome = createMnestome({ path: mnestomeFile() });
    for (let use = 0; use < 3; use++) mnestome.recordPassing('fs_read', 'words_count', true);
    expect(await offered(mnestome)).toEqual([['fs_read'], ['fs_read', 'words_count']]);
    mnestome.close();
  });
});
