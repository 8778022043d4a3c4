import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bindSlots, extractSlots, fingerprint, locateSlots, normalizeRequest, templatize } from './slots.ts';

const values = (request: string) => extractSlots(request).map((slot) => `${slot.name}=${slot.value}`);

describe('extractSlots finds the literal values of a request', () => {
  it('finds URLs without trailing punctuation', () => {
    expect(values('open https://example.com/a?b=1, then http://x.org/p.')).toEqual([
      'url_1=https://example.com/a?b=1',
      'url_2=http://x.org/p',
    ]);
    expect(values('see (https://example.com/x) and "https://q.com/y"')).toEqual([
      'url_1=https://example.com/x',
      'url_2=https://q.com/y',
    ]);
    expect(values('ftp://example.com/x')).not.toContain('url_1=ftp://example.com/x');
  });

  it('finds e-mail addresses', () => {
    expect(values('mail ada.l+x@mail.example.co and bob@x.io')).toEqual([
      'email_1=ada.l+x@mail.example.co',
      'email_2=bob@x.io',
    ]);
    expect(values('ada@localhost')).not.toContain('email_1=ada@localhost');
  });

  it('finds quoted text in every quote style, without the quotes', () => {
    expect(values('search "tax 2024" and “draft” and «note» and \'ab\'')).toEqual([
      'quoted_1=tax 2024',
      'quoted_2=draft',
      'quoted_3=note',
      'quoted_4=ab',
    ]);
    expect(values("'a'")).toEqual([]);
    expect(values('"a\nb"')).toEqual([]);
    expect(values(`"${'x'.repeat(201)}"`)).toEqual([]);
    expect(values(`"${'x'.repeat(200)}"`)).toEqual([`quoted_1=${'x'.repeat(200)}`]);
  });

  it('finds absolute, home and relative paths and file names with known extensions', () => {
    expect(values('read ~/notes/a.md, /etc/hosts and ./x/y then ../up.')).toEqual([
      'path_1=~/notes/a.md',
      'path_2=/etc/hosts',
      'path_3=./x/y',
      'path_4=../up',
    ]);
    expect(
      values('open report-1.pdf and data/2024.csv and a.yaml and b.yml and c.jpeg and d.jpg and e.htm'),
    ).toEqual([
      'path_1=report-1.pdf',
      'path_2=data/2024.csv',
      'path_3=a.yaml',
      'path_4=b.yml',
      'path_5=c.jpeg',
      'path_6=d.jpg',
      'path_7=e.htm',
    ]);
    expect(values('file.unknown')).toEqual([]);
    expect(
      values('a.docx b.xlsx c.toml d.sh e.py f.ts g.js h.xml i.log j.txt k.json l.png m.html n.doc o.xls'),
    ).toHaveLength(15);
  });

  it('finds dates, times and numbers', () => {
    expect(values('on 2026-05-02 at 7:30 or 19:05:09, 3 times, -2.5 and 1,5')).toEqual([
      'date_1=2026-05-02',
      'time_1=7:30',
      'time_2=19:05:09',
      'number_1=3',
      'number_2=-2.5',
      'number_3=1,5',
    ]);
    expect(values('v2 x3y 3-4 .5 2026-5-02')).toEqual([]);
    expect(values('at 123:45')).toEqual(['number_1=123', 'number_2=45']);
  });

  it('finds capitalised names after a lower-case word or punctuation', () => {
    expect(values('write to Ada Lovelace, Bob and then: Eve Noël')).toEqual([
      'name_1=Ada Lovelace',
      'name_2=Bob',
      'name_3=Eve Noël',
    ]);
    expect(values('Ada wrote')).toEqual([]);
    expect(values('to ADA')).toEqual([]);
  });

  it('lets earlier kinds win where matches overlap, and numbers each kind in order', () => {
    expect(values('send https://a.com/3 to a@b.co with "3 items" and 3')).toEqual([
      'url_1=https://a.com/3',
      'email_1=a@b.co',
      'quoted_1=3 items',
      'number_1=3',
    ]);
  });

  it('locates each slot in the request', () => {
    expect(locateSlots('move a.md to "Archive"')).toEqual([
      { kind: 'path', value: 'a.md', start: 5, end: 9, name: 'path_1' },
      { kind: 'quoted', value: 'Archive', start: 13, end: 22, name: 'quoted_1' },
    ]);
    expect(locateSlots('nothing here')).toEqual([]);
  });
});

