import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../hashing-embedder.ts';
import { labelSimilaritiesOf } from '../label-similarities.ts';
import { createRecognizer } from '../recognizer.ts';
import { createVectorIndex } from '../vector-index.ts';
import { createFastpathStore } from './fastpath-store.ts';

const unit = (...values: number[]) => {
  const vector = Float32Array.from(values);
  const norm = Math.hypot(...values) || 1;
  return vector.map((value) => value / norm);
};

const plan = (name: string) => ({
  template: { steps: [{ tool: 'fs_read', args: { path: '${SLOT:path_1}', mode: name } }] },
  slots: ['path_1'],
  tools: [{ name: 'fs_read', version: '1.0.0' }],
});

describe('the fast-path store', () => {
  it('keeps its in-memory copy as the file has it through save and markUsed', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'metnos-fastpath-')), 'fastpaths.sqlite');
    const store = createFastpathStore({ path });
    const first = store.save({
      fingerprint: 'f1',
      request: 'read a.md',
      ...plan('head'),
      vector: unit(1, 0),
    });
    expect(store.list().map((entry) => entry.id)).toEqual([first.id]);
    const second = store.save({
      fingerprint: 'f2',
      request: 'read b.md',
      ...plan('tail'),
      vector: unit(0, 1),
    });
    store.markUsed(first.id);
    store.markUsed(first.id);
    store.save({ fingerprint: 'f2', request: 'read b.md again', ...plan('tail'), vector: unit(0, 1) });
    const fresh = createFastpathStore({ path });
    expect(store.list()).toEqual(fresh.list());
    expect(store.get(first.id)).toMatchObject({ uses: 2 });
    expect(store.get(second.id)).toMatchObject({ request: 'read b.md again' });
    expect(store.labelSimilarities(unit(1, 0))[0]?.nearestId).toBe(first.id);
    store.markUsed('gone');
    fresh.close();
    store.close();
  });

  it('keeps what a plan was learned with: intent, plan hash, qualifiers, pinned slots, embedder', () => {
    const store = createFastpathStore({ path: ':memory:' });
    const saved = store.save({
      fingerprint: 'f1',
      request: 'read a.md and tell me the first 3 lines',
      ...plan('head'),
      vector: unit(1, 0, 0),
      intentHash: 'intent-read',
      planHash: 'plan-head',
      qualifiers: ['position:first'],
      pinned: { number_1: '3' },
      embedderId: 'hash-v1',
    });
    expect(store.get(saved.id)).toMatchObject({
      intentHash: 'intent-read',
      planHash: 'plan-head',
      qualifiers: ['position:first'],
      pinned: { number_1: '3' },
      embedderId: 'hash-v1',
    });
    const legacy = store.save({ fingerprint: 'f2', request: 'old', ...plan('tail') });
    expect(legacy).toMatchObject({ qualifiers: undefined, pinned: {}, embedderId: undefined });
  });

  it('scores labels only over vectors of the embedder asked for, without the excluded entries', () => {
    const store = createFastpathStore({ path: ':memory:' });
    const head = store.save({
      fingerprint: 'f1',
      request: 'first lines',
      ...plan('head'),
      vector: unit(1, 0.1, 0),
      planHash: 'head',
      embedderId: 'hash-v1',
    });
    store.save({
      fingerprint: 'f2',
      request: 'last lines',
      ...plan('tail'),
      vector: unit(1, 0, 0),
      planHash: 'tail',
      embedderId: 'other',
    });
    const query = unit(1, 0, 0);
    expect(store.labelSimilarities(query, { embedderId: 'hash-v1' }).map((label) => label.label)).toEqual([
      'head',
    ]);
    expect(store.labelSimilarities(query, { embedderId: 'hash-v1', excludeIds: new Set([head.id]) })).toEqual(
      [],
    );
    store.setVectors([{ id: head.id, vector: unit(0, 1, 0) }], 'other');
    expect(store.labelSimilarities(query, { embedderId: 'other' }).map((label) => label.label)).toEqual([
      'tail',
      'head',
    ]);
  });

  it('removes every entry of one plan for one intent, and nothing else', () => {
    const store = createFastpathStore({ path: ':memory:' });
    const one = { ...plan('head'), intentHash: 'i', planHash: 'p' };
    store.save({ fingerprint: 'a', request: 'a', ...one });
    store.save({ fingerprint: 'b', request: 'b', ...one });
    store.save({ fingerprint: 'c', request: 'c', ...one, intentHash: 'other' });
    expect(store.removePlan('i', 'p')).toHaveLength(2);
    expect(store.list().map((entry) => entry.fingerprint)).toEqual(['c']);
  });

  it('keeps one calibration per embedder id in the file, and reads it back after a reopen', async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const path = join(await mkdtemp(join(tmpdir(), 'metnos-calibration-')), 'fastpaths.sqlite');
    const store = createFastpathStore({ path });
    const report = {
      rule: { threshold: 0.7, margin: 0.05, mix: 0.5 },
      inScope: 10,
      outOfScope: 2,
      correctReuse: 0.6,
      wrongReuse: 0,
      misses: 0.4,
      falseHits: 0,
      feasible: true,
      bounded: true,
    };
    store.calibrations.save('hash-v1', report);
    store.calibrations.save('onnx-bge', { ...report, rule: { threshold: 0.85, margin: 0.02, mix: 1 } });
    store.calibrations.save('hash-v1', {
      ...report,
      rule: { threshold: Number.POSITIVE_INFINITY, margin: 0.3, mix: 0.5 },
    });
    store.close();
    const reopened = createFastpathStore({ path });
    expect(reopened.calibrations.get('hash-v1')).toMatchObject({
      rule: { threshold: Number.POSITIVE_INFINITY, margin: 0.3 },
      examples: 12,
      bounded: true,
    });
    expect(reopened.calibrations.get('onnx-bge')?.rule).toEqual({ threshold: 0.85, margin: 0.02, mix: 1 });
    expect(reopened.calibrations.get('nobody')).toBeUndefined();
    reopened.close();
  });
});

