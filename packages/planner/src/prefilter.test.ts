import { describe, expect, it } from 'vitest';
import { prefilter, tokenize } from './prefilter.ts';

const entry = (name: string, affinity: string[], summary = '') => ({ name, affinity, summary });
const catalog = [
  entry(
    'web_fetch',
    ['web', 'http', 'url', 'fetch', 'scarica', 'pagina'],
    'Fetch a web page and return it as text.',
  ),
  entry('fs_read', ['fs', 'read', 'leggi', 'file'], 'Read a file from the workspace.'),
  ...Array.from({ length: 50 }, (_, index) =>
    entry(`other_${index}`, [`thing${index}`], 'Does something else.'),
  ),
];

describe('tokenize', () => {
  it('lowercases, folds accents and keeps alphanumeric words', () => {
    expect(tokenize('Leggi il FILE già, per favore: ~/note/diario.md')).toEqual([
      'leggi',
      'il',
      'file',
      'gia',
      'per',
      'favore',
      'note',
      'diario',
      'md',
    ]);
  });
});

describe('prefilter', () => {
  it('puts the executor whose affinity matches first, affinity counting double', () => {
    const result = prefilter('fetch https://httpbin.org/get', catalog);
    expect(result.candidates[0]).toMatchObject({ entry: { name: 'web_fetch' }, score: 2 });
  });

  it('sends few candidates when the winner is clear and drops zero scores', () => {
    const result = prefilter('leggi il file diario', catalog);
    expect(result.confidence).toBe(1);
    expect(result.k).toBe(5);
    expect(result.candidates.map((candidate) => candidate.entry.name)).toEqual(['fs_read']);
  });

  it('sends up to k_max candidates when nothing stands out', () => {
    const result = prefilter('what is the meaning of life', catalog);
    expect(result.confidence).toBe(0);
    expect(result.k).toBe(40);
    expect(result.candidates).toHaveLength(40);
  });

  it('ignores stop words', () => {
    expect(prefilter('the and of', catalog).candidates[0]!.score).toBe(0);
  });

  it('counts a summary match once', () => {
    const result = prefilter('workspace', catalog);
    expect(result.candidates[0]).toMatchObject({ entry: { name: 'fs_read' }, score: 1 });
  });
});
