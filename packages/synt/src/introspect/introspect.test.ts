import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CatalogListing, declaredProfileSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import type { Mnest } from '@metnos/mnestome';
import { describe, expect, it } from 'vitest';
import { fadedFusedCandidates } from './fused.ts';
import { generaliseCandidates } from './generalise.ts';
import { mergeCandidates } from './merge.ts';
import { readAuditedCalls, specialiseCandidates } from './specialise.ts';
import type { IntrospectionInput } from './types.ts';

const TEXT_IN = {
  type: 'object',
  properties: { text: { type: 'string', description: 'text' } },
  required: ['text'],
  additionalProperties: false,
};

/** What the introspective steps read of an executor: name, origin, contract and profile. */
function executor(
  name: string,
  options: {
    createdBy?: string;
    input?: object;
    output?: object;
    profile?: Partial<{ read: string[]; write: string[]; domains: string[] }>;
  } = {},
): VerifiedExecutor {
  const profile = options.profile ?? {};
  return {
    name,
    version: '1.0.0',
    dir: `/nowhere/${name}`,
    manifest: {
      executor: { name, created_by: options.createdBy ?? 'synt:r-1', summary: `${name}.`, affinity: [] },
      contract: {
        input_schema: 'schema.json#/definitions/Input',
        output_schema: 'schema.json#/definitions/Output',
        error_classes: [],
      },
      sandbox: declaredProfileSchema.parse({
        profile: 'p',
        max_duration_ms: 1000,
        max_memory_mb: 64,
        max_output_bytes: 1024,
        fs: { read: profile.read ?? [], write: profile.write ?? [] },
        network: { mode: profile.domains?.length ? 'allowlist' : 'none', domains: profile.domains ?? [] },
      }),
    },
    schema: {
      definitions: {
        Input: options.input ?? TEXT_IN,
        Output: options.output ?? { type: 'object', properties: { sum: { type: 'number' } } },
      },
    },
  } as unknown as VerifiedExecutor;
}

const listing = (
  executors: VerifiedExecutor[],
  state: CatalogListing['state'] = 'active',
): CatalogListing[] =>
  executors.map((item) => ({
    name: item.name,
    version: item.version,
    state,
    current: true,
    reason: undefined,
    summary: undefined,
    dir: item.dir,
  }));

const mnest = (src: string, dst: string, state: Mnest['state'] = 'active'): Mnest => ({
  src,
  dst,
  dstExists: true,
  weight: 0.4,
  uses: 3,
  firstUsedAt: '2026-05-01T00:00:00.000Z',
  lastUsedAt: '2026-05-02T00:00:00.000Z',
  state,
});

const input = (executors: VerifiedExecutor[], mnests: Mnest[] = []): IntrospectionInput => ({
  executors,
  listing: listing(executors),
  mnests,
  now: new Date('2026-05-10T04:30:00Z'),
});

describe('merge proposals', () => {
  const a = executor('csv_sum');
  const b = executor('csv_total');
  const traces = [
    mnest('fs_read', 'csv_sum'),
    mnest('fs_read', 'csv_total'),
    mnest('csv_sum', 'notes_append'),
    mnest('csv_total', 'notes_append'),
  ];

  it('pairs executors whose traces overlap and whose profiles are compatible', () => {
    const [card, ...rest] = mergeCandidates(input([a, b], traces));
    expect(rest).toEqual([]);
    expect(card).toMatchObject({
      kind: 'merge',
      key: 'merge:csv_sum+csv_total',
      motivation: {
        kind: 'merge',
        executors: ['csv_sum', 'csv_total'],
        shared: ['in:fs_read', 'out:notes_append'],
        overlap: 1,
      },
    });
  });

  it('not when the traces do not overlap, a profile is not compatible, or one is a seed', () => {
    expect(mergeCandidates(input([a, b], traces.slice(0, 1)))).toEqual([]);
    const writer = executor('csv_total', { profile: { write: ['$WORKSPACE/out'] } });
    expect(mergeCandidates(input([a, writer], traces))).toEqual([]);
    expect(mergeCandidates(input([a, executor('csv_total', { createdBy: 'seed' })], traces))).toEqual([]);
    const dormant = traces.map((item) => ({ ...item, state: 'dormant' as const }));
    expect(mergeCandidates(input([a, b], dormant))).toEqual([]);
  });
});

