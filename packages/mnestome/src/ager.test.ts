import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMnestome } from './mnestome.ts';

const folder = mkdtempSync(join(tmpdir(), 'metnos-ager-'));
let files = 0;

/** A mnestome on a fresh file whose clock the test moves. */
function agedMnestome() {
  let now = new Date('2026-03-01T04:00:00.000Z');
  const mnestome = createMnestome({ path: join(folder, `ager-${files++}.sqlite`), clock: () => now });
  return {
    mnestome,
    now: () => now,
    advanceDays(days: number) {
      now = new Date(now.getTime() + days * 86_400_000);
      return now;
    },
  };
}

const SIGNATURE = { name: 'csv_sum', args: ['text'], piped: [], sourceOutput: [], purpose: ['sum'] };

describe('the ager', () => {
  it('halves an unused mnest every half-life, and stores the decayed weight', () => {
    const { mnestome, now, advanceDays } = agedMnestome();
    mnestome.recordPassing('fs_read', 'text_stats', true);
    const report = mnestome.age(advanceDays(30));
    expect(report.decayed).toBe(1);
    expect(mnestome.mnests()[0]!.weight).toBeCloseTo(0.075, 6);
    // a second run at the same instant has nothing left to do
    expect(mnestome.age(now())).toMatchObject({ decayed: 0 });
    expect(mnestome.mnests()[0]!.weight).toBeCloseTo(0.075, 6);
    mnestome.close();
  });

  it('demotes a mnest that faded below the line: the pre-filter stops seeing it until it is used again', () => {
    const { mnestome, advanceDays } = agedMnestome();
    mnestome.recordPassing('fs_read', 'text_stats', true);
    mnestome.recordPassing('fs_read', 'fs_write', true);
    advanceDays(20);
    mnestome.recordPassing('fs_read', 'fs_write', true);
    const report = mnestome.age(advanceDays(30));
    expect(report.demoted).toEqual([
      { src: 'fs_read', dst: 'text_stats', weight: expect.closeTo(0.0472, 3) },
    ]);
    expect(mnestome.passagesFrom('fs_read').map((mnest) => mnest.dst)).toEqual(['fs_write']);
    mnestome.recordPassing('fs_read', 'text_stats', true);
    expect(mnestome.passagesFrom('fs_read').map((mnest) => mnest.dst)).toContain('text_stats');
    mnestome.close();
  });

  it('purges a proto-mnest unused for 30 days, and keeps one still wished for', () => {
    const { mnestome, advanceDays } = agedMnestome();
    mnestome.recordPassing('fs_read', 'csv_sum', false, SIGNATURE);
    mnestome.recordPassing('web_fetch', 'rss_parse', false, { ...SIGNATURE, name: 'rss_parse' });
    advanceDays(29);
    mnestome.recordPassing('web_fetch', 'rss_parse', false, { ...SIGNATURE, name: 'rss_parse' });
    expect(mnestome.age(advanceDays(1)).purged).toEqual([]);
    const report = mnestome.age(advanceDays(1));
    expect(report.purged).toEqual([
      { src: 'fs_read', dst: 'csv_sum', uses: 1, lastUsedAt: '2026-03-01T04:00:00.000Z' },
    ]);
    expect(mnestome.protoMnests().map((mnest) => mnest.dst)).toEqual(['rss_parse']);
    mnestome.close();
  });

  it('proposes below_threshold for an executor unused for 60 days, counting from its first sighting', () => {
    const { mnestome, advanceDays } = agedMnestome();
    const catalog = ['fs_read', 'text_stats', 'notes_append'];
    expect(mnestome.age(undefined, { executors: catalog }).belowThreshold).toEqual([]);
    mnestome.recordUse('fs_read');
    mnestome.recordUse('text_stats');
    advanceDays(40);
    mnestome.recordUse('fs_read');
    const report = mnestome.age(advanceDays(21), { executors: catalog });
    expect(report.belowThreshold).toEqual([
      {
        executor: 'notes_append',
        proposal: 'below_threshold',
        lastUsedAt: undefined,
        unusedDays: 61,
        uses: 0,
        reason: expect.stringContaining('never used'),
      },
      {
        executor: 'text_stats',
        proposal: 'below_threshold',
        lastUsedAt: '2026-03-01T04:00:00.000Z',
        unusedDays: 61,
        uses: 1,
        reason: expect.stringContaining('not used for 61 days'),
      },
    ]);
    // a proposal only: an executor used again is no longer proposed
    mnestome.recordUse('text_stats');
    expect(mnestome.age(undefined, { executors: catalog }).belowThreshold.map((p) => p.executor)).toEqual([
      'notes_append',
    ]);
    mnestome.close();
  });
});
