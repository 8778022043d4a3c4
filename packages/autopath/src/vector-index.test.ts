import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { Embedder } from './embedder.ts';
import { VectorIndexError } from './errors.ts';
import { createHashingEmbedder } from './hashing-embedder.ts';
import { createOnnxEmbedder } from './onnx-embedder.ts';
import { writeTinyModelDir } from './test/onnx-fixture.ts';
import { createVectorIndex } from './vector-index.ts';

const root = mkdtempSync(join(tmpdir(), 'metnos-index-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const requests = [
  { text: 'play some jazz music', label: 'music' },
  { text: 'put on a jazz playlist', label: 'music' },
  { text: 'what is the weather in rome', label: 'weather' },
  { text: 'will it rain in rome tomorrow', label: 'weather' },
  { text: 'set an alarm for seven', label: 'alarm' },
];

let clock = 0;
const settings = {
  now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)),
  newId: (() => {
    let next = 0;
    return () => `entry-${next++}`;
  })(),
};

describe('createVectorIndex', () => {
  it('persists entries in a SQLite file and finds the same neighbours after reopening', async () => {
    const path = join(root, 'memory.sqlite');
    const index = await createVectorIndex({ path }, createHashingEmbedder(), settings);
    const added = await index.add(requests);
    expect(added.map((entry) => entry.label)).toEqual(requests.map((entry) => entry.label));
    const before = await index.search('will it rain tomorrow in rome', 2);
    expect(before[0]!.text).toBe('will it rain in rome tomorrow');
    expect(before[0]!.score).toBeGreaterThan(before[1]!.score);
    index.close();

    const raw = new Database(path, { readonly: true });
    const row = raw
      .prepare('SELECT count(*) AS count, length(vector) AS bytes FROM memory_vectors')
      .get() as { count: number; bytes: number };
    raw.close();
    expect(row).toEqual({ count: 5, bytes: 2048 * 4 });

    const reopened = await createVectorIndex({ path }, createHashingEmbedder());
    expect(reopened.size).toBe(5);
    const after = await reopened.search('will it rain tomorrow in rome', 2);
    expect(after.map((hit) => hit.id)).toEqual(before.map((hit) => hit.id));
    expect(after[0]!.score).toBeCloseTo(before[0]!.score, 5);
    reopened.close();
  });

  it('removes entries from memory and from the file', async () => {
    const path = join(root, 'remove.sqlite');
    const index = await createVectorIndex({ path }, createHashingEmbedder());
    const added = await index.add(requests);
    expect(index.remove([added[2]!.id, 'unknown'])).toBe(1);
    const hits = await index.search('what is the weather in rome', 5);
    expect(hits.map((hit) => hit.id)).not.toContain(added[2]!.id);
    expect(hits).toHaveLength(4);
    index.close();
    const reopened = await createVectorIndex({ path }, createHashingEmbedder());
    expect(
      reopened
        .entries()
        .map((entry) => entry.id)
        .sort(),
    ).toEqual(
      added
        .filter((_, position) => position !== 2)
        .map((entry) => entry.id)
        .sort(),
    );
    reopened.close();
  });

  it('gives each label its nearest entry and its centroid, leaving excluded entries out', async () => {
    const index = await createVectorIndex({ path: ':memory:' }, createHashingEmbedder());
    const added = await index.add(requests);
    const [query] = await index.embed(['play some jazz music']);
    const [music] = index.labelSimilarities(query!);
    expect(music).toMatchObject({ label: 'music', nearestId: added[0]!.id, count: 2 });
    expect(music!.nearest).toBeCloseTo(1, 5);
    expect(music!.centroid).toBeLessThan(music!.nearest);
    const [withoutSelf] = index.labelSimilarities(query!, { excludeIds: new Set([added[0]!.id]) });
    expect(withoutSelf).toMatchObject({ label: 'music', nearestId: added[1]!.id, count: 1 });
    expect(withoutSelf!.centroid).toBeCloseTo(withoutSelf!.nearest, 5);
    index.close();
  });

  it('keeps spaces apart in one database opened by the caller', async () => {
    const db = new Database(join(root, 'shared.sqlite'));
    const fastpath = await createVectorIndex({ db }, createHashingEmbedder(), { space: 'fastpath' });
    const autopath = await createVectorIndex({ db }, createHashingEmbedder(), { space: 'autopath' });
    await fastpath.add(requests.slice(0, 2));
    await autopath.add(requests.slice(2));
    expect([fastpath.size, autopath.size]).toEqual([2, 3]);
    fastpath.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('re-embeds stored texts when opened with another embedder, and refuses vectors of the wrong size', async () => {
    const path = join(root, 'switch.sqlite');
    const first = await createVectorIndex({ path }, createHashingEmbedder({ dimensions: 256 }));
    await first.add(requests);
    first.close();
    const modelDir = writeTinyModelDir(join(root, 'model'), {
      vectors: {
        play: [1, 0, 0],
        jazz: [0.9, 0.1, 0],
        music: [0.8, 0.2, 0],
        rain: [0, 1, 0],
        weather: [0, 0.9, 0.1],
        alarm: [0, 0, 1],
      },
    });
    const onnx: Embedder = await createOnnxEmbedder({ modelDir });
    const second = await createVectorIndex({ path }, onnx);
    expect(second.size).toBe(5);
    const [hit] = await second.search('jazz', 1);
    expect(hit!.label).toBe('music');
    const raw = new Database(path, { readonly: true });
    const ids = raw.prepare('SELECT DISTINCT embedder_id AS id FROM memory_vectors').all();
    raw.close();
    expect(ids).toEqual([{ id: onnx.id }]);
    const error = (() => {
      try {
        second.searchVector(new Float32Array(7));
      } catch (caught) {
        return caught;
      }
    })();
    expect(VectorIndexError.isInstance(error) && error.code).toBe('dimension_mismatch');
    second.close();
  });

  it('scores dense and sparse stores alike', async () => {
    const dense: Embedder = {
      id: 'dense-test',
      dimensions: 3,
      async embed(texts) {
        return texts.map((text) => {
          const vector = Float32Array.of(text.length % 3, 1, text.includes('jazz') ? 2 : 0);
          const length = Math.hypot(...vector);
          return vector.map((value) => value / length);
        });
      },
    };
    const index = await createVectorIndex({ path: ':memory:' }, dense);
    await index.add(requests);
    const hits = await index.search('jazz', 5);
    const [query] = await dense.embed(['jazz']);
    for (const hit of hits) {
      const [vector] = await dense.embed([hit.text]);
      expect(hit.score).toBeCloseTo(
        vector!.reduce((sum, value, position) => sum + value * query![position]!, 0),
        5,
      );
    }
    expect(hits.map((hit) => hit.score)).toEqual(
      [...hits.map((hit) => hit.score)].sort((left, right) => right - left),
    );
    index.remove([hits[0]!.id]);
    expect((await index.search('jazz', 5)).map((hit) => hit.id)).toEqual(hits.slice(1).map((hit) => hit.id));
    index.close();
  });
});
