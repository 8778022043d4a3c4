import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { manifestSchema } from './manifest.ts';
import { manifestShape } from './manifest-shape.ts';
import { scaffoldManifest } from './scaffold.ts';

// The hand check must never accept what the schema refuses, and must return
// what the schema returns. The corpus: every seed's manifest, a scaffolded
// one, and each of them changed one field at a time in every way below.

const REPO = join(import.meta.dirname, '..', '..', '..');

function seedManifests(): Array<[string, unknown]> {
  const root = join(REPO, 'executors');
  const found: Array<[string, unknown]> = [];
  for (const name of readdirSync(root)) {
    try {
      found.push([name, parseToml(readFileSync(join(root, name, 'manifest.toml'), 'utf8'))]);
    } catch {
      // not an executor folder
    }
  }
  return found;
}

/** A copy of parsed TOML that keeps its dates as they are. */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (value instanceof Date || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copy(item)]));
}

const WRONG_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.NaN,
  2 ** 53,
  10 ** 12,
  '',
  'X',
  'x:y',
  'none',
  'allowlist',
  'full',
  'main.js',
  '/abs',
  '$TMP',
  '$HOME/x',
  '$CREDENTIAL:mail',
  'api.example.com',
  '*.example.com:8443',
  'schema.json#/definitions/In',
  'blake3:' + 'a'.repeat(64),
  'PolicyViolation',
  'synt:run_1',
  'z'.repeat(501),
  true,
  [],
  {},
  [''],
  ['X'],
  ['fs:read'],
  ['$WORKSPACE/x', 'relative'],
  ['Failed', 'Timeout'],
  new Date('2026-01-01T00:00:00Z'),
  new Date('+020000-01-01T00:00:00Z'),
  '2026-01-01T00:00:00Z',
];

/** Every path to a value inside the manifest (tables and leaves), with its parent. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return [];
  return Object.entries(value).flatMap(([key, item]) => [[...prefix, key], ...paths(item, [...prefix, key])]);
}

function withValue(base: unknown, path: string[], value: unknown): unknown {
  const changed = copy(base) as Record<string, unknown>;
  let node = changed;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return changed;
}

function agrees(data: unknown): string | undefined {
  const fast = manifestShape(data);
  if (fast === undefined) return undefined;
  const slow = manifestSchema.safeParse(data);
  if (!slow.success) return `accepted what the schema refuses: ${slow.error.issues[0]?.message}`;
  const same = JSON.stringify(fast) === JSON.stringify(slow.data);
  return same ? undefined : `returned ${JSON.stringify(fast)}, the schema ${JSON.stringify(slow.data)}`;
}

describe('the hand check of a manifest', () => {
  const corpus: Array<[string, unknown]> = [
    ...seedManifests(),
    ['scaffolded', parseToml(scaffoldManifest('hello_world', 'Says hello.', '2026-01-01T00:00:00Z'))],
  ];

  it('takes every valid manifest of the corpus, and returns what the schema returns', () => {
    expect(corpus.length).toBeGreaterThan(10);
    for (const [name, data] of corpus) {
      expect(manifestShape(data), name).toBeDefined();
      expect(agrees(data), name).toBeUndefined();
    }
  });

  it('never takes a manifest the schema refuses, changed one field at a time', () => {
    let variants = 0;
    let refusedBySchema = 0;
    for (const [name, data] of corpus) {
      for (const path of paths(data)) {
        for (const value of WRONG_VALUES) {
          const changed = withValue(data, path, value);
          variants++;
          if (!manifestSchema.safeParse(changed).success) refusedBySchema++;
          expect(agrees(changed), `${name} ${path.join('.')} = ${String(value)}`).toBeUndefined();
        }
        const node = path.reduce<unknown>((parent, key) => (parent as Record<string, unknown>)[key], data);
        if (node !== null && typeof node === 'object' && !Array.isArray(node) && !(node instanceof Date))
          expect(agrees(withValue(data, [...path, 'extra'], 1)), `${name} ${path.join('.')}.extra`).toBe(
            undefined,
          );
      }
      expect(agrees({ ...(data as object), extra: {} }), `${name} with an extra table`).toBeUndefined();
    }
    // the corpus really tries the refusals
    expect(refusedBySchema).toBeGreaterThan(variants / 2);
  });
});
