import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEmbedder } from '../__fixtures__/embedder.ts';
import { engineOver, readPlan } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';
import { createMemoryRecognition } from './recognition.ts';
import { describeRequest } from './request-key.ts';
import { normalizeRequest } from './slots.ts';
import type { EngineSettings } from './types.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const FIRST = [
  'show the first lines of the diary',
  'print the first lines of my diary',
  'the first lines of the diary please',
  'give me the first lines of the diary',
  'first lines of my diary',
  'display the first lines of the diary',
];
const LAST = FIRST.map((request) => request.replace('first', 'last'));

/** L0 over real stores whose every calibration lookup is recorded with the ids it left out. */
async function memory(requests: Array<[string, string]>) {
  const embedder = testEmbedder();
  const fastpath = createFastpathStore({ path: ':memory:' });
  const autopath = createAutopathStore({ path: ':memory:' });
  const excluded: Array<ReadonlySet<string> | undefined> = [];
  const watched = {
    ...fastpath,
    labelSimilarities: (...args: Parameters<typeof fastpath.labelSimilarities>) => {
      excluded.push(args[1]?.excludeIds);
      return fastpath.labelSimilarities(...args);
    },
  };
  const add = async (request: string, plan: string) => {
    const [vector] = await embedder.embed([normalizeRequest(request)]);
    return fastpath.save({
      fingerprint: request,
      request,
      template: { plan },
      slots: [],
      tools: [],
      vector,
      planHash: plan,
      qualifiers: describeRequest(request).qualifiers,
      embedderId: embedder.id,
    });
  };
  for (const [request, plan] of requests) await add(request, plan);
  const settings = { fastpath: watched, autopath, embedder } as unknown as EngineSettings;
  const recognition = createMemoryRecognition(settings, embedder.id, () => new Date());
  return { recognition, fastpath, excluded, add };
}

describe('calibration scores each request as serving would', () => {
  it('leaves out, for each stored request, the plans its qualifiers cannot reuse (and its own copy)', async () => {
    const { recognition, fastpath, excluded } = await memory([
      ...FIRST.map((request): [string, string] => [request, 'head']),
      ...LAST.map((request): [string, string] => [request, 'tail']),
    ]);
    await recognition.calibrate({ force: true });
    const ids = (plan: string) =>
      fastpath
        .list()
        .filter((entry) => entry.planHash === plan)
        .map((entry) => entry.id);
    const expected = fastpath
      .list()
      .map((entry) => [entry.id, ...ids(entry.planHash === 'head' ? 'tail' : 'head')].sort().join(' '))
      .sort();
    expect(excluded.map((set) => [...(set ?? [])].sort().join(' ')).sort()).toEqual(expected);
  });

  it('scores at most 2,000 stored requests, spread over the store', async () => {
    const embedder = {
      id: 'tiny',
      embed: async (texts: string[]) =>
        texts.map((text) => {
          const vector = new Float32Array(8);
          vector[text.length % 8] = 1;
          return vector;
        }),
    };
    const fastpath = createFastpathStore({ path: ':memory:' });
    const autopath = createAutopathStore({ path: ':memory:' });
    for (let index = 0; index < 2_500; index++) {
      const request = `request number ${'x'.repeat(index % 8)} ${index}`;
      const [vector] = await embedder.embed([normalizeRequest(request)]);
      fastpath.save({
        fingerprint: request,
        request,
        template: { plan: index % 8 },
        slots: [],
        tools: [],
        vector,
        planHash: `plan-${index % 8}`,
        qualifiers: [],
        embedderId: embedder.id,
      });
    }
    let scored = 0;
    const watched = {
      ...fastpath,
      labelSimilarities: (...args: Parameters<typeof fastpath.labelSimilarities>) => {
        scored++;
        return fastpath.labelSimilarities(...args);
      },
    };
    const settings = { fastpath: watched, autopath, embedder } as unknown as EngineSettings;
    await createMemoryRecognition(settings, embedder.id, () => new Date()).calibrate({ force: true });
    expect(scored).toBe(2_000);
  });
});

describe('a memory that grows is fitted again without waiting for the daily maintenance', () => {
  it('refits a store that grew by a quarter since its last fit, and not before', async () => {
    const requests = [...FIRST, ...LAST].map((request): [string, string] => [request, 'plan']);
    const { recognition, excluded, add } = await memory(requests);
    await recognition.refitIfGrown();
    expect(excluded).toHaveLength(0);
    await add('show the first lines of the notes', 'plan');
    await add('show the last lines of the notes', 'plan');
    await recognition.refitIfGrown();
    expect(excluded).toHaveLength(0);
    await add('show the first lines of the log', 'plan');
    await recognition.refitIfGrown();
    expect(excluded).toHaveLength(15);
    await recognition.refitIfGrown();
    expect(excluded).toHaveLength(15);
  });

  it('has a calibration after ten learned plans, with no maintenance since the engine opened', async () => {
    const requests = ['', 'please', 'now', 'quickly', 'kindly', 'again', 'just', 'ok', 'so', 'then'].map(
      (word) => `${word} read diary.md and tell me the last 2 lines`.trim(),
    );
    const { engine, stores } = engineOver(
      world,
      { wise: scripted(requests.map(() => ({ text: readPlan('diary.md', 2) }))) },
      { maintenanceEveryMs: false },
    );
    for (const [index, request] of requests.entries()) {
      expect(stores.fastpath.calibrations.get('test-hash')).toBeUndefined();
      const result = await engine.runTurn(request, { avoid: { memory: true } });
      expect(result.layer).toBe('engine');
      expect(stores.fastpath.list()).toHaveLength(index + 1);
    }
    expect(stores.fastpath.calibrations.get('test-hash')).toMatchObject({ examples: 10, bounded: true });
    stores.close();
  });
});
