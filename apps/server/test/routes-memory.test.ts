import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { createGapLog } from '@metnos/planner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefusal, scratch, serveApi } from './routes-helpers.ts';

let api: Awaited<ReturnType<typeof serveApi>>;
let stores: {
  fastpath: ReturnType<typeof createFastpathStore>;
  autopath: ReturnType<typeof createAutopathStore>;
  gaps: ReturnType<typeof createGapLog>;
};
const SECRET = 'SECRET-ARGUMENT-VALUE';
const longRequest = `send the report to ada@example.org ${'and more '.repeat(20)}`;
let fastpathIds: string[] = [];
let championId: string;

beforeAll(async () => {
  const root = await scratch('routes-memory');
  const fastpath = createFastpathStore({ path: join(root, 'fastpath.sqlite') });
  const autopath = createAutopathStore({ path: join(root, 'autopath.sqlite') });
  const gaps = createGapLog({ path: join(root, 'gaps.sqlite') });
  stores = { fastpath, autopath, gaps };
  const tools = [{ name: 'fs_read', version: '1.0.0' }];
  fastpathIds = ['one', 'two', 'three'].map(
    (word) =>
      fastpath.save({
        fingerprint: `read ${word}`,
        request: word === 'three' ? longRequest : `read ${word}`,
        template: { steps: [{ tool: 'fs_read', args: { path: SECRET } }] },
        slots: [],
        tools,
        pinned: { path: SECRET },
      }).id,
  );
  const cluster = autopath.assignCluster(Float32Array.from([1, 0]), 'e');
  for (let turn = 0; turn < 2; turn++)
    autopath.recordSuccess({
      clusterId: cluster.id,
      intentHash: 'read-file',
      planHash: 'plan-a',
      template: { steps: [{ tool: 'fs_read', args: { path: SECRET } }] },
      slots: [],
      tools,
      latencyMs: 5,
      pinned: { path: SECRET },
    });
  championId = autopath.list()[0]!.id;
  autopath.recordFailure({ intentHash: 'read-file', planHash: 'plan-b', reason: `no ${SECRET}` });
  autopath.recordFailure({ intentHash: 'read-file', planHash: 'plan-b', reason: `no ${SECRET}` });
  for (let turn = 1; turn <= 7; turn++)
    autopath.observe({
      turnId: `turn-${turn}`,
      request: longRequest,
      plan: { steps: [{ tool: 'fs_read', args: { path: SECRET } }] },
      layer: 'engine',
      latencyMs: 12.4,
      outcome: 'success',
    });
  gaps.record({ cause: 'no_capability', signature: 'send mail', example: longRequest, detail: SECRET });
  api = await serveApi({ memory: { fastpath, autopath, gaps } });
});

afterAll(async () => {
  await api?.server.close();
  stores?.fastpath.close();
  stores?.autopath.close();
  stores?.gaps.close();
});

const json = async (response: Response) => {
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
};