describe('normalizeRequest and fingerprint', () => {
  it('replaces slots by their kind, lowercases, strips accents and punctuation, and squeezes spaces', () => {
    expect(normalizeRequest('  Read ~/notes/a.md, and SHOW 3 lines!  ')).toBe(
      'read <path> and show <number> lines',
    );
    expect(normalizeRequest('Café  déjà-vu')).toBe('cafe deja vu');
    expect(normalizeRequest('find https://x.com/a and https://x.com/ab')).toBe('find <url> and <url>');
    expect(normalizeRequest('snake_case')).toBe('snake_case');
  });

  it('hashes the normalised form, so requests that differ only in their values share a fingerprint', () => {
    expect(fingerprint('read a.md')).toBe(
      createHash('sha256').update('read <path>').digest('hex').slice(0, 32),
    );
    expect(fingerprint('Read b.txt!')).toBe(fingerprint('read a.md'));
    expect(fingerprint('read a.md')).toHaveLength(32);
    expect(fingerprint('delete a.md')).not.toBe(fingerprint('read a.md'));
  });
});

describe('templatize and bindSlots', () => {
  const request = 'move report.pdf to "Archive" and keep 3 copies of 2.5';

  it('puts slot names into the parts of a plan that carry values, leaving structure alone', () => {
    const plan = {
      id: 'report.pdf',
      steps: [
        {
          id: 's1',
          tool: 'fs_move',
          args: { path: 'report.pdf', to: 'Archive', keep: 3, ratio: 2.5 },
          draft: 'Archive',
        },
        'not a step',
      ],
      fillers: { folder: { prompt: 'Where is Archive?', default: 'Archive', kind: 'Archive' } },
      final_message: 'Moved report.pdf',
      policy: { branch: [{ when: 'Archive', final_message: 'Archive full' }], other: 'Archive' },
    };
    const { template, slots } = templatize(plan, request);
    expect(template).toEqual({
      id: 'report.pdf',
      steps: [
        {
          id: 's1',
          tool: 'fs_move',
          args: {
            path: '${SLOT:path_1}',
            to: '${SLOT:quoted_1}',
            keep: '${SLOT:number_1}',
            ratio: '${SLOT:number_2}',
          },
          draft: '${SLOT:quoted_1}',
        },
        'not a step',
      ],
      fillers: {
        folder: { prompt: 'Where is ${SLOT:quoted_1}?', default: '${SLOT:quoted_1}', kind: 'Archive' },
      },
      final_message: 'Moved ${SLOT:path_1}',
      policy: { branch: [{ when: 'Archive', final_message: '${SLOT:quoted_1} full' }], other: 'Archive' },
    });
    expect(slots).toEqual(['number_1', 'number_2', 'path_1', 'quoted_1']);
  });

  it('templates a value that is not a plan whole, and replaces numbers only as whole numbers', () => {
    expect(templatize(['keep 3 copies', 'v3', '3.5', 'x 3', 3, 4, null, true], 'keep 3 copies')).toEqual({
      template: [
        'keep ${SLOT:number_1} copies',
        'v3',
        '3.5',
        'x ${SLOT:number_1}',
        '${SLOT:number_1}',
        4,
        null,
        true,
      ],
      slots: ['number_1'],
    });
    expect(templatize({ a: 'no values' }, 'plain words')).toEqual({
      template: { a: 'no values' },
      slots: [],
    });
    expect(templatize({ steps: [], fillers: null, policy: { branch: 'x' } }, 'a.md')).toEqual({
      template: { steps: [], fillers: null, policy: { branch: 'x' } },
      slots: [],
    });
    expect(templatize(1.5, 'ratio 1,5').template).toBe('${SLOT:number_1}');
  });

  it('replaces the longer value first, so a value inside another stays whole', () => {
    const { template } = templatize({ a: 'notes/a.md and a.md' }, 'copy notes/a.md to a.md');
    expect(template).toEqual({ a: '${SLOT:path_1} and ${SLOT:path_2}' });
  });

  it('binds the slots from a new request, numbers back to numbers', () => {
    const { template, slots } = templatize(
      { steps: [{ args: { path: 'report.pdf', keep: 3, label: 'keep 3', to: 'Archive' } }] },
      request,
    );
    expect(bindSlots(template, slots, 'move plan.pdf to "Old" and keep 7 copies of 1,5')).toEqual({
      plan: { steps: [{ args: { path: 'plan.pdf', keep: 7, label: 'keep 7', to: 'Old' } }] },
      values: { path_1: 'plan.pdf', quoted_1: 'Old', number_1: '7', number_2: '1,5' },
    });
    expect(bindSlots({ n: '${SLOT:number_2}' }, ['number_2'], 'keep 7 copies of 1,5')?.plan).toEqual({
      n: 1.5,
    });
  });

  it('refuses a request that lacks a slot the template needs, and leaves unknown slots as written', () => {
    expect(bindSlots({ a: '${SLOT:path_1}' }, ['path_1'], 'no file here')).toBeUndefined();
    expect(bindSlots({ a: '${SLOT:path_2} ${SLOT:path_1}', b: [1, null] }, ['path_1'], 'read a.md')).toEqual({
      plan: { a: '${SLOT:path_2} a.md', b: [1, null] },
      values: { path_1: 'a.md' },
    });
  });
});
