import { describe, expect, it } from 'vitest';
import { createAutopathStore } from './autopath-store.ts';

const tools = [{ name: 'fs_read', version: '1.0.0' }];

function learn(store: ReturnType<typeof createAutopathStore>, clusterId: string, planHash: string) {
  return store.recordSuccess({
    clusterId,
    intentHash: 'read-file',
    planHash,
    template: { plan: planHash },
    slots: [],
    tools,
    latencyMs: 10,
  });
}

describe('the autopath store, listed and forgotten by hand', () => {
  it('lists clusters without centroids and forgets an autopath by id, crowning the next best', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const cluster = store.assignCluster(Float32Array.from([1, 0]), 'e');
    for (let turn = 0; turn < 3; turn++) learn(store, cluster.id, 'a');
    for (let turn = 0; turn < 3; turn++) learn(store, cluster.id, 'b');
    expect(store.clusters()).toEqual([
      { id: cluster.id, members: 1, embedderId: 'e', createdAt: expect.any(String) },
    ]);
    const champion = store.list().find((entry) => entry.status === 'champion')!;
    expect(store.remove(champion.id)).toBe(true);
    expect(store.get(champion.id)).toBeUndefined();
    expect(store.remove(champion.id)).toBe(false);
    expect(store.list().map((entry) => entry.status)).toEqual(['champion']);
    store.close();
  });

  it('lists the anti-autopaths in force only, and the latest observations first, bounded', () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const store = createAutopathStore({ path: ':memory:', clock: () => now });
    store.recordFailure({ intentHash: 'i', planHash: 'once', reason: 'failed once' });
    store.recordFailure({ intentHash: 'i', planHash: 'twice', reason: 'failed' });
    store.recordFailure({ intentHash: 'i', planHash: 'twice', reason: 'failed again' });
    expect(store.antiAutopaths()).toEqual([
      {
        intentHash: 'i',
        planHash: 'twice',
        reason: 'failed again',
        failures: 2,
        expiresAt: expect.any(String),
      },
    ]);
    for (let turn = 1; turn <= 5; turn++)
      store.observe({ turnId: `t${turn}`, request: 'r', layer: 'engine', latencyMs: 1, outcome: 'success' });
    expect(store.recentObservations(2).map((row) => row.turnId)).toEqual(['t5', 't4']);
    now = new Date('2026-03-01T00:00:00Z');
    expect(store.antiAutopaths()).toEqual([]);
    store.close();
  });
});
