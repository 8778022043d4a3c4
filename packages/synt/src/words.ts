/**
 * Words a tool name says nothing with: a wished-for `get_csv_tool` asks for
 * "csv", not for every executor whose affinity says "get".
 */
const GENERIC = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'to',
  'for',
  'from',
  'in',
  'on',
  'by',
  'with',
  'do',
  'get',
  'run',
  'make',
  'tool',
  'executor',
  'helper',
  'util',
  'utils',
  'data',
  'new',
]);

/** "csvSum", "sum-csv_Columns" → their lowercase, accent-folded words. */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** A word with a plural folded away, so "columns" meets "column" and "entries" meets "entry". */
export function fold(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * The words a wished-for tool name asks for: split, folded, generic words
 * dropped.
 *
 * @example
 * wantedWords('get_csv_columns_sum'); // ['csv', 'column', 'sum']
 */
export function wantedWords(name: string): string[] {
  return [
    ...new Set(
      splitWords(name)
        .filter((word) => !GENERIC.has(word))
        .map(fold),
    ),
  ];
}

/** The words an executor answers to: its name's and its affinity keywords', folded. */
export function executorWords(name: string, affinity: readonly string[]): Set<string> {
  return new Set([name, ...affinity].flatMap(splitWords).map(fold));
}