describe('generalise proposals', () => {
  const weather = ['weather_rome', 'weather_paris', 'weather_oslo'].map((name) =>
    executor(name, { profile: { domains: ['api.open-meteo.com'] } }),
  );

  it('N executors of one shape under one leading name → one parametric executor', () => {
    const [card] = generaliseCandidates(input(weather));
    expect(card).toMatchObject({
      kind: 'generalise',
      key: 'generalise:weather_oslo+weather_paris+weather_rome',
      motivation: {
        kind: 'generalise',
        stem: 'weather',
        executors: ['weather_oslo', 'weather_paris', 'weather_rome'],
      },
    });
  });

  it('not below the group size, nor across shapes', () => {
    expect(generaliseCandidates(input(weather.slice(0, 2)))).toEqual([]);
    const other = executor('weather_oslo', {
      input: { type: 'object', properties: { city: { type: 'string' } } },
    });
    expect(generaliseCandidates(input([...weather.slice(0, 2), other]))).toEqual([]);
  });
});

describe('specialise proposals, only with a measured benefit', () => {
  const fetcher = executor('page_fetch', {
    input: { type: 'object', properties: { url: { type: 'string', description: 'u' } } },
    profile: { domains: ['news.example.org', 'api.example.net', '*.example.com'] },
  });
  const single = executor('feed_fetch', {
    input: { type: 'object', properties: { url: { type: 'string', description: 'u' } } },
    profile: { domains: ['feeds.example.org'] },
  });

  async function audit(lines: object[]): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-synt-audit-'));
    await mkdir(join(dir, 'executors'), { recursive: true });
    await writeFile(
      join(dir, 'executors', '2026-05-09.jsonl'),
      `${lines.map((line) => JSON.stringify(line)).join('\n')}\n{broken line\n`,
    );
    return dir;
  }

  const calls = (executorName: string, url: string, count: number) =>
    Array.from({ length: count }, () => ({
      executor: executorName,
      exit: 'ok',
      caller: { kind: 'user' },
      input: { url },
    }));

  it('measures calls, the share with one value, and the grants a specialised version drops', async () => {
    const dir = await audit([
      ...calls('page_fetch', 'https://news.example.org/today', 11),
      ...calls('page_fetch', 'https://api.example.net/x', 1),
      ...calls('feed_fetch', 'https://feeds.example.org/rss', 12),
      ...calls('page_fetch', 'https://news.example.org/today', 5).map((line) => ({ ...line, exit: 'error' })),
    ]);
    try {
      const audited = await readAuditedCalls(dir, new Date('2026-05-10T04:30:00Z'), 30);
      const cards = specialiseCandidates(input([fetcher, single]), audited);
      // feed_fetch is as hot, but its profile cannot narrow: no measurable benefit, no card
      expect(cards).toHaveLength(1);
      expect(cards[0]).toMatchObject({
        kind: 'specialise',
        motivation: {
          executor: 'page_fetch',
          argument: 'url',
          value: 'https://news.example.org/today',
          calls: 12,
          share: 0.92,
          grantsAfter: { domains: ['news.example.org'] },
        },
      });
      expect(specialiseCandidates(input([fetcher]), audited, { minShare: 0.95 })).toEqual([]);
      expect(specialiseCandidates(input([fetcher]), audited, { minCalls: 13 })).toEqual([]);
      expect(await readAuditedCalls(dir, new Date('2026-07-10T04:30:00Z'), 30)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('archive proposals for fused executors', () => {
  it('once no active mnest cites a fused executor', () => {
    const old = executor('csv_total');
    const fused = { ...input([old]), listing: listing([old], 'fused') };
    expect(fadedFusedCandidates({ ...fused, mnests: [mnest('fs_read', 'csv_total')] })).toEqual([]);
    expect(
      fadedFusedCandidates({ ...fused, mnests: [mnest('fs_read', 'csv_total', 'dormant')] }),
    ).toMatchObject([
      {
        kind: 'archive',
        key: 'archive:csv_total@1.0.0',
        motivation: { executor: 'csv_total', version: '1.0.0' },
      },
    ]);
  });
});