describe('the memory routes', () => {
  it('answer nothing without the bearer token', async () => {
    for (const path of ['fastpaths', 'autopaths', 'anti', 'observations', 'gaps'])
      await expectRefusal(await api.call(`/api/memory/${path}`, {}, 'x'.repeat(43)), 401, 'unauthorized');
    await expectRefusal(
      await api.call(`/api/memory/fastpaths/${fastpathIds[0]}`, { method: 'DELETE' }, 'nope'),
      401,
    );
    expect(stores.fastpath.get(fastpathIds[0]!)).toBeDefined();
  });

  it('list what metnos memory list shows, newest first, and never a stored argument value', async () => {
    const texts: string[] = [];
    const fast = await api.call('/api/memory/fastpaths');
    texts.push(await fast.clone().text());
    const fastBody = await json(fast);
    expect(fastBody.total).toBe(3);
    const entries = fastBody.entries as Array<{ id: string; request: string; tools: unknown; uses: number }>;
    expect(entries.map((entry) => entry.id)).toEqual([...fastpathIds].reverse());
    expect(entries[0]!.request).toBe(longRequest.slice(0, 60));
    expect(entries[0]).toMatchObject({ uses: 0, tools: [{ name: 'fs_read', version: '1.0.0' }] });
    expect(Object.keys(entries[0]!).sort()).toEqual([
      'createdAt',
      'id',
      'lastUsedAt',
      'request',
      'tools',
      'uses',
    ]);

    const auto = await api.call('/api/memory/autopaths');
    texts.push(await auto.clone().text());
    const autoBody = await json(auto);
    expect(autoBody.clusters).toEqual([expect.objectContaining({ members: 1, champions: [championId] })]);
    expect(autoBody.autopaths).toEqual([
      expect.objectContaining({ id: championId, status: 'champion', uses: 2, successes: 2 }),
    ]);

    const anti = await api.call('/api/memory/anti');
    texts.push(await anti.clone().text());
    expect((await json(anti)).entries).toEqual([
      { intentHash: 'read-file', planHash: 'plan-b', failures: 2, expiresAt: expect.any(String) },
    ]);

    const observations = await api.call('/api/memory/observations?limit=3');
    texts.push(await observations.clone().text());
    const rows = (await json(observations)).entries as Array<{ turnId: string; request: string }>;
    expect(rows.map((row) => row.turnId)).toEqual(['turn-7', 'turn-6', 'turn-5']);
    expect(rows[0]!.request).toHaveLength(60);

    const gaps = await api.call('/api/memory/gaps');
    texts.push(await gaps.clone().text());
    expect((await json(gaps)).entries).toEqual([
      expect.objectContaining({ cause: 'no_capability', count: 1, example: longRequest.slice(0, 60) }),
    ]);

    for (const text of texts) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toMatch(/"(template|pinned|plan|vector|centroid|detail|reason)"/);
    }
  });

  it('bound every list: limit is 1 to 500, and the query takes no other key, twice, or a prototype', async () => {
    expect(((await json(await api.call('/api/memory/fastpaths?limit=2'))).entries as unknown[]).length).toBe(
      2,
    );
    expect((await json(await api.call('/api/memory/observations?limit=500'))).entries).toHaveLength(7);
    for (const query of [
      'limit=501',
      'limit=0',
      'limit=abc',
      'limit=-1',
      'limit=1e3',
      `limit=${'9'.repeat(300)}`,
      'limit=1&limit=2',
      'other=1',
      '__proto__=1',
      '__proto__[limit]=1',
      'constructor=1',
    ]) {
      for (const path of ['fastpaths', 'autopaths', 'anti', 'observations', 'gaps'])
        await expectRefusal(await api.call(`/api/memory/${path}?${query}`), 400, 'invalid');
    }
    const proto = await expectRefusal(await api.call('/api/memory/fastpaths?__proto__=1'), 400);
    expect(proto.message).toBe('the parameter "__proto__" is refused');
  });

  it('forget one remembered plan or autopath by id; an unknown or hostile id forgets nothing', async () => {
    await expectRefusal(
      await api.call('/api/memory/fastpaths/no-such-id', { method: 'DELETE' }),
      404,
      'not_found',
    );
    await expectRefusal(
      await api.call('/api/memory/autopaths/no-such-id', { method: 'DELETE' }),
      404,
      'not_found',
    );
    for (const id of ['..%2F..%2Fetc', '__proto__%20x', 'x'.repeat(200), '%00'])
      await expectRefusal(
        await api.call(`/api/memory/fastpaths/${id}`, { method: 'DELETE' }),
        400,
        'invalid',
      );
    expect(stores.fastpath.list()).toHaveLength(3);
    expect(stores.autopath.list()).toHaveLength(1);

    const forgot = await api.call(`/api/memory/fastpaths/${fastpathIds[1]}`, { method: 'DELETE' });
    expect(await json(forgot)).toEqual({ forgot: fastpathIds[1] });
    expect(stores.fastpath.get(fastpathIds[1]!)).toBeUndefined();
    expect(stores.fastpath.list()).toHaveLength(2);
    await expectRefusal(await api.call(`/api/memory/fastpaths/${fastpathIds[1]}`, { method: 'DELETE' }), 404);

    expect(await json(await api.call(`/api/memory/autopaths/${championId}`, { method: 'DELETE' }))).toEqual({
      forgot: championId,
    });
    expect(stores.autopath.list()).toEqual([]);
    expect((await json(await api.call('/api/memory/autopaths'))).autopaths).toEqual([]);
  });
});
