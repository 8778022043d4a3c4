import { MAX_STRINGS } from '../arguments.ts';
import { filePathsIn, numberReadings, numbersIn, samePath } from './text-patterns.ts';

/**
 * Everything a candidate may rest on, read once: the strings (keys and
 * values), the numbers and array lengths of the evidence, plus the request
 * and runtime values. Rules ask it whether a name, number or path is there.
 */
export interface Sources {
  /** Every string, in document order. */
  readonly strings: readonly string[];
  /** The strings lower-cased and joined by new lines, for substring checks. */
  readonly text: string;
  /** Whether `value` appears in some source string (ignoring case). */
  mentions(value: string): boolean;
  /** Whether a written number (`1,234.5`) is a number the sources hold, or the length of one of their lists. */
  hasNumber(token: string): boolean;
  /** Whether a path names a file some source names too; see {@link samePath}. */
  hasPath(path: string): boolean;
}

/** What {@link readValues} found in a tree of values. */
interface ReadValues {
  strings: string[];
  numbers: Set<string>;
  /** Stopped after `MAX_STRINGS` strings. */
  truncated: boolean;
}

/**
 * Reads the strings, numbers and list lengths of values already checked
 * against `MAX_JSON_DEPTH` (so they hold no cycles). Walks with a stack.
 */
function readValues(values: readonly unknown[], options: { keys: boolean } = { keys: true }): ReadValues {
  const strings: string[] = [];
  const numbers = new Set<string>();
  const pending: unknown[] = [...values].reverse();
  while (pending.length > 0) {
    if (strings.length > MAX_STRINGS) return { strings, numbers, truncated: true };
    const value = pending.pop();
    if (typeof value === 'string') strings.push(value);
    else if (typeof value === 'number' && Number.isFinite(value)) numbers.add(String(value));
    else if (typeof value === 'bigint') numbers.add(value.toString());
    else if (Array.isArray(value)) {
      numbers.add(String(value.length));
      for (let index = value.length - 1; index >= 0; index--) pending.push(value[index]);
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).reverse();
      for (const [key, item] of entries) {
        pending.push(item);
        if (options.keys) pending.push(key);
      }
    }
  }
  return { strings, numbers, truncated: false };
}

/**
 * The strings of values already checked against `MAX_JSON_DEPTH`, in
 * document order; object keys too unless `keys` is false.
 *
 * @example
 * stringsIn([{ path: 'a.md', lines: ['x'] }]); // ['path', 'a.md', 'lines', 'x']
 */
export function stringsIn(values: readonly unknown[], options: { keys: boolean } = { keys: true }): string[] {
  return readValues(values, options).strings;
}

/** Whether a tree of values holds more strings than the verifier reads. */
export function exceedsStringLimit(values: readonly unknown[]): boolean {
  return readValues(values).truncated;
}

/**
 * Indexes values (evidence arguments and results, the request, runtime
 * values) as {@link Sources}. The values must already be checked against
 * `MAX_JSON_DEPTH`.
 *
 * @example
 * const sources = indexSources([{ entries: [{ name: 'a.md', size: 1234 }] }, 'list my notes']);
 * sources.hasNumber('1,234'); // true
 * sources.hasPath('notes/a.md'); // true
 */
export function indexSources(values: readonly unknown[]): Sources {
  const { strings, numbers } = readValues(values);
  const readings = new Set<string>();
  for (const number of numbers) for (const reading of numberReadings(number)) readings.add(reading);
  const paths: string[] = [];
  for (const text of strings) {
    for (const number of numbersIn(text)) for (const reading of numberReadings(number)) readings.add(reading);
    const trimmed = text.trim();
    if (trimmed && !/\s/.test(trimmed)) paths.push(trimmed);
    paths.push(...filePathsIn(text));
  }
  const lowered = strings.map((text) => text.toLowerCase()).join('\n');
  return {
    strings,
    text: lowered,
    mentions: (value) => value.trim() !== '' && lowered.includes(value.trim().toLowerCase()),
    hasNumber: (token) => numberReadings(token).some((reading) => readings.has(reading)),
    hasPath: (path) => paths.some((source) => samePath(source, path)),
  };
}
