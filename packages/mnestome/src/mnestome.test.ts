import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DesiredSignature } from './desired-signature.ts';
import { createMnestome } from './mnestome.ts';

const folder = mkdtempSync(join(tmpdir(), 'metnos-mnestome-'));
let files = 0;
const freshFile = () => join(folder, `mnestome-${files++}.sqlite`);

/** A clock that stands still until moved. */
function standingClock(start = '2026-05-01T08:00:00.000Z') {
  let now = new Date(start);
  return {
    clock: () => now,
    advanceDays(days: number) {
      now = new Date(now.getTime() + days * 86_400_000);
    },
  };
}

const SIGNATURE: DesiredSignature = {
  name: 'csv_sum',
  args: ['column', 'text'],
  piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
  sourceOutput: ['content', 'path'],
  purpose: ['sum', 'amount', 'column', 'expenses', 'csv'],
};

describe('the mnestome', () => {
  it('gives a passage a mnest with the bootstrap weight, and reinforces it with each passage', () => {
    const time = standingClock();
    const mnestome = createMnestome({ path: freshFile(), clock: time.clock });
    mnestome.recordPassing('fs_read', 'text_stats', true);
    expect(mnestome.passagesFrom('fs_read')).toEqual([
      {
        src: 'fs_read',
        dst: 'text_stats',
        dstExists: true,
        weight: 0.15,
        uses: 1,
        firstUsedAt: '2026-05-01T08:00:00.000Z',
        lastUsedAt: '2026-05-01T08:00:00.000Z',
        state: 'active',
      },
    ]);
    time.advanceDays(1);
    mnestome.recordPassing('fs_read', 'text_stats', true);
    mnestome.recordPassing('fs_read', 'text_stats', true);
    const [mnest] = mnestome.passagesFrom('fs_read');
    expect(mnest!.uses).toBe(3);
    expect(mnest!.weight).toBeCloseTo(0.385, 2);
    expect(mnest!.lastUsedAt).toBe('2026-05-02T08:00:00.000Z');
    mnestome.close();
  });

  it('keeps a proto-mnest with the signature it was wished for, apart from what follows an executor', () => {
    const mnestome = createMnestome({ path: freshFile(), clock: standingClock().clock });
    mnestome.recordPassing('fs_read', 'csv_sum', false, SIGNATURE);
    mnestome.recordPassing('fs_read', 'fs_write', true);
    expect(mnestome.passagesFrom('fs_read').map((mnest) => mnest.dst)).toEqual(['fs_write']);
    expect(mnestome.protoMnests()).toEqual([
      expect.objectContaining({
        src: 'fs_read',
        dst: 'csv_sum',
        dstExists: false,
        desiredSignature: SIGNATURE,
      }),
    ]);
    mnestome.close();
  });

  it('turns a proto-mnest into a real mnest once its executor exists', () => {
    const mnestome = createMnestome({ path: freshFile(), clock: standingClock().clock });
    mnestome.recordPassing('fs_read', 'csv_sum', false, SIGNATURE);
    mnestome.recordPassing('fs_read', 'csv_sum', true);
    expect(mnestome.protoMnests()).toEqual([]);
    expect(mnestome.passagesFrom('fs_read')).toEqual([
      expect.objectContaining({ dst: 'csv_sum', dstExists: true, uses: 2 }),
    ]);
    expect(mnestome.passagesFrom('fs_read')[0]).not.toHaveProperty('desiredSignature');
    mnestome.close();
  });

  it('lists the proto-mnests that recur: since a date, with enough uses and weight', () => {
    const time = standingClock();
    const mnestome = createMnestome({ path: freshFile(), clock: time.clock });
    mnestome.recordPassing('web_fetch', 'rss_parse', false, { ...SIGNATURE, name: 'rss_parse' });
    time.advanceDays(40);
    for (let use = 0; use < 3; use++) mnestome.recordPassing('fs_read', 'csv_sum', false, SIGNATURE);
    mnestome.recordPassing('fs_list', 'zip_make', false, { ...SIGNATURE, name: 'zip_make' });
    const monthAgo = new Date(time.clock().getTime() - 30 * 86_400_000);
    expect(mnestome.protoMnests({ since: monthAgo }).map((mnest) => mnest.dst)).toEqual([
      'csv_sum',
      'zip_make',
    ]);
    expect(
      mnestome.protoMnests({ since: monthAgo, minUses: 3, minWeight: 0.3 }).map((mnest) => mnest.dst),
    ).toEqual(['csv_sum']);
    mnestome.close();
  });

  it('keeps the graph in its file: a reopened mnestome knows the passages', () => {
    const file = freshFile();
    const first = createMnestome({ path: file });
    first.recordPassing('fs_list', 'fs_read', true);
    first.close();
    const again = createMnestome({ path: file });
    expect(again.passagesFrom('fs_list').map((mnest) => mnest.dst)).toEqual(['fs_read']);
    again.close();
  });

  it('refuses a signature that is not one instead of storing it (reported, not thrown)', () => {
    const failures: string[] = [];
    const mnestome = createMnestome({
      path: freshFile(),
      onError: (_error, operation) => failures.push(operation),
    });
    mnestome.recordPassing('fs_read', 'x', false, { name: '' } as DesiredSignature);
    expect(failures).toEqual(['record a passage']);
    expect(mnestome.protoMnests()).toEqual([]);
    mnestome.close();
  });
});
