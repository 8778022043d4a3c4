import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testEmbedder } from '../__fixtures__/embedder.ts';
import { engineSettings, openStores, readPlan } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';
import { createEngine, createEngineParts } from './engine.ts';
import { scheduleMaintenance } from './maintenance.ts';
import { normalizeRequest } from './slots.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const DAY = 86_400_000;
const REQUEST = 'read diary.md and tell me the last 2 lines';

/** A clock the test moves by hand, shared by the stores and the engine. */
function handClock(start = Date.parse('2026-03-01T09:00:00Z')) {
  let now = start;
  return { clock: () => new Date(now), advance: (ms: number) => (now += ms) };
}

describe('memory maintains itself', () => {
  it('ages shortcuts out when the engine opens, without a call to age()', async () => {
    const time = handClock();
    const stores = openStores(world, { clock: time.clock });
    const settings = engineSettings(
      world,
      stores,
      { wise: scripted([{ text: readPlan('diary.md', 2) }]) },
      {
        clock: time.clock,
      },
    );
    await createEngine(settings).runTurn(REQUEST);
    expect(stores.fastpath.list()).toHaveLength(1);
    time.advance(31 * DAY);
    createEngine(settings);
    expect(stores.fastpath.list()).toEqual([]);
    stores.close();
  });

  it('drops shortcuts and retires autopaths whose executor changed version, when the engine opens', async () => {
    const stores = openStores(world);
    const model = scripted([{ text: readPlan('diary.md', 2) }]);
    const engine = createEngine(engineSettings(world, stores, { wise: model }));
    await engine.runTurn(REQUEST);
    await engine.runTurn(REQUEST);
    expect(stores.autopath.champions()).toHaveLength(1);
    const upgraded = {
      executors: () =>
        world.catalog
          .executors()
          .map((executor) => (executor.name === 'fs_read' ? { ...executor, version: '2.0.0' } : executor)),
    };
    createEngine(engineSettings(world, stores, { wise: model }, { catalog: upgraded }));
    expect(stores.fastpath.list()).toEqual([]);
    expect(stores.autopath.champions()).toEqual([]);
    stores.close();
  });

  it('runs again on its own during a long life, once a day by default', async () => {
    const time = handClock();
    const stores = openStores(world, { clock: time.clock });
    const engine = createEngine(
      engineSettings(
        world,
        stores,
        { wise: scripted([{ text: readPlan('diary.md', 2) }]) },
        { clock: time.clock },
      ),
    );
    await engine.runTurn(REQUEST);
    time.advance(20 * DAY);
    await engine.runTurn('what time is it?');
    expect(stores.fastpath.list()).toHaveLength(1);
    time.advance(11 * DAY);
    await engine.runTurn('what time is it?');
    expect(stores.fastpath.list()).toEqual([]);
    stores.close();
  });

  it('is called on a timer by scheduleMaintenance, which stops when told', async () => {
    vi.useFakeTimers();
    try {
      const maintain = vi.fn(async () => undefined);
      const stop = scheduleMaintenance({ maintain }, { everyMs: 60_000 });
      await vi.advanceTimersByTimeAsync(180_000);
      expect(maintain).toHaveBeenCalledTimes(3);
      stop();
      await vi.advanceTimersByTimeAsync(180_000);
      expect(maintain).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('re-embeds shortcuts another embedder made before the first turn', async () => {
    const stores = openStores(world);
    const model = scripted([{ text: readPlan('diary.md', 2) }]);
    const old = { ...testEmbedder(64), id: 'old-embedder' };
    await createEngine(engineSettings(world, stores, { wise: model }, { embedder: old })).runTurn(REQUEST);
    expect(stores.fastpath.list()[0]?.embedderId).toBe('old-embedder');
    const engine = createEngine(engineSettings(world, stores, { wise: model }));
    const again = await engine.runTurn(`please ${REQUEST}`);
    expect(stores.fastpath.list().map((entry) => [entry.embedderId, entry.vector?.length])).toEqual([
      ['test-hash', 512],
    ]);
    expect(again).toMatchObject({ layer: 'fastpath', modelCalls: 0 });
    stores.close();
  });
});

describe('the calibrated recognizer in L0 and L1', () => {
  it('fits a rule per embedder id, keeps it beside the vectors, and reads it back when an engine opens', async () => {
    const stores = openStores(world);
    const embedder = testEmbedder();
    const remembered = [
      ...[
        'read the last lines of diary.md',
        'show the last lines of diary.md',
        'print the last lines of diary.md',
      ],
      ...[
        'give me the last lines of diary.md',
        'tell me the last lines of diary.md',
        'the last lines of diary.md',
      ],
    ].map((request) => ({ request, plan: 'tail' }));
    const listing = [
      'list the files in the notes folder',
      'list all the files in the notes folder',
      'list the files inside the notes folder',
      'show the files in the notes folder',
      'list every file in the notes folder',
      'list the files of the notes folder',
    ].map((request) => ({ request, plan: 'list' }));
    for (const { request, plan } of [...remembered, ...listing]) {
      const [vector] = await embedder.embed([normalizeRequest(request)]);
      stores.fastpath.save({
        fingerprint: request,
        request,
        template: { plan },
        slots: [],
        tools: [],
        vector,
        planHash: plan,
        qualifiers: [],
        embedderId: 'test-hash',
      });
    }
    const settings = engineSettings(world, stores, { wise: scripted([]) }, { maintenanceEveryMs: false });
    const engine = createEngine(settings);
    const report = await engine.maintain({ forceCalibration: true });
    expect(report.calibrated.fastpath).toMatchObject({
      embedderId: 'test-hash',
      examples: 12,
      bounded: true,
    });
    const stored = stores.fastpath.calibrations.get('test-hash')!;
    expect(stored.correctReuse).toBeGreaterThan(0);
    expect(stored.rule.threshold).toBeGreaterThanOrEqual(0.8);
    expect(stored.rule.threshold).toBeLessThan(1);

    expect(createEngineParts(settings).recognition.rule('fastpath')).toEqual(stored.rule);
    const other = createEngineParts({ ...settings, embedder: { ...embedder, id: 'another' } });
    expect(other.recognition.rule('fastpath')).toEqual({ threshold: 0.8, margin: 0.02, mix: 1 });
    stores.close();
  });

  it('keeps the starting rule when memory is too small to calibrate', async () => {
    const stores = openStores(world);
    const engine = createEngine(
      engineSettings(world, stores, { wise: scripted([{ text: readPlan('diary.md', 2) }]) }),
    );
    await engine.runTurn(REQUEST);
    expect((await engine.maintain({ forceCalibration: true })).calibrated).toEqual({});
    expect(stores.fastpath.calibrations.get('test-hash')).toBeUndefined();
    expect((await engine.runTurn(`please ${REQUEST}`)).layer).toBe('fastpath');
    stores.close();
  });

  it('serves by meaning only what the stored rule allows', async () => {
    const stores = openStores(world);
    const model = scripted([{ text: readPlan('diary.md', 2) }, { text: readPlan('diary.md', 2) }]);
    const settings = engineSettings(world, stores, { wise: model });
    await createEngine(settings).runTurn(REQUEST);
    stores.fastpath.calibrations.save('test-hash', {
      rule: { threshold: 0.995, margin: 0.02, mix: 1 },
      inScope: 300,
      outOfScope: 100,
      correctReuse: 0.5,
      wrongReuse: 0,
      misses: 0.5,
      falseHits: 0,
      feasible: true,
      bounded: false,
    });
    const paraphrase = await createEngine(settings).runTurn(`please ${REQUEST}`);
    expect(paraphrase.layer).toBe('engine');
    expect(paraphrase.passes?.find((passed) => passed.layer === 'fastpath')?.reason).toMatch(
      /below_threshold/,
    );
    stores.close();
  });
});
