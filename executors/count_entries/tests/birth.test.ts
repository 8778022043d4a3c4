import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

const mail = [
  { uid: 1, from: 'ada@example.org', folder: 'INBOX', flags: ['\\Seen'], classes: { spam: 'not_spam' } },
  { uid: 2, from: 'deals@bargains.example', folder: 'INBOX', flags: [], classes: { spam: 'spam' } },
  {
    uid: 3,
    from: 'ada@example.org',
    folder: 'Work',
    flags: ['\\Seen', '\\Flagged', '\\Seen'],
    classes: { spam: 'not_spam' },
  },
  { uid: 4, from: 'deals@bargains.example', folder: 'INBOX', classes: { spam: 'spam' } },
  { uid: 5, from: 'news@weekly.example', folder: 'INBOX', flags: ['\\Seen'] },
];

describe('count_entries birth', () => {
  it('counts the total alone', async () => {
    expect(await executor.invoke({ entries: mail })).toEqual(
      expect.objectContaining({ ok: true, content: { total: 5, groups: [], distinct: 0, missing: 0 } }),
    );
  });

  it('groups by a field, the largest first, ties in first-seen order, and counts the missing', async () => {
    expect(await executor.invoke({ entries: mail, by: 'from' })).toMatchObject({
      ok: true,
      content: {
        total: 5,
        groups: [
          { value: 'ada@example.org', count: 2 },
          { value: 'deals@bargains.example', count: 2 },
          { value: 'news@weekly.example', count: 1 },
        ],
        distinct: 3,
        missing: 0,
      },
    });
    // the label classify_entries added, by its bare name
    expect(await executor.invoke({ entries: mail, by: 'spam' })).toMatchObject({
      ok: true,
      content: {
        groups: [
          { value: 'not_spam', count: 2 },
          { value: 'spam', count: 2 },
        ],
        missing: 1,
      },
    });
  });

  it('counts a list value once under each distinct element, and keeps the top groups', async () => {
    expect(await executor.invoke({ entries: mail, by: 'flags', top: 1 })).toMatchObject({
      ok: true,
      content: { groups: [{ value: '\\Seen', count: 3 }], distinct: 2, missing: 1 },
    });
  });

  it('never reaches a prototype: __proto__ and constructor values are plain groups', async () => {
    const hostile = JSON.parse(
      '[{"kind": "__proto__"}, {"kind": "constructor"}, {"kind": "__proto__"}, {"__proto__": {"kind": "x"}}]',
    );
    expect(await executor.invoke({ entries: hostile, by: 'kind' })).toMatchObject({
      ok: true,
      content: {
        groups: [
          { value: '__proto__', count: 2 },
          { value: 'constructor', count: 1 },
        ],
        missing: 1,
      },
    });
    expect(await executor.invoke({ entries: [{ a: 1 }], by: 'constructor' })).toMatchObject({
      ok: true,
      content: { groups: [], missing: 1 },
    });
    expect(await executor.invoke({ entries: mail, by: '.from' })).toMatchObject({
      ok: false,
      error: { class: 'BadPath' },
    });
    const huge = Array.from({ length: 20001 }, () => ({}));
    expect(await executor.invoke({ entries: huge })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });
});
