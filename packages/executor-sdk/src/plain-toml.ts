// A reader for the plain TOML Metnos writes in every manifest: one `[table]` or `key = value`
// per line, where a value is a basic string without escapes, an integer, a boolean, a UTC
// date-time or a one-line array of such strings. What it returns is what smol-toml returns for
// the same text (null-prototype tables, the same TomlDate); anything outside that subset
// returns undefined and smol-toml reads it. It allocates a fraction of what a general parser
// does, which a fresh process loading a large catalog pays for in garbage collection.
import { TomlDate } from 'smol-toml';

type Table = Record<string, unknown>;

/** What a basic string may hold here: no escapes, quotes or control characters. */
const CHARS = String.raw`[^"\\\x00-\x08\x0a-\x1f\x7f]*`;
const STRING = `"${CHARS}"`;
/**
 * One line: a table header or a key and its value, then an optional comment. The groups:
 * 1 the header's dotted name, 2 the key, 3 a string's content, 4 an integer, 5 a boolean,
 * 6 a date-time, 7 an array of strings.
 */
const LINE = new RegExp(
  String.raw`^[ \t]*(?:\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\]|([A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:` +
    `"(${CHARS})"|` +
    String.raw`(0|-?[1-9][0-9]{0,14})|(true|false)|` +
    String.raw`(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)|` +
    String.raw`(\[[ \t]*(?:${STRING}(?:[ \t]*,[ \t]*${STRING})*[ \t]*)?\])))?` +
    String.raw`[ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?$`,
);
const ARRAY_ITEM = new RegExp(STRING, 'g');

/**
 * The tables and values of `text` when it is plain TOML as described above, else undefined
 * (never "invalid": the caller then asks smol-toml, which decides and explains).
 *
 * @example
 * readPlainToml('[executor]\nname = "fs_read"\n'); // { executor: { name: 'fs_read' } }
 */
export function readPlainToml(text: string): Table | undefined {
  const root: Table = Object.create(null);
  /** The tables the headers made, so none is made twice and no value is used as one. */
  const tables = new Set<Table>();
  let table = root;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    // a CR is part of the line end only right before its LF
    const cut = end < text.length && end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
    const match = LINE.exec(text.slice(start, cut));
    start = end + 1;
    if (!match) return undefined;
    const [, header, key, string, integer, boolean, date, array] = match;
    if (header !== undefined) {
      let parent = root;
      const names = header.split('.');
      for (let index = 0; index < names.length; index++) {
        const name = names[index]!;
        const existing = parent[name];
        if (!Object.hasOwn(parent, name)) {
          const created: Table = Object.create(null);
          parent[name] = created;
          tables.add(created);
          parent = created;
        } else if (index < names.length - 1 && tables.has(existing as Table)) {
          parent = existing as Table;
        } else {
          // a table named again, or a value used as a table: smol-toml decides
          return undefined;
        }
      }
      table = parent;
      continue;
    }
    if (key === undefined) continue;
    if (Object.hasOwn(table, key)) return undefined;
    let value: unknown;
    if (string !== undefined) value = string;
    else if (integer !== undefined) value = Number(integer);
    else if (boolean !== undefined) value = boolean === 'true';
    else if (date !== undefined) {
      const parsed = new TomlDate(date);
      if (!parsed.isValid()) return undefined;
      value = parsed;
    } else value = (array!.match(ARRAY_ITEM) ?? []).map((item) => item.slice(1, -1));
    table[key] = value;
  }
  return root;
}
