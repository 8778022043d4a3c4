import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { createCatalog, isLedger, ledgerSchema } from './catalog.ts';
import { isLifecycleFile, lifecycleFileSchema } from './lifecycle.ts';
import { signatureFileSchema } from './signature.ts';
import { writeSignedExecutor } from './test/index.ts';
import { isSignatureFile } from './verify.ts';

const temp = useTempDirs('metnos-shape-');

/** Every variant of `value` with one field changed, removed, added, or given another type. */
function mutations(value: unknown): unknown[] {
  const out: unknown[] = [null, [], 'text', 1, {}];
  const replacements = [null, undefined, 0, 1, -1, '', 'x', true, [], {}, [null], { extra: 1 }];
  const visit = (node: unknown, rebuild: (next: unknown) => unknown) => {
    for (const replacement of replacements) out.push(rebuild(replacement));
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) {
        visit(item, (next) => rebuild(node.map((other, at) => (at === index ? next : other))));
      }
      out.push(rebuild([...node, node[0]]));
    } else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      out.push(rebuild({ ...record, unexpected: 'key' }));
      for (const key of Object.keys(record)) {
        const { [key]: _removed, ...rest } = record;
        out.push(rebuild(rest));
        visit(record[key], (next) => rebuild({ ...record, [key]: next }));
      }
    }
  };
  visit(value, (next) => next);
  return out.map((item) => (item === undefined ? item : JSON.parse(JSON.stringify(item))));
}

/** The fast check never accepts what the schema would refuse or change. */
function agrees(
  check: (data: unknown) => boolean,
  schema: { safeParse(data: unknown): { success: boolean; data?: unknown } },
  sample: unknown,
) {
  const variants = mutations(sample);
  let accepted = 0;
  for (const variant of variants) {
    if (!check(variant)) continue;
    accepted++;
    const parsed = schema.safeParse(variant);
    expect(parsed.success, JSON.stringify(variant)).toBe(true);
    expect(parsed.data, JSON.stringify(variant)).toEqual(variant);
  }
  expect(check(sample)).toBe(true);
  return { variants: variants.length, accepted };
}

describe('the hand-written shape checks', () => {
  it('accept only what their zod schema accepts unchanged, for the ledger, lifecycle and signature files', async () => {
    const root = await temp.make();
    const stateDir = join(root, '.state');
    await writeSignedExecutor({ root, name: 'alpha' });
    const { dir } = await writeSignedExecutor({ root, name: 'beta', versioned: true });
    await createCatalog({ root, trustedKeys: [], stateDir }).load();
    const catalog = createCatalog({ root, trustedKeys: [], stateDir });
    await catalog.load();
    const lifecycle = JSON.parse(await readFile(join(stateDir, 'lifecycle.json'), 'utf8'));
    const signature = JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8'));
    const ledger = {
      version: 1,
      executors: { alpha: { highest: '1.0.0', current: '1.0.0', accepted: { '1.0.0': 'sig' } } },
    };

    const results = [
      agrees(isLedger, ledgerSchema, ledger),
      agrees(isLifecycleFile, lifecycleFileSchema, lifecycle),
      agrees(isSignatureFile, signatureFileSchema, signature),
    ];
    for (const result of results) expect(result.variants).toBeGreaterThan(50);
  });
});
