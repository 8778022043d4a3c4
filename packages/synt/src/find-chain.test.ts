import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import type { DesiredSignature } from '@metnos/mnestome';
import { beforeAll, describe, expect, it } from 'vitest';
import { composeReaction, createComposer, ROAD_CLOSED } from './compose.ts';
import { findChain } from './find-chain.ts';

type Schema = Record<string, unknown>;
const object = (properties: Record<string, Schema>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const text = { type: 'string', format: 'text' };
const list = { type: 'array', items: { type: 'object' } };

/** Signed executors (their affinity is their name's words) with the schemas chaining reads. */
const EXECUTORS: Record<string, { input: Schema; output: Schema }> = {
  fs_read: { input: object({ path: { type: 'string' } }, ['path']), output: object({ content: text }) },
  csv_parse: { input: object({ text }, ['text']), output: object({ rows: list, columns: list }) },
  column_sum: {
    input: object({ entries: list, column: { type: 'string' } }, ['entries', 'column']),
    output: object({ sum: { type: 'number' } }),
  },
  text_stats: { input: object({ text }, ['text']), output: object({ words: { type: 'integer' } }) },
  web_fetch: { input: object({ url: { type: 'string' } }, ['url']), output: object({ content: text }) },
  mail_send: {
    input: object({ to: { type: 'string' }, body: text }, ['to', 'body']),
    output: object({ id: { type: 'string' } }),
  },
};

let catalog: ReturnType<typeof createCatalog>;
beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'metnos-synt-'));
  const key = await generateSigningKey();
  for (const [name, { input, output }] of Object.entries(EXECUTORS))
    await writeSignedExecutor({
      root,
      name,
      key,
      schema: { definitions: { Input: input, Output: output } },
    });
  catalog = createCatalog({ root, trustedKeys: [key], stateDir: join(root, '.state') });
  await catalog.load();
});

/** What a turn wished for: `name`, fed `fs_read`'s content as `text`, with `literal` arguments given. */
const wish = (name: string, literal: string[] = []): DesiredSignature => ({
  name,
  args: ['text', ...literal].sort(),
  piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
  sourceOutput: ['content'],
  purpose: [],
});

describe('findChain', () => {
  it('finds a 2-hop chain: text into csv_parse, its rows as entries into column_sum with the given column', () => {
    const result = findChain('fs_read', wish('sum_csv_column', ['column']), catalog);
    expect(result).toMatchObject({ found: true, chain: ['csv_parse', 'column_sum'] });
    expect(result.wanted).toEqual(['sum', 'csv', 'column']);
  });

  it('finds one hop when an existing executor answers to the missing name (a misnamed tool)', () => {
    expect(findChain('fs_read', wish('text_stat'), catalog)).toMatchObject({
      found: true,
      chain: ['text_stats'],
    });
  });

  it('reports a closed road when no executor answers to what the name asks', () => {
    expect(findChain('fs_read', wish('fax_send'), catalog)).toMatchObject({
      found: false,
      reason: 'no_chain',
    });
  });

  it('does not chain through an executor whose required input nothing fills', () => {
    // column_sum needs `column`: without it as a literal argument the chain does not connect
    expect(findChain('fs_read', wish('sum_csv_column'), catalog)).toMatchObject({ found: false });
  });

  it('keeps out executors that are not active, and stops at the depth and time given', () => {
    const inactive = findChain('fs_read', wish('sum_csv_column', ['column']), catalog, {
      isActive: (executor) => executor.name !== 'csv_parse',
    });
    expect(inactive).toMatchObject({ found: false, reason: 'no_chain' });
    expect(findChain('fs_read', wish('sum_csv_column', ['column']), catalog, { maxDepth: 1 })).toMatchObject({
      found: false,
    });
    let tick = 0;
    const outOfTime = findChain('fs_read', wish('sum_csv_column', ['column']), catalog, {
      timeBudgetMs: 5,
      now: () => (tick += 10),
    });
    expect(outOfTime).toMatchObject({ found: false, reason: 'out_of_time' });
  });

  it('takes the call literal arguments as the first hop input when there is no source', () => {
    const desired: DesiredSignature = {
      name: 'fetch_text_stats',
      args: ['url'],
      piped: [],
      sourceOutput: [],
      purpose: [],
    };
    expect(findChain(undefined, desired, catalog)).toMatchObject({
      found: true,
      chain: ['web_fetch', 'text_stats'],
    });
  });
});

describe('reactive compose', () => {
  it('reports the chain, the first hop and the suggestion', () => {
    expect(
      composeReaction({
        from: 'fs_read',
        desired: wish('sum_csv_column', ['column']),
        executors: catalog.executors(),
      }),
    ).toEqual({
      strategy: 'compose',
      state: 'composed',
      chain: ['csv_parse', 'column_sum'],
      first_hop: 'csv_parse',
      suggestion: "Retry by invoking 'csv_parse' as the next step, then column_sum",
    });
  });

  it('reports the road is closed', () => {
    expect(
      createComposer().compose({
        from: 'fs_read',
        desired: wish('fax_send'),
        executors: catalog.executors(),
      }),
    ).toEqual({
      strategy: 'compose',
      state: 'abandoned',
      chain: [],
      first_hop: null,
      suggestion: ROAD_CLOSED,
    });
  });

  it('is fail-safe: a broken catalog gives undefined, not an exception', () => {
    const broken = [{ name: 'x', manifest: null }] as never;
    expect(
      composeReaction({ from: 'fs_read', desired: wish('sum_csv_column'), executors: broken }),
    ).toBeUndefined();
  });
});
