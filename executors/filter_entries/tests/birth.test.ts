import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

const mail = [
  {
    uid: 11,
    from: 'Ada <ada@example.org>',
    subject: 'Lunch on Friday?',
    date: 'Mon, 4 May 2026 09:12:00 +0200',
    flags: ['\\Seen'],
    size: 2300,
    headers: {},
    classes: { spam: 'not_spam' },
  },
  {
    uid: 12,
    from: 'Deals <deals@bargains.example>',
    subject: '[SPAM] You won',
    date: '2026-05-03T22:00:00Z',
    flags: [],
    size: 51200,
    headers: { 'x-spam-flag': 'YES', 'list-unsubscribe': '<https://bargains.example/u?id=1>' },
    classes: { spam: 'spam' },
  },
  {
    uid: 13,
    from: 'Newsletter <news@weekly.example>',
    subject: 'This week',
    date: 'Sun, 3 May 2026 07:00:00 +0000',
    flags: ['\\Seen', '\\Flagged'],
    size: 18000,
    headers: { 'list-id': '<weekly.example>' },
    classes: { spam: 'not_spam' },
  },
];

const uids = (result: Awaited<ReturnType<typeof executor.invoke>>) =>
  result.ok
    ? (result.content as { entries: Array<{ uid: number }> }).entries.map((entry) => entry.uid)
    : result;

describe('filter_entries birth', () => {
  it('keeps what the seed plan asks with the shorthand: where_field "spam", where_value "spam" reads classes.spam', async () => {
    const result = await executor.invoke({ entries: mail, where_field: 'spam', where_value: 'SPAM' });
    expect(result).toMatchObject({ ok: true, content: { count: 1, total: 3 } });
    expect(uids(result)).toEqual([12]);
    // entries come back whole, URLs in their fields included (data, not something to fetch)
    expect(result.ok && (result.content as { entries: unknown[] }).entries[0]).toEqual(mail[1]);
  });

  it('tests dotted paths with every operator, all-of and any-of', async () => {
    const cases: Array<[unknown, number[]]> = [
      [{ path: 'headers.x-spam-flag', op: 'equals', value: 'yes' }, [12]],
      [{ path: 'headers.x-spam-flag', op: 'equals', value: 'yes', case_sensitive: true }, []],
      [{ path: 'headers.x-spam-flag', op: 'not_equals', value: 'YES' }, [11, 13]],
      [{ path: 'subject', op: 'contains', value: 'spam' }, [12]],
      [{ path: 'flags', op: 'contains', value: '\\Flagged' }, [13]],
      [{ path: 'uid', op: 'in', value: [11, '13', 99] }, [11, 13]],
      [{ path: 'size', op: 'gt', value: 18000 }, [12]],
      [{ path: 'size', op: 'gte', value: '18000' }, [12, 13]],
      [{ path: 'date', op: 'lt', value: '2026-05-04' }, [12, 13]],
      [{ path: 'date', op: 'gte', value: '2026-05-04T07:00:00Z' }, [11]],
      [{ path: 'headers.list-id', op: 'exists' }, [13]],
      [{ path: 'headers.list-id', op: 'exists', value: false }, [11, 12]],
      [
        {
          all: [
            { path: 'flags', op: 'contains', value: '\\Seen' },
            {
              any: [
                { path: 'from', op: 'contains', value: 'ada@' },
                { path: 'size', op: 'lt', value: 1000 },
              ],
            },
          ],
        },
        [11],
      ],
    ];
    for (const [where, expected] of cases) {
      expect(uids(await executor.invoke({ entries: mail, where })), JSON.stringify(where)).toEqual(expected);
    }
  });

  it('keeps at most limit entries and handles an empty list', async () => {
    expect(uids(await executor.invoke({ entries: mail, where_field: 'flags', limit: 2 }))).toEqual([11, 12]);
    expect(await executor.invoke({ entries: [], where_field: 'spam', where_value: 'spam' })).toMatchObject({
      ok: true,
      content: { entries: [], count: 0, total: 0 },
    });
  });

  it('gives typed failures for bad conditions and paths', async () => {
    expect(await executor.invoke({ entries: mail })).toMatchObject({
      ok: false,
      error: { class: 'BadCondition' },
    });
    expect(
      await executor.invoke({ entries: mail, where: { path: 'uid', op: 'in', value: 3 } }),
    ).toMatchObject({ ok: false, error: { class: 'BadCondition' } });
    expect(await executor.invoke({ entries: mail, where: { path: 'a..b', op: 'exists' } })).toMatchObject({
      ok: false,
      error: { class: 'BadPath' },
    });
    expect(
      await executor.invoke({ entries: mail, where: { path: 'uid', op: 'matches', value: '.*' } }),
    ).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    let deep: Record<string, unknown> = { path: 'uid', op: 'exists' };
    for (let level = 0; level < 8; level++) deep = { all: [deep] };
    expect(await executor.invoke({ entries: mail, where: deep })).toMatchObject({
      ok: false,
      error: { class: 'BadCondition' },
    });
  });

  it('survives hostile entries: __proto__ keys, deep nesting, a huge list', async () => {
    const hostile = JSON.parse(
      '[{"__proto__": {"polluted": "yes"}, "name": "a"}, {"constructor": {"prototype": {"polluted": "yes"}}, "name": "b"}]',
    );
    const proto = await executor.invoke({
      entries: hostile,
      where: { path: '__proto__.polluted', op: 'exists' },
    });
    expect(uids(proto)).toEqual([undefined]);
    const inherited = await executor.invoke({
      entries: [{ name: 'plain' }],
      where: {
        any: [
          { path: 'constructor', op: 'exists' },
          { path: 'toString', op: 'exists' },
        ],
      },
    });
    expect(inherited).toMatchObject({ ok: true, content: { count: 0 } });
    let nested: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 80; level++) nested = { next: nested };
    expect(await executor.invoke({ entries: [nested], where_field: 'leaf' })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    const huge = Array.from({ length: 20001 }, (_, index) => ({ index }));
    expect(await executor.invoke({ entries: huge, where_field: 'index' })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    const many = Array.from({ length: 20000 }, (_, index) => ({ index, even: index % 2 === 0 }));
    expect(await executor.invoke({ entries: many, where_field: 'even', where_value: true })).toMatchObject({
      ok: true,
      content: { count: 10000, total: 20000 },
    });
  });
});
