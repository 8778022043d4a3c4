// A reader for the plain TOML Metnos writes in every manifest: one `[table]` or `key = value`
// per line, where a value is a basic string without escapes, an integer, a boolean, a UTC
// date-time or a one-line array of such strings. What it returns is what smol-toml returns for
// the same text (null-prototype tables, the same TomlDate); anything outside that subset
// returns undefined and smol-toml reads it. It allocates a fraction of what a general parser
// does, which a fresh process loading a large catalog pays for in garbage collection.
// Shared by src/manifest.ts and the catalog benchmark's floor; `smol-toml` is its one import.
import { TomlDate } from 'smol-toml';

/** What a basic string may hold here: no escapes, quotes or control characters. */
const CHARS = String.raw`[^"\\\x00-\x08\x0a-\x1f\x7f]*`;
const STRING = `"${CHARS}"`;
/**
 * One line: a table header or a key and its value, then an optional comment. The groups:
 * 1 the header's dotted name, 2 the key, 3 a string's content, 4 an integer, 5 a boolean,
 * 6 a date-time, 7 an array of strings, 8 the line's end ('' at the end of the text).
 */
const LINE = new RegExp(
  String.raw`[ \t]*(?:\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\]|([A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:` +
    `"(${CHARS})"|` +
    `(0|-?[1-9][0-9]{0,14})|(true|false)|` +
    String.raw`(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)|` +
    String.raw`(\[[ \t]*(?:${STRING}(?:[ \t]*,[ \t]*${STRING})*[ \t]*)?\])))?` +
    String.raw`[ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?(\r?\n|$)`,
  'y',
);
const ARRAY_ITEM = new RegExp(STRING, 'g');

/**
 * The tables and values of `text` when it is plain TOML as described above, else undefined
 * (never "invalid": the caller then asks smol-toml, which decides and explains).
 *
 * @example
 * readPlainToml('[executor]\nname = "fs_read"\n'); // { executor: { name: 'fs_read' } }
 */
export function readPlainToml(text) {
  const root = Object.create(null);
  /** The tables the headers made, so none is made twice and no value is used as one. */
  const tables = new Set();
  let table = root;
  LINE.lastIndex = 0;
  for (let more = true; more; ) {
    // one line from where the last ended, with its end: a LF, a CR right before one, or the text's end
    const match = LINE.exec(text);
    if (!match) return undefined;
    more = match[8] !== '';
    const header = match[1];
    if (header !== undefined) {
      let parent = root;
      const names = header.split('.');
      for (let index = 0; index < names.length; index++) {
        const name = names[index];
        const existing = parent[name];
        if (!Object.hasOwn(parent, name)) {
          const created = Object.create(null);
          parent[name] = created;
          tables.add(created);
          parent = created;
        } else if (index < names.length - 1 && tables.has(existing)) {
          parent = existing;
        } else {
          // a table named again, or a value used as a table: smol-toml decides
          return undefined;
        }
      }
      table = parent;
      continue;
    }
    const key = match[2];
    if (key === undefined) continue;
    if (Object.hasOwn(table, key)) return undefined;
    // indexed, not destructured: this runs for every line of every manifest of a catalog
    let value = match[3];
    if (value === undefined) {
      if (match[4] !== undefined) value = Number(match[4]);
      else if (match[5] !== undefined) value = match[5] === 'true';
      else if (match[6] !== undefined) {
        const date = new TomlDate(match[6]);
        if (!date.isValid()) return undefined;
        value = date;
      } else value = (match[7].match(ARRAY_ITEM) ?? []).map((item) => item.slice(1, -1));
    }
    table[key] = value;
  }
  return root;
}
