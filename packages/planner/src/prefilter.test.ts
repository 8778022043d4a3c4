import { describe, expect, it } from 'vitest';
import { type PrefilterEntry, prefilter, tokenize } from './prefilter.ts';

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
const names = (candidates: { entry: PrefilterEntry }[]) =>
  candidates.map((candidate) => candidate.entry.name);
/** Entries that only fill the catalog: distinct words that no request below uses. */
const filler = (count: number, summary = 'Keeps a ledger of parcels.') =>
  Array.from({ length: count }, (_, index) => entry(`filler_${index}`, [], summary));

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
  it('puts the executor whose affinity matches first', () => {
    const result = prefilter('fetch https://httpbin.org/get', catalog);
    expect(result.candidates[0]!.entry.name).toBe('web_fetch');
    expect(result.candidates[0]!.score).toBeGreaterThan(0);
  });

  it('sends few candidates when the winner is clear and drops zero scores', () => {
    const result = prefilter('leggi il file diario', catalog);
    expect(result.confidence).toBe(1);
    expect(result.k).toBe(5);
    expect(names(result.candidates)).toEqual(['fs_read']);
  });

  it('sends up to k_max candidates when nothing stands out', () => {
    const result = prefilter('what is the meaning of life', catalog);
    expect(result.confidence).toBe(0);
    expect(result.k).toBe(40);
    expect(result.candidates).toHaveLength(40);
    expect(result.candidates.every((candidate) => candidate.score === 0)).toBe(true);
  });

  it('fills K past the matches with the other entries in name order when the winner is not clear', () => {
    const result = prefilter('page workspace', catalog);
    expect(result.confidence).toBeLessThan(0.5);
    expect(names(result.candidates).slice(0, 4)).toEqual(['fs_read', 'web_fetch', 'other_0', 'other_1']);
    expect(result.candidates[2]!.score).toBe(0);
  });

  it('ignores stop words', () => {
    expect(prefilter('the and of', catalog).candidates[0]!.score).toBe(0);
  });

  it('finds a word of the summary', () => {
    const result = prefilter('workspace', catalog);
    expect(result.candidates[0]!.entry.name).toBe('fs_read');
    expect(result.candidates[0]!.score).toBeGreaterThan(0);
  });

  it('weights a word by how rare it is in the catalog: a rare word outranks a common one', () => {
    // "convert" is in 20 summaries, "currency" in one; each of the first two entries matches one of them.
    const entries = [
      entry('a_units', [], 'Convert units.'),
      entry('b_money', [], 'Currency rates.'),
      ...filler(20, 'Convert parcels.'),
    ];
    expect(names(prefilter('convert currency', entries).candidates).slice(0, 2)).toEqual([
      'b_money',
      'a_units',
    ]);
  });

  it('counts an affinity keyword above the same word in a summary', () => {
    const entries = [
      entry('a_mentions', [], 'Weather maps.'),
      entry('b_keyword', ['weather'], 'Maps forecasts.'),
      ...filler(10),
    ];
    expect(names(prefilter('weather', entries).candidates)[0]).toBe('b_keyword');
  });

  it('prefers the shorter summary when both hold the word once (length normalisation)', () => {
    const entries = [
      entry(
        'a_long',
        [],
        'Translate text between many languages, keeping glossaries, tone, formality and layout of documents.',
      ),
      entry('b_short', [], 'Translate text.'),
      ...filler(10),
    ];
    expect(names(prefilter('translate', entries).candidates).slice(0, 2)).toEqual(['b_short', 'a_long']);
  });

  it('counts a word repeated in a summary more, with saturation', () => {
    const entries = [
      entry('a_once', [], 'Photo album of trips.'),
      entry('b_twice', [], 'Photo: crop the photo.'),
      ...filler(10),
    ];
    const [first, second] = prefilter('photo', entries).candidates;
    expect(first!.entry.name).toBe('b_twice');
    expect(first!.score).toBeLessThan(2 * second!.score);
  });

  it('folds plurals and common English suffixes on both sides', () => {
    const entries = [
      entry('a_other', [], 'Tracks parcels.'),
      entry('b_recipes', [], 'Suggests a recipe for dinner.'),
      entry('c_travel', [], 'Book a flight and compare hotels.'),
      entry('d_movies', [], 'Reviews of every movie.'),
      ...filler(10),
    ];
    expect(names(prefilter('recipes', entries).candidates)[0]).toBe('b_recipes');
    expect(names(prefilter('booking flights', entries).candidates)[0]).toBe('c_travel');
    expect(names(prefilter('movies', entries).candidates)[0]).toBe('d_movies');
    expect(names(prefilter('hotel', entries).candidates)[0]).toBe('c_travel');
  });

  it('reads the words of a camelCase or snake_case name', () => {
    const entries = [entry('PDFReader', [], 'Opens documents.'), entry('fsWrite', [], ''), ...filler(10)];
    expect(names(prefilter('read a pdf', entries).candidates)[0]).toBe('PDFReader');
    expect(names(prefilter('write it', entries).candidates)[0]).toBe('fsWrite');
  });

  it("recomputes the catalog's statistics when the catalog changes, even in the same array", () => {
    const entries = [entry('a_units', [], 'Convert units.'), entry('b_money', [], 'Currency rates.')];
    entries.push(...filler(5));
    const before = prefilter('convert currency', entries);
    expect(before.candidates[0]!.score).toBe(before.candidates[1]!.score);
    // "currency" becomes common: "convert" is now the rare word.
    entries.push(...filler(20, 'Currency parcels.'));
    const after = prefilter('convert currency', entries);
    expect(names(after.candidates)[0]).toBe('a_units');
    expect(after.candidates[0]!.score).toBeGreaterThan(after.candidates[1]!.score);
    expect(names(prefilter('convert currency', [...entries].reverse()).candidates)[0]).toBe('a_units');
  });
});

describe('the history boost', () => {
  const follows = [{ dst: 'other_7', weight: 0.9 }];
  const history = (passagesFrom: (src: string) => { dst: string; weight: number }[]) => ({
    previous: 'web_fetch',
    passagesFrom,
  });

  it('ranks what usually follows the previous step higher, even with no word in common', () => {
    const request = 'fetch the page and store it';
    expect(names(prefilter(request, catalog, { kMin: 3, kMax: 3 }).candidates)).not.toContain('other_7');
    const boosted = prefilter(request, catalog, {
      kMin: 3,
      kMax: 3,
      history: history((src) => (src === 'web_fetch' ? follows : [])),
    });
    expect(names(boosted.candidates).slice(0, 2)).toEqual(['web_fetch', 'other_7']);
  });

  it('changes nothing when the history cannot be read, or names executors not in the catalog', () => {
    const request = 'fetch the page';
    const plain = names(prefilter(request, catalog).candidates);
    const failing = history(() => {
      throw new Error('store unreadable');
    });
    expect(names(prefilter(request, catalog, { history: failing }).candidates)).toEqual(plain);
    const unknown = history(() => [{ dst: 'gone', weight: 1 }]);
    expect(names(prefilter(request, catalog, { history: unknown }).candidates)).toEqual(plain);
  });
});
