import { describe, expect, it } from 'vitest';
import { createBm25Ranker } from './bm25.ts';

const documents = [
  ['weather', 'forecast', 'city', 'tool'],
  ['alarm', 'timer', 'device', 'tool'],
  ['news', 'stories', 'topic', 'tool'],
  ['weather', 'news', 'tool', 'tool', 'tool', 'tool', 'tool', 'tool'],
];

describe('createBm25Ranker', () => {
  it('ranks the document with the rare word first, and a short document above a long one', () => {
    const bm25 = createBm25Ranker(documents, [0, 1, 2, 3]);
    expect(bm25.top(['forecast', 'tool'], 1).map((hit) => hit.document)).toEqual([0]);
    const [short, long] = bm25.top(['weather'], 2);
    expect([short!.document, long!.document]).toEqual([0, 3]);
    expect(short!.score).toBeGreaterThan(long!.score);
  });

  it('leaves out documents sharing no word, breaks ties by the order given, and keeps no state between queries', () => {
    const bm25 = createBm25Ranker(documents, [3, 2, 1, 0]);
    expect(bm25.top(['pizza'], 5)).toEqual([]);
    expect(bm25.top(['alarm', 'news'], 5).map((hit) => hit.document)).toEqual([1, 2, 3]);
    const tied = bm25.top(['tool'], 4).filter((hit) => hit.document !== 3);
    expect(tied.map((hit) => hit.document)).toEqual([2, 1, 0]);
    expect(new Set(tied.map((hit) => hit.score)).size).toBe(1);
  });
});
