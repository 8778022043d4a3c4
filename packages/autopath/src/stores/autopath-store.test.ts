import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createAutopathStore } from './autopath-store.ts';

const unit = (...values: number[]) => {
  const norm = Math.hypot(...values) || 1;
  return Float32Array.from(values.map((value) => value / norm));
};

const tools = [{ name: 'fs_read', version: '1.0.0' }];

function learn(
  store: ReturnType<typeof createAutopathStore>,
  input: { clusterId: string; planHash: string; qualifiers?: string[]; intentHash?: string },
) {
  return store.recordSuccess({
    intentHash: input.intentHash ?? 'read-file',
    template: { plan: input.planHash },
    slots: [],
    tools,
    latencyMs: 10,
    ...input,
  });
}

describe('the autopath store', () => {
  it('crowns one champion per cluster and qualifier group: "first" never competes with "last"', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const cluster = store.assignCluster(unit(1, 0), 'hash-v1');
    for (let turn = 0; turn < 2; turn++) {
      learn(store, { clusterId: cluster.id, planHash: 'head', qualifiers: ['position:first'] });
      learn(store, { clusterId: cluster.id, planHash: 'tail', qualifiers: ['position:last'] });
    }
    expect(store.champion(cluster.id, ['position:first'])?.planHash).toBe('head');
    expect(store.champion(cluster.id, ['position:last'])?.planHash).toBe('tail');
    expect(store.champion(cluster.id, ['position:first', 'day:today'])).toBeUndefined();
    expect(store.list().filter((entry) => entry.status === 'champion')).toHaveLength(2);
  });

  it('sees the clusters another connection to the same file made after it read its own copy', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'metnos-autopath-')), 'autopath.sqlite');
    const reader = createAutopathStore({ path });
    const writer = createAutopathStore({ path });
    const first = writer.assignCluster(unit(1, 0), 'e');
    expect(reader.nearestCluster(unit(1, 0), 'e')?.id).toBe(first.id);
    const second = writer.assignCluster(unit(0, 1), 'e');
    expect(reader.nearestCluster(unit(0, 1), 'e')?.id).toBe(second.id);
    const joined = writer.assignCluster(unit(0.2, 1), 'e');
    expect(joined).toMatchObject({ id: second.id, created: false });
    expect(reader.assignCluster(unit(0.3, 1), 'e')).toMatchObject({ id: second.id, created: false });
    learn(reader, { clusterId: second.id, planHash: 'list' });
    learn(reader, { clusterId: second.id, planHash: 'list' });
    expect(writer.champions('e').map((entry) => entry.clusterId)).toEqual([second.id]);
    expect(writer.championSimilarities(unit(0, 1), { embedderId: 'e' })[0]?.nearest).toBeGreaterThan(0.9);
    reader.close();
    writer.close();
  });

  it('matches clusters of the embedder asked for only', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const mine = store.assignCluster(unit(1, 0), 'hash-v1');
    expect(store.nearestCluster(unit(1, 0), 'onnx')).toBeUndefined();
    expect(store.nearestCluster(unit(1, 0), 'hash-v1')?.id).toBe(mine.id);
    expect(store.assignCluster(unit(1, 0), 'onnx').created).toBe(true);
  });

  it('scores champions through their cluster centroid, leaving anti-autopaths out', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const near = store.assignCluster(unit(1, 0.1), 'e');
    const far = store.assignCluster(unit(0, 1), 'e');
    const head = learn(store, { clusterId: near.id, planHash: 'head' });
    learn(store, { clusterId: near.id, planHash: 'head' });
    learn(store, { clusterId: far.id, planHash: 'list' });
    learn(store, { clusterId: far.id, planHash: 'list' });
    const seen = store.championSimilarities(unit(1, 0), { embedderId: 'e' });
    expect(seen.map((label) => label.label)[0]).toBe(head.id);
    expect(store.champions('e')).toHaveLength(2);
    expect(store.champions('other')).toEqual([]);
    store.recordFailure({ intentHash: 'read-file', planHash: 'head', reason: 'x' });
    store.recordFailure({ intentHash: 'read-file', planHash: 'head', reason: 'x' });
    expect(
      store.championSimilarities(unit(1, 0), { embedderId: 'e' }).map((label) => label.label),
    ).not.toContain(head.id);
    expect(store.champions('e').map((entry) => entry.id)).not.toContain(head.id);
  });

  it('up promotes a plan seen once; down takes the championship away and two make an anti-autopath', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const cluster = store.assignCluster(unit(1, 0), 'e');
    learn(store, { clusterId: cluster.id, planHash: 'head', qualifiers: [] });
    store.observe({
      turnId: 't1',
      request: 'read the first lines',
      intentHash: 'read-file',
      planHash: 'head',
      layer: 'engine',
      latencyMs: 5,
      outcome: 'success',
    });
    expect(store.champion(cluster.id, [])).toBeUndefined();
    expect(store.feedback('t1', 'up')).toBe(true);
    expect(store.champion(cluster.id, [])?.planHash).toBe('head');

    store.feedback('t1', 'down');
    expect(store.champion(cluster.id, [])).toBeUndefined();
    expect(store.isAnti('read-file', 'head')).toBe(false);

    store.feedback('t1', 'down');
    expect(store.isAnti('read-file', 'head')).toBe(true);
    expect(store.get(store.list()[0]!.id)?.status).toBe('retired');
    store.feedback('t1', 'up');
    expect(store.champion(cluster.id, [])).toBeUndefined();
  });

  it('keeps all of a feedback or none of it: one that fails halfway leaves the store as it was', () => {
    const client = new Database(':memory:');
    const store = createAutopathStore({ db: client });
    const cluster = store.assignCluster(unit(1, 0), 'e');
    learn(store, { clusterId: cluster.id, planHash: 'head', qualifiers: [] });
    learn(store, { clusterId: cluster.id, planHash: 'head', qualifiers: [] });
    store.observe({
      turnId: 't1',
      request: 'read the first lines',
      intentHash: 'read-file',
      planHash: 'head',
      layer: 'engine',
      latencyMs: 5,
      outcome: 'success',
    });
    const before = { rows: store.list(), observations: store.observations('t1') };
    expect(before.rows[0]?.status).toBe('champion');
    // the last write of a down vote (its anti-autopath row) fails, as a kill -9 at that point would stop it
    client.exec(
      "CREATE TRIGGER no_anti BEFORE INSERT ON anti_autopaths BEGIN SELECT RAISE(ABORT, 'stopped here'); END",
    );
    expect(() => store.feedback('t1', 'down')).toThrow('stopped here');
    expect(store.list()).toEqual(before.rows);
    expect(store.observations('t1')).toEqual(before.observations);
    expect(store.champion(cluster.id, [])?.planHash).toBe('head');
    client.exec('DROP TRIGGER no_anti');
    store.feedback('t1', 'down');
    expect(store.champion(cluster.id, [])).toBeUndefined();
    expect(store.observations('t1')).toHaveLength(2);
    store.close();
    client.close();
  });

  it('does not promote a plan the user said down to more often than up, however often it succeeds', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const cluster = store.assignCluster(unit(1, 0), 'e');
    learn(store, { clusterId: cluster.id, planHash: 'tail', qualifiers: [] });
    store.observe({
      turnId: 't2',
      request: 'read the last lines',
      intentHash: 'read-file',
      planHash: 'tail',
      layer: 'engine',
      latencyMs: 5,
      outcome: 'success',
    });
    store.feedback('t2', 'down');
    for (let turn = 0; turn < 3; turn++)
      learn(store, { clusterId: cluster.id, planHash: 'tail', qualifiers: [] });
    expect(store.champion(cluster.id, [])).toBeUndefined();
    store.feedback('t2', 'up');
    expect(store.champion(cluster.id, [])?.planHash).toBe('tail');
  });

  it('retires autopaths whose executors changed version or disappeared', () => {
    const store = createAutopathStore({ path: ':memory:' });
    const cluster = store.assignCluster(unit(1, 0), 'e');
    const kept = learn(store, { clusterId: cluster.id, planHash: 'kept' });
    const stale = store.recordSuccess({
      clusterId: cluster.id,
      intentHash: 'i',
      planHash: 'stale',
      template: {},
      slots: [],
      tools: [{ name: 'fs_read', version: '0.9.0' }],
      latencyMs: 1,
    });
    const gone = store.recordSuccess({
      clusterId: cluster.id,
      intentHash: 'i',
      planHash: 'gone',
      template: {},
      slots: [],
      tools: [{ name: 'web_fetch', version: '1.0.0' }],
      latencyMs: 1,
    });
    const current = new Map([['fs_read', '1.0.0']]);
    expect(store.invalidate((name) => current.get(name)).sort()).toEqual([stale.id, gone.id].sort());
    expect(store.get(kept.id)?.status).not.toBe('retired');
    expect(store.get(stale.id)?.status).toBe('retired');
  });
});
