import { describe, expect, it } from 'vitest';
import { extractIntent, intentFromRules } from './intent.ts';
import { extractQualifiers } from './qualifiers.ts';
import { canReuse, describeRequest, pinnedSlots, type RememberedShape, reuseFilter } from './request-key.ts';

describe('extractQualifiers', () => {
  it.each([
    ['read notes/diary.md and tell me the first 3 lines', ['position:first']],
    ['show the tail of notes/diary.md', ['position:last']],
    ['leggi le ultime 3 righe di notes/diario.md', ['position:last']],
    ['find the largest file in notes', ['size:largest']],
    ['find the biggest file in notes', ['size:largest']],
    ['open the most recent log', ['age:newest']],
    ['list the meetings for tomorrow', ['day:tomorrow']],
    ['sort the list in descending order', ['order:descending']],
    ['files that are not empty', ['polarity:not']],
    ["files that aren't empty", ['polarity:not']],
    ['read the last three lines', ['number:3', 'position:last']],
    ['send the report to anna on friday', ['to:anna', 'weekday:friday']],
    ['copy notes/a.md to notes/b.md', ['to:path_2']],
    ['copy from notes/a.md to notes/b.md', ['from:path_1', 'to:path_2']],
    ['show me the second line of notes/diary.md', ['ordinal:2']],
    ['list the files changed before march', ['month:march', 'relation:before']],
    ['list the files larger than 10 MB', ['comparison:more']],
    ['show the mail from anna or marco', ['from:anna', 'logic:any']],
    ['I want to read the diary', []],
    ['i need to know my balance', []],
    ['how to transfer my 401k', []],
    ['i need you to increase your speaker volume', []],
    ['do i have enough fuel to take me home', []],
    ['you ought to be landing soon', []],
    ['how do i get to the station', ['to:station']],
    ['i want to send the report to anna', ['to:anna']],
    ['move the meeting to friday', ['to:friday', 'weekday:friday']],
    ['call an uber to mark', ['to:mark']],
    ['read notes/diary.md', []],
  ])('%s → %j', (request, expected) => {
    expect(extractQualifiers(request)).toEqual(expected);
  });

  it('tells apart requests that differ in where "to" and "from" point', () => {
    expect(extractQualifiers('convert 10 euro to dollars')).not.toEqual(
      extractQualifiers('convert 10 dollars to euro'),
    );
    expect(extractQualifiers('copy from a.md to b.md')).not.toEqual(
      extractQualifiers('copy to a.md from b.md'),
    );
    expect(extractQualifiers('show the mail from anna')).not.toEqual(
      extractQualifiers('show the mail to anna'),
    );
  });

  it('names a place by its special use: the bin is the trash, the archive is not', () => {
    expect(extractQualifiers('move the junk mail to the bin')).toEqual(['to:trash']);
    expect(extractQualifiers('find the spam mail and move it to trash')).toEqual(['to:trash']);
    expect(extractQualifiers('move the spam to the archive')).toEqual(['to:archive']);
    expect(extractQualifiers('move it to spam')).toEqual(['to:junk']);
  });
});

describe('the intent keeps the qualifiers the model leaves out', () => {
  it('gives "first" and "last" two intents even when the model answers the same for both', async () => {
    const model = {
      id: 'same',
      provider: 'test',
      generate: async () => ({
        text: '{"verb":"read","object":"file","qualifiers":["diary"]}',
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1 },
      }),
    };
    const first = await extractIntent('read diary.md and tell me the first 3 lines', { model });
    const last = await extractIntent('read diary.md and tell me the last 3 lines', { model });
    expect(first).toMatchObject({
      verb: 'read',
      object: 'file',
      qualifiers: ['position:first'],
      keywords: ['diary'],
    });
    expect(last.qualifiers).toEqual(['position:last']);
    expect(first.hash).not.toBe(last.hash);
    expect(intentFromRules('read diary.md first 3 lines').hash).not.toBe(
      intentFromRules('read diary.md last 3 lines').hash,
    );
  });
});

describe('canReuse', () => {
  const remembered = { qualifiers: ['position:last'], slots: ['number_1', 'path_1'], pinned: {} };

  it('replays a plan for a request with the same qualifiers and slots, whatever their values', () => {
    expect(
      canReuse(remembered, describeRequest('read b.md and tell me the last 9 lines'), 'meaning'),
    ).toEqual({
      ok: true,
    });
  });

  it('refuses other qualifiers, other slots, and a pinned slot with another value', () => {
    expect(
      canReuse(remembered, describeRequest('read a.md and tell me the first 3 lines'), 'exact'),
    ).toMatchObject({
      ok: false,
      reason: expect.stringContaining('qualifiers differ'),
    });
    expect(
      canReuse(remembered, describeRequest('read the last lines of the diary'), 'meaning'),
    ).toMatchObject({
      ok: false,
      reason: expect.stringContaining('slots differ'),
    });
    const key = describeRequest('remind me in 5 minutes');
    const pinned = { qualifiers: [], slots: [], pinned: pinnedSlots([], key) };
    expect(pinned.pinned).toEqual({ number_1: '5' });
    expect(canReuse(pinned, describeRequest('remind me in 5 minutes please'), 'meaning')).toEqual({
      ok: true,
    });
    expect(canReuse(pinned, describeRequest('remind me in 10 minutes'), 'meaning')).toMatchObject({
      ok: false,
      reason: 'number_1 was "5", now "10"',
    });
  });

  it('replays a plan learned before qualifiers were kept on an exact fingerprint only', () => {
    const legacy = { qualifiers: undefined, slots: ['path_1'], pinned: {} };
    expect(canReuse(legacy, describeRequest('read a.md'), 'exact')).toEqual({ ok: true });
    expect(canReuse(legacy, describeRequest('read a.md'), 'meaning')).toMatchObject({ ok: false });
  });
});

describe('reuseFilter', () => {
  it('names, for each request, exactly the plans canReuse refuses it', () => {
    const entries: Array<RememberedShape & { id: string }> = [
      { id: 'head-a', qualifiers: ['position:first'], slots: ['path_1'], pinned: {} },
      { id: 'head-b', qualifiers: ['position:first'], slots: ['path_1'], pinned: {} },
      { id: 'tail', qualifiers: ['position:last'], slots: ['path_1'], pinned: {} },
      { id: 'five', qualifiers: [], slots: [], pinned: { number_1: '5' } },
      { id: 'legacy', qualifiers: undefined, slots: ['path_1'], pinned: {} },
    ];
    const excluded = reuseFilter(entries);
    for (const request of [
      'read the first lines of a.md',
      'read the last lines of b.md',
      'remind me in 5 minutes',
      'remind me in 10 minutes',
    ]) {
      const key = describeRequest(request);
      const refused = entries.filter((entry) => !canReuse(entry, key, 'meaning').ok).map((entry) => entry.id);
      expect([...excluded(key)].sort()).toEqual(refused.sort());
    }
    expect([...excluded(describeRequest('read the first lines of a.md'))].sort()).toEqual([
      'five',
      'legacy',
      'tail',
    ]);
  });
});
