import { describe, expect, it } from 'vitest';
import { createCombinedEmbedder, words } from './embedder.ts';
import { createHashingEmbedder } from './hashing-embedder.ts';
import { createWordVectorEmbedder } from './word-vector-embedder.ts';

const dot = (left: Float32Array, right: Float32Array) =>
  left.reduce((sum, value, index) => sum + value * right[index]!, 0);
const norm = (vector: Float32Array) => Math.sqrt(dot(vector, vector));

describe('createHashingEmbedder', () => {
  it('gives the same unit vector for the same text, on every call and every instance', async () => {
    const [first] = await createHashingEmbedder().embed(['Book a table for two at 8pm']);
    const [again] = await createHashingEmbedder().embed(['Book a table for two at 8pm']);
    expect(first).toHaveLength(2048);
    expect(Array.from(again!)).toEqual(Array.from(first!));
    expect(norm(first!)).toBeCloseTo(1, 5);
  });

  it('puts paraphrases closer than unrelated requests', async () => {
    const embedder = createHashingEmbedder();
    const [booking, rebooking, weather] = await embedder.embed([
      'book a table for two at the italian restaurant',
      'booking a table at an italian restaurant for 2',
      'will it rain in rome tomorrow',
    ]);
    expect(dot(booking!, rebooking!)).toBeGreaterThan(dot(booking!, weather!) + 0.2);
  });

  it('matches inflections through character n-grams', async () => {
    const embedder = createHashingEmbedder({ wordNgrams: 1 });
    const [booked, booking, weather] = await embedder.embed(['booked', 'booking', 'weather']);
    expect(dot(booked!, booking!)).toBeGreaterThan(0.3);
    expect(Math.abs(dot(booked!, weather!))).toBeLessThan(0.2);
  });

  it('after fit, words shared by every label weigh less than words that tell labels apart', async () => {
    const embedder = createHashingEmbedder({ charNgrams: null, wordNgrams: 1 });
    const [queryBefore, politeBefore] = await embedder.embed(['please play jazz', 'please']);
    embedder.fit([
      { text: 'please play jazz', label: 'music' },
      { text: 'please tell the weather', label: 'weather' },
      { text: 'please set an alarm', label: 'alarm' },
    ]);
    const [query, polite, jazz] = await embedder.embed(['please play jazz', 'please', 'jazz']);
    expect(dot(query!, polite!)).toBeLessThan(dot(queryBefore!, politeBefore!) - 0.1);
    expect(dot(query!, jazz!)).toBeGreaterThan(dot(query!, polite!));
  });

  it('embeds an empty or symbol-only text as the zero vector', async () => {
    const [empty] = await createHashingEmbedder().embed(['?!']);
    expect(norm(empty!)).toBe(0);
  });
});

describe('words', () => {
  it('lower-cases and keeps letters and digits of any script', () => {
    expect(words('Réserve 2 places — Zürich!')).toEqual(['réserve', '2', 'places', 'zürich']);
  });
});

describe('createWordVectorEmbedder and createCombinedEmbedder', () => {
  const table = new Map<string, number[]>([
    ['song', [1, 0.1, 0]],
    ['track', [0.95, 0.2, 0]],
    ['rain', [0, 0, 1]],
    ['play', [0.5, 0.5, 0]],
  ]);
  const vectors = () =>
    createWordVectorEmbedder({ name: 'toy', dimensions: 3, lookup: (word) => table.get(word) });

  it('knows synonyms the lexical embedder cannot see', async () => {
    const [song, track, rain] = await vectors().embed(['play a song', 'play a track', 'rain']);
    expect(dot(song!, track!)).toBeGreaterThan(0.95);
    expect(dot(song!, rain!)).toBeLessThan(0.1);
    expect(norm(song!)).toBeCloseTo(1, 5);
  });

  it('concatenates weighted parts into one unit vector', async () => {
    const combined = createCombinedEmbedder({
      parts: [{ embedder: createHashingEmbedder({ dimensions: 64 }) }, { embedder: vectors(), weight: 0.5 }],
    });
    const [vector] = await combined.embed(['play a song']);
    expect(combined.dimensions).toBe(67);
    expect(vector).toHaveLength(67);
    expect(norm(vector!)).toBeCloseTo(1, 5);
    combined.fit([{ text: 'play a song', label: 'music' }]);
  });
});
