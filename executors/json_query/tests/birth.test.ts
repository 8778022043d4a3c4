import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

const order = {
  id: 'A-17',
  customer: { name: 'Ada', 'e-mail': 'ada@example.org' },
  items: [
    { sku: 'pen', qty: 2, tags: ['office'] },
    { sku: 'ink', qty: 1 },
    { sku: 'pad', qty: 5, tags: ['office', 'paper'] },
  ],
  status: { '404': 'lost' },
};

describe('json_query birth', () => {
  it('picks dotted paths, indices and wildcards from JSON text', async () => {
    const result = await executor.invoke({
      json: JSON.stringify(order),
      fields: [
        'customer.name',
        'items.0.sku',
        'items[-1].qty',
        'items[*].sku',
        'items[*].tags[0]',
        'customer["e-mail"]',
      ],
    });
    expect(result).toMatchObject({
      ok: true,
      content: {
        results: [
          { path: 'customer.name', found: true, value: 'Ada' },
          { found: true, value: 'pen' },
          { found: true, value: 5 },
          { found: true, value: ['pen', 'ink', 'pad'] },
          { found: true, value: ['office', 'office'] },
          { found: true, value: 'ada@example.org' },
        ],
      },
    });
  });

  it('accepts a value as data and reports missing paths without failing', async () => {
    const result = await executor.invoke({
      data: order,
      fields: ['$', 'status.404', 'items.9.sku', 'customer.age'],
    });
    expect(result).toMatchObject({
      ok: true,
      content: {
        results: [
          { path: '$', found: true, value: order },
          { found: true, value: 'lost' },
          { path: 'items.9.sku', found: false },
          { path: 'customer.age', found: false },
        ],
      },
    });
  });

  it('does not read inherited properties', async () => {
    const result = await executor.invoke({
      data: { a: 1 },
      fields: ['constructor', '__proto__', 'a.toString'],
    });
    expect(result).toMatchObject({
      ok: true,
      content: { results: [{ found: false }, { found: false }, { found: false }] },
    });
  });

  it('fails with InvalidJson, BadPath and MissingInput', async () => {
    expect(await executor.invoke({ json: '{"a": 1,', fields: ['a'] })).toMatchObject({
      ok: false,
      error: { class: 'InvalidJson' },
    });
    expect(await executor.invoke({ data: {}, fields: ['a..b'] })).toMatchObject({
      ok: false,
      error: { class: 'BadPath' },
    });
    expect(await executor.invoke({ fields: ['a'] })).toMatchObject({
      ok: false,
      error: { class: 'MissingInput' },
    });
  });
});
