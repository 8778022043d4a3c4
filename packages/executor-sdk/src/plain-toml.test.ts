import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, TomlDate } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { readPlainToml } from '../runtime/plain-toml.mjs';
import { seededRandom } from './__fixtures__/index.ts';
import { parseManifest } from './manifest.ts';
import { manifestShape } from './manifest-shape.ts';
import { scaffoldManifest } from './scaffold.ts';

const EXECUTORS = join(import.meta.dirname, '..', '..', '..', 'executors');

/** The seed executors' manifests, by folder name. */
const realManifests: Array<{ name: string; file: string; text: string }> = readdirSync(EXECUTORS)
  .map((name) => ({ name, file: join(EXECUTORS, name, 'manifest.toml') }))
  .filter(({ file }) => existsSync(file))
  .map(({ name, file }) => ({ name, file, text: readFileSync(file, 'utf8') }));

const scaffolded = [
  scaffoldManifest('greet', 'Greets someone.', '2026-04-25T08:12:00Z'),
  scaffoldManifest(
    'fs_read_tail',
    'Reads the end of a file: the last lines, # and all.',
    '2026-11-22T00:05:00Z',
  ),
  scaffoldManifest('notes_find', 'Finds notes by "words" and tags.', '2026-01-31T23:59:59.5Z'),
];

type Random = ReturnType<typeof seededRandom>;

function show(value: unknown): string {
  if (value instanceof Date) return `${value.constructor.name}(${String(value)})`;
  if (typeof value === 'string') return JSON.stringify(value);
  return `${typeof value} ${String(value)}`;
}

/**
 * Where `actual` differs from what smol-toml returned, or undefined when they are the same: the
 * same own keys in the same order with the same property flags, the same prototypes, arrays item by
 * item, dates of the same class at the same instant, primitives by `Object.is`.
 */
