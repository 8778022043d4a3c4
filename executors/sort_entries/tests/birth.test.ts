import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

const mail = [
  { uid: 1, from: 'bob@example.org', date: 'Mon, 4 May 2026 09:12:00 +0200', size: '900', priority: 3 },
  { uid: 2, from: 'Ada@example.org', date: '2026-05-04T08:00:00Z', size: 12000, priority: 1 },
  { uid: 3, from: 'carol@example.org', date: 'Sun, 3 May 2026 07:00:00 +0000', size: 100 },
  { uid: 4, from: 'ada@example.org', date: '2026-05-04T06:30:00+02:00', size: 12000, priority: 3 },
  { uid: 5, from: 'dan@example.org', size: 5 },
];

const uids = (result: Awaited<ReturnType<typeof executor.invoke>>) =>
  result.ok
    ? (result.content as { entries: Array<{ uid: number }> }).entries.map((entry) => entry.uid)
    : result;

describe('sort_entries birth', () => {
  it('sorts dates as instants (mail dates and ISO mixed), newest first, missing last', async () => {
    // uid 1 is 07:12Z, uid 2 08:00Z, uid 4 04:30Z, uid 3 the day before
    expect(uids(await executor.invoke({ entries: mail, by: 'date', order: 'desc' }))).toEqual([
      2, 1, 4, 3, 5,
    ]);
    expect(uids(await executor.invoke({ entries: mail, by: 'date' }))).toEqual([3, 4, 1, 2, 5]);
  });

  it('sorts numbers as numbers, even written as text, and is stable on ties', async () => {
    expect(uids(await executor.invoke({ entries: mail, by: 'size' }))).toEqual([5, 3, 1, 2, 4]);
    expect(uids(await executor.invoke({ entries: mail, by: 'size', order: 'desc' }))).toEqual([
      2, 4, 1, 3, 5,
    ]);
  });

  it('breaks ties with further keys, each with its own order, and keeps the first N', async () => {
    const result = await executor.invoke({
      entries: mail,
      by: [
        { path: 'priority', order: 'desc' },
        { path: 'from', order: 'asc' },
      ],
    });
    expect(uids(result)).toEqual([4, 1, 2, 3, 5]);
    expect(await executor.invoke({ entries: mail, by: 'from', limit: 2 })).toMatchObject({
      ok: true,
      content: { count: 2, total: 5 },
    });
    // text ignores case: Ada and ada tie, and keep their order
    expect(uids(await executor.invoke({ entries: mail, by: 'from', limit: 2 }))).toEqual([2, 4]);
  });

  it('gives typed failures for bad paths and refuses hostile input', async () => {
    expect(await executor.invoke({ entries: mail, by: 'a..b' })).toMatchObject({
      ok: false,
      error: { class: 'BadPath' },
    });
    expect(await executor.invoke({ entries: mail, by: [] })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    const hostile = JSON.parse('[{"__proto__": {"rank": 1}, "n": 2}, {"n": 1}]');
    expect(await executor.invoke({ entries: hostile, by: 'n' })).toMatchObject({
      ok: true,
      content: { entries: [{ n: 1 }, { n: 2 }] },
    });
    expect(({} as Record<string, unknown>).rank).toBeUndefined();
    const huge = Array.from({ length: 20001 }, (_, index) => ({ index }));
    expect(await executor.invoke({ entries: huge, by: 'index' })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    const many = Array.from({ length: 20000 }, (_, index) => ({ index: (index * 7919) % 20000 }));
    const sorted = await executor.invoke({ entries: many, by: 'index', order: 'desc', limit: 3 });
    expect(sorted).toMatchObject({
      ok: true,
      content: { entries: [{ index: 19999 }, { index: 19998 }, { index: 19997 }] },
    });
  });
});