describe('labelSimilaritiesOf', () => {
  it('gives the same nearest and centroid scores as the vector index', async () => {
    const embedder = createHashingEmbedder();
    const index = await createVectorIndex({ path: ':memory:' }, embedder, { autoRefit: false });
    const texts = [
      ['read the first lines of the diary', 'head'],
      ['show the beginning of the notes', 'head'],
      ['read the last lines of the diary', 'tail'],
      ['list the files in the folder', 'list'],
    ] as const;
    const added = await index.add(texts.map(([text, label]) => ({ text, label })));
    const vectors = await index.embed(texts.map(([text]) => text));
    const [query] = await index.embed(['read the first lines of my diary']);
    const items = added.map((entry, position) => ({
      id: entry.id,
      label: entry.label!,
      vector: vectors[position]!,
    }));
    const ours = labelSimilaritiesOf(items, query!, { excludeIds: new Set([added[0]!.id]) });
    const theirs = index.labelSimilarities(query!, { excludeIds: new Set([added[0]!.id]) });
    expect(ours.map((label) => label.label)).toEqual(theirs.map((label) => label.label));
    ours.forEach((label, position) => {
      expect(label.nearest).toBeCloseTo(theirs[position]!.nearest, 5);
      expect(label.centroid).toBeCloseTo(theirs[position]!.centroid, 5);
      expect(label.nearestId).toBe(theirs[position]!.nearestId);
    });
    index.close();
  });

  it('feeds a recognizer that starts from a stored calibration and keeps its floor', async () => {
    const items = [
      { id: 'a', label: 'head', vector: unit(1, 0, 0) },
      { id: 'b', label: 'tail', vector: unit(0, 1, 0) },
    ];
    const source = {
      size: items.length,
      entries: () => [],
      embed: async (texts: string[]) => texts.map(() => unit(1, 0.2, 0)),
      labelSimilarities: (vector: Float32Array) => labelSimilaritiesOf(items, vector),
    };
    const strict = createRecognizer({
      index: source,
      rule: { threshold: 0.5, margin: 0.1, mix: 1 },
      calibrated: { threshold: 0.99, margin: 0.1, mix: 1 },
    });
    expect(strict.rule.threshold).toBe(0.99);
    expect(await strict.recognize('x')).toMatchObject({ kind: 'miss', reason: 'below_threshold' });
    const loose = createRecognizer({ index: source, rule: { threshold: 0.5, margin: 0.1, mix: 1 } });
    expect(await loose.recognize('x')).toMatchObject({ kind: 'serve', label: 'head', nearestId: 'a' });
  });
});