function difference(actual: unknown, expected: unknown, path = '(root)'): string | undefined {
  if (Object.is(actual, expected)) return undefined;
  if (typeof expected !== 'object' || expected === null || typeof actual !== 'object' || actual === null)
    return `${path}: ${show(actual)} where smol-toml has ${show(expected)}`;
  if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected))
    return `${path}: another prototype than smol-toml's`;
  if (expected instanceof Date) {
    const date = actual as Date;
    if (date.toISOString() !== expected.toISOString())
      return `${path}: ${date.toISOString()} where smol-toml has ${expected.toISOString()}`;
    if (!Object.is(date.getTime(), expected.getTime())) return `${path}: another instant than smol-toml's`;
    return undefined;
  }
  if (Array.isArray(expected)) {
    const array = actual as unknown[];
    if (array.length !== expected.length)
      return `${path}: ${array.length} items where smol-toml has ${expected.length}`;
    for (let index = 0; index < expected.length; index++) {
      const found = difference(array[index], expected[index], `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  const keys = Reflect.ownKeys(actual);
  const expectedKeys = Reflect.ownKeys(expected);
  if (keys.map(String).join('\n') !== expectedKeys.map(String).join('\n'))
    return `${path}: keys ${keys.map(String).join(', ')} where smol-toml has ${expectedKeys.map(String).join(', ')}`;
  for (const key of expectedKeys) {
    const flags = (object: object) => {
      const descriptor = Object.getOwnPropertyDescriptor(object, key)!;
      return `${descriptor.enumerable} ${descriptor.writable} ${descriptor.configurable}`;
    };
    if (flags(actual) !== flags(expected)) return `${path}.${String(key)}: other property flags`;
    const found = difference(
      (actual as Record<PropertyKey, unknown>)[key],
      (expected as Record<PropertyKey, unknown>)[key],
      `${path}.${String(key)}`,
    );
    if (found) return found;
  }
  return undefined;
}

/**
 * Reads each text plainly and, where that gives a value, checks smol-toml reads the same text
 * without an error and to the same value. Returns how many texts were read plainly and the first
 * few disagreements.
 */
function compareWithSmolToml(texts: Iterable<string>) {
  let plain = 0;
  const disagreements: string[] = [];
  for (const text of texts) {
    const read = readPlainToml(text);
    if (read === undefined) continue;
    plain++;
    let expected: unknown;
    try {
      expected = parse(text);
    } catch (error) {
      if (disagreements.length < 5)
        disagreements.push(`${JSON.stringify(text)}: smol-toml refuses it (${(error as Error).message})`);
      continue;
    }
    const found = difference(read, expected);
    if (found && disagreements.length < 5) disagreements.push(`${JSON.stringify(text)}: ${found}`);
  }
  return { plain, disagreements };
}

/** Short pieces that mean something to a TOML reader, or that a careless one would get wrong. */
const SNIPPETS = [
  '"',
  "'",
  '\\',
  '\\n',
  '\\"',
  '[',
  ']',
  '[[',
  ']]',
  '{',
  '}',
  '=',
  ' = ',
  '#',
  ',',
  '.',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  'é',
  '€',
  '😀',
  '\ufeff',
  '__proto__',
  'constructor',
  'toString',
  'a.b',
  '[[t]]',
  '\n[[t]]\n',
  '\n[t]\n',
  '\n[a.b]\n',
  '\nk = 1\n',
  '\na.b = 1\n',
  '\n__proto__ = 1\n',
  '\n[__proto__]\n',
  '2026-13-01T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2024-02-29T00:00:00Z',
  '2026-04-25T24:00:00Z',
  '2026-04-25T23:59:60Z',
  '2026-04-25T08:12:00.123456789Z',
  '2026-04-25T08:12:00.1234567891Z',
  '2026-04-25T08:12:00+01:00',
  '2026-04-25 08:12:00Z',
  '2026-04-25t08:12:00z',
  '24:00:00',
  '1234567890123456',
  '123456789012345',
  '9007199254740993',
  '-0',
  '+1',
  '1_000',
  '01',
  '0x10',
  '1e3',
  'inf',
  'nan',
  'true',
  'false',
  'TRUE',
  '"""',
  "'''",
  '"""\n',
];

/** Ways to spoil a line's key: dotted, quoted, a name objects inherit, spaced, bracketed. */
const KEY_EDITS: Array<(key: string) => string> = [
  (key) => `${key}.${key}`,
  (key) => `"${key}"`,
  () => '__proto__',
  () => 'constructor',
  (key) => `${key} `,
  (key) => ` ${key}`,
  (key) => `[${key}]`,
];

/** Keys for the random documents: few, so some repeat, and some that objects inherit. */
const KEYS = [
  'a',
  'b',
  'k',
  'name',
  'x-y',
  'k_2',
  '1',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
];

/** Values of each kind Metnos writes, read plainly when nothing else on the line is odd. */
const COMMON_VALUES = [
  '""',
  '"hello"',
  '"a b # not a comment"',
  '"é € 😀"',
  '"tab\there"',
  '0',
  '1',
  '-1',
  '42',
  '123456789012345',
  '-123456789012345',
  'true',
  'false',
  '2026-04-25T08:12:00Z',
  '2026-04-25T08:12:00.5Z',
  '2026-04-25T08:12:00.123456789Z',
  '2024-02-29T12:00:00Z',
  '2026-02-29T12:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '[]',
  '[ ]',
  '["a"]',
  '["a", "b"]',
  '[ "a" ,"b" , "c" ]',
  '["", "__proto__"]',
];

/** Values at or past the edge of the plain subset. */
const EDGE_VALUES = [
  '"a\\tb"',
  '"quote \\" inside"',
  "'literal'",
  '"""multi"""',
  '1234567890123456',
  '9007199254740993',
  '01',
  '-0',
  '+1',
  '1_000',
  '1.5',
  'True',
  '2026-13-01T00:00:00Z',
  '2026-04-25T24:00:00Z',
  '2026-04-25T23:59:60Z',
  '2026-04-25T08:12:00.1234567891Z',
  '2026-04-25T08:12:00+02:00',
  '2026-04-25',
  '08:12:00',
  '["a",]',
  '["a" "b"]',
  '[1, 2]',
  '["a", 1]',
  '[["a"]]',
  '{ a = 1 }',
  '',
];
const VALUES = [...COMMON_VALUES, ...EDGE_VALUES];

/** One to three random edits of `text`: characters, snippets, whole lines. */
function mutate(text: string, rng: Random): string {
  let out = text;
  const edits = 1 + rng.below(3);
  for (let edit = 0; edit < edits; edit++) {
    const at = rng.below(out.length + 1);
    const kind = rng.below(8);
    if (kind === 0) out = out.slice(0, at) + rng.pick(SNIPPETS) + out.slice(at);
    else if (kind === 1) out = out.slice(0, at) + out.slice(at + 1 + rng.below(4));
    else if (kind === 2) out = out.slice(0, at) + rng.pick(SNIPPETS) + out.slice(at + 1 + rng.below(3));
    else if (kind === 3) out = out.slice(0, at) + String.fromCharCode(rng.below(0x80)) + out.slice(at);
    else {
      const lines = out.split('\n');
      const line = rng.below(lines.length);
      if (kind === 4) lines.splice(line, 0, lines[rng.below(lines.length)]!);
      else if (kind === 5) lines.splice(line, 1);
      else if (kind === 6) lines[line] = lines[line]!.replace(/=.*$/, `= ${rng.pick(VALUES)}`);
      else lines[line] = lines[line]!.replace(/^\s*(\w+)/, (_, key: string) => rng.pick(KEY_EDITS)(key));
      out = lines.join(rng.next() < 0.1 ? '\r\n' : '\n');
    }
  }
  return out;
}

/** Table headers, plain and otherwise, for the random documents. */
const HEADERS = [
  '[a]',
  '[b]',
  '[a.b]',
  '[a.b.c]',
  '[b.a]',
  '[ a ]',
  '[a . b]',
  '[__proto__]',
  '[constructor]',
  '[a.__proto__]',
  '[__proto__.a]',
  '["a"]',
  '[[t]]',
  '[]',
];
const COMMENTS = [
  '',
  ' # note',
  '# note',
  ' #',
  ' # é 😀',
  ' # "quoted" [x] = 1',
  ' # a\u0001b',
  ' # \u007f',
  ' #\t',
];
const SPACES = ['', ' ', '  ', '\t'];

/** A document of random lines: headers, keys with every kind of value, comments, blank lines. */
function randomDocument(rng: Random): string {
  const lines: string[] = [];
  const count = 1 + rng.below(12);
  for (let line = 0; line < count; line++) {
    const kind = rng.below(10);
    const indent = rng.next() < 0.2 ? rng.pick(SPACES) : '';
    const comment = rng.next() < 0.25 ? rng.pick(COMMENTS) : '';
    if (kind < 3) lines.push(indent + rng.pick(HEADERS) + comment);
    else if (kind < 8) {
      const [before, after] = rng.next() < 0.3 ? [rng.pick(SPACES), rng.pick(SPACES)] : [' ', ' '];
      const value = rng.next() < 0.8 ? rng.pick(COMMON_VALUES) : rng.pick(EDGE_VALUES);
      lines.push(`${indent}${rng.pick(KEYS)}${before}=${after}${value}${comment}`);
    } else if (kind === 8) lines.push(indent + (rng.pick(COMMENTS).trimStart() || '#'));
    else lines.push(indent);
  }
  const ending = rng.next() < 0.2 ? '\r\n' : rng.next() < 0.05 ? '\r' : '\n';
  return lines.join(ending) + (rng.next() < 0.7 ? ending : '');
}

describe('readPlainToml', () => {
  it('reads every kind of value it knows as smol-toml does, with LF or CRLF line ends', () => {
    const text = [
      '# a Metnos manifest, in short',
      '[executor]',
      'name = "fs_read"   # the folder name',
      'created_at = 2026-04-25T08:12:00Z',
      'affinity = ["read", "file"]',
      '',
      '[sandbox.fs]',
      'max_memory_mb = 256',
      'idempotent = true',
      'write = []',
    ].join('\n');
    for (const variant of [text, text.replaceAll('\n', '\r\n'), `${text}\n`]) {
      const read = readPlainToml(variant);
      expect(read).toEqual({
        executor: {
          name: 'fs_read',
          created_at: new TomlDate('2026-04-25T08:12:00Z'),
          affinity: ['read', 'file'],
        },
        sandbox: { fs: { max_memory_mb: 256, idempotent: true, write: [] } },
      });
      expect(difference(read, parse(variant))).toBeUndefined();
    }
  });

  it('agrees with smol-toml on seeded mutations of the real and scaffolded manifests', () => {
    const sources = [...realManifests.map(({ text }) => text), ...scaffolded];
    expect(sources.length).toBeGreaterThan(10);
    const rng = seededRandom(0x5eed);
    const texts = function* () {
      for (let index = 0; index < 20_000; index++) yield mutate(rng.pick(sources), rng);
    };
    const { plain, disagreements } = compareWithSmolToml(texts());
    expect(disagreements).toEqual([]);
    // enough of the mutated texts stay plain for the comparison to mean something
    expect(plain).toBeGreaterThan(1_000);
  });

  it('agrees with smol-toml on seeded random documents of headers, keys, values and comments', () => {
    const rng = seededRandom(0x70e1);
    const texts = function* () {
      for (let index = 0; index < 20_000; index++) yield randomDocument(rng);
    };
    const { plain, disagreements } = compareWithSmolToml(texts());
    expect(disagreements).toEqual([]);
    expect(plain).toBeGreaterThan(1_000);
  });

  it('reads every seed manifest without a backslash escape or a multi-line array', () => {
    expect(realManifests.length).toBeGreaterThan(0);
    const expectedPlain = realManifests.filter(
      ({ text }) => !text.includes('\\') && !/=[ \t]*\[[^\]\n]*$/m.test(text),
    );
    expect(expectedPlain.length).toBeGreaterThan(realManifests.length / 2);
    for (const { name, text } of expectedPlain) {
      const read = readPlainToml(text);
      expect(read, name).toBeDefined();
      expect(difference(read, parse(text)), name).toBeUndefined();
    }
  });

  it('leaves parseManifest giving the same manifest as smol-toml would, for every seed manifest', () => {
    for (const { name, file, text } of realManifests) {
      const reference = manifestShape(parse(text));
      expect(reference, name).toBeDefined();
      expect(parseManifest(text, file), name).toStrictEqual(reference);
      const plain = readPlainToml(text);
      if (plain !== undefined) expect(manifestShape(plain), name).toStrictEqual(reference);
    }
  });

  // Each text is outside the plain subset and goes to smol-toml; the text beside it differs only
  // in that one place and is read plainly, so the refusal is about that place and nothing else.
  const outside: Array<{ label: string; text: string; near: string }> = [
    { label: 'a basic string with an escape', text: 'name = "a\\tb"\n', near: 'name = "a b"\n' },
    { label: 'a literal string', text: "name = 'fs_read'\n", near: 'name = "fs_read"\n' },
    {
      label: 'a multi-line array',
      text: '[sandbox.fs]\nread = [\n  "$WORKSPACE",\n]\n',
      near: '[sandbox.fs]\nread = ["$WORKSPACE"]\n',
    },
    { label: 'a duplicate key', text: '[a]\nx = 1\nx = 2\n', near: '[a]\nx = 1\ny = 2\n' },
    { label: 'a table defined twice', text: '[a]\nx = 1\n[a]\ny = 2\n', near: '[a]\nx = 1\n[b]\ny = 2\n' },
    {
      label: 'a table header after a sub-table of the same name',
      text: '[a.b]\nx = 1\n[a]\ny = 2\n',
      near: '[a]\ny = 2\n[a.b]\nx = 1\n',
    },
    { label: 'a value then used as a table', text: '[a]\nb = 1\n[a.b]\n', near: '[a]\nc = 1\n[a.b]\n' },
    { label: 'a value then named by a header', text: 'a = 1\n[a]\n', near: 'b = 1\n[a]\n' },
    { label: 'a dotted key', text: '[a]\nb.c = 1\n', near: '[a]\nb_c = 1\n' },
    { label: 'a quoted key', text: '"a" = 1\n', near: 'a = 1\n' },
    { label: 'an array of tables', text: '[[t]]\nx = 1\n', near: '[t]\nx = 1\n' },
    { label: 'a trailing comma in an array', text: 'read = ["a",]\n', near: 'read = ["a"]\n' },
    { label: 'a CR not followed by LF', text: 'a = 1\rb = 2\n', near: 'a = 1\r\nb = 2\n' },
    { label: 'a comment with a control character', text: 'a = 1 # x\u0001y\n', near: 'a = 1 # xy\n' },
    { label: 'a comment with DEL', text: 'a = 1 # x\u007fy\n', near: 'a = 1 # xy\n' },
    { label: 'an integer with a leading zero', text: 'a = 01\n', near: 'a = 1\n' },
    { label: 'an integer of 16 digits', text: 'a = 1234567890123456\n', near: 'a = 123456789012345\n' },
    { label: 'an integer written -0', text: 'a = -0\n', near: 'a = 0\n' },
    { label: 'an integer with a plus sign', text: 'a = +1\n', near: 'a = 1\n' },
    { label: 'an integer with an underscore', text: 'a = 1_000\n', near: 'a = 1000\n' },
    {
      label: 'a date-time with an offset other than Z',
      text: 'created_at = 2026-04-25T08:12:00+02:00\n',
      near: 'created_at = 2026-04-25T08:12:00Z\n',
    },
    {
      label: 'a date-time in a month that does not exist',
      text: 'created_at = 2026-13-01T00:00:00Z\n',
      near: 'created_at = 2026-12-01T00:00:00Z\n',
    },
  ];

  it.each(outside)('leaves $label to smol-toml', ({ text, near }) => {
    expect(readPlainToml(near)).toBeDefined();
    expect(readPlainToml(text)).toBeUndefined();
  });

  it.each([
    { label: 'a key', text: '__proto__ = "x"\n', path: [] },
    { label: 'a table', text: '[__proto__]\npolluted = true\n', path: [] },
    { label: 'a sub-table', text: '[a.__proto__]\npolluted = true\n', path: ['a'] },
    { label: 'a key inside a table', text: '[a]\n__proto__ = ["x"]\nconstructor = 1\n', path: ['a'] },
  ])(
    'makes $label named __proto__ an own key of a null-prototype table, as smol-toml does',
    ({ text, path }) => {
      const read = readPlainToml(text);
      expect(read).toBeDefined();
      let table = read as Record<string, unknown>;
      for (const name of path) table = table[name] as Record<string, unknown>;
      expect(Object.getPrototypeOf(read)).toBeNull();
      expect(Object.getPrototypeOf(table)).toBeNull();
      expect(Object.hasOwn(table, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf({})).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(difference(read, parse(text))).toBeUndefined();
    },
  );
});
