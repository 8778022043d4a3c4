import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';

/** Deeper than this, arguments are refused rather than half-read: the SDK's one limit. */
export const MAX_DEPTH = MAX_JSON_DEPTH;

/** More strings than this (keys and values together), arguments are refused rather than half-read. */
export const MAX_STRINGS = 100_000;

/** One string found in the arguments. */
export interface ArgumentString {
  text: string;
  /** A key of an object, or a value. */
  role: 'key' | 'value';
  /** The top-level key it sits under (`''` when the arguments are not an object). Safe to name in reasons. */
  field: string;
}

/** Everything the guard and the judge read from a call's arguments. */
export interface ArgumentInventory {
  strings: ArgumentString[];
  /** Arrays whose items are all strings, as argv-like word lists. */
  wordLists: { words: string[]; field: string }[];
  /**
   * The string values of the whole tree, in order, with command-like keys
   * (`command`, `cmd`, `program`, …) first inside each object: one text for
   * commands split over several fields.
   */
  joined: string;
  /** The arguments were not read in full: nested deeper than {@link MAX_DEPTH}, or too large. */
  truncated: boolean;
}

const COMMAND_KEYS = new Set([
  'command',
  'cmd',
  'program',
  'executable',
  'exe',
  'bin',
  'binary',
  'shell',
  'script',
]);

/**
 * Reads every key and string value of `args`, at any depth. Cycles are
 * visited once; numbers and booleans are ignored (they cannot name a path).
 *
 * @example
 * inventory({ path: '~/notes.md', tags: ['a'] }).strings.map((entry) => entry.text); // ['path', '~/notes.md', 'tags', 'a']
 */
export function inventory(args: unknown): ArgumentInventory {
  // Checked without recursion first, so the walk below is at most MAX_DEPTH calls deep.
  if (exceedsJsonDepth(args, MAX_DEPTH)) return { strings: [], wordLists: [], joined: '', truncated: true };
  const strings: ArgumentString[] = [];
  const wordLists: ArgumentInventory['wordLists'] = [];
  const joinedParts: string[] = [];
  const seen = new WeakSet<object>();
  let truncated = false;

  const visit = (value: unknown, field: string | undefined): void => {
    if (truncated) return;
    if (strings.length > MAX_STRINGS) {
      truncated = true;
      return;
    }
    if (typeof value === 'string') {
      strings.push({ text: value, role: 'value', field: field ?? '' });
      joinedParts.push(value);
      return;
    }
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      if (value.length > 0 && value.every((item) => typeof item === 'string'))
        wordLists.push({ words: value, field: field ?? '' });
      for (const item of value) visit(item, field);
      return;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    const ordered = [
      ...entries.filter(([key]) => COMMAND_KEYS.has(key.toLowerCase())),
      ...entries.filter(([key]) => !COMMAND_KEYS.has(key.toLowerCase())),
    ];
    for (const [key, item] of ordered) {
      const owner = field ?? key;
      strings.push({ text: key, role: 'key', field: owner });
      visit(item, owner);
    }
  };

  visit(args, undefined);
  return { strings, wordLists, joined: joinedParts.join(' '), truncated };
}

/** The top-level keys of `args`: the only part of the arguments the log records. */
export function topLevelKeys(args: unknown): string[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  return Object.keys(args);
}
