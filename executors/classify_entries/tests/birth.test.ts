import { join } from 'node:path';
import type { HostService, HostServiceCall } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

type Entry = Record<string, unknown> & { uid: number };

/** Mail as a mail search returns it, marked the ways real spam filters mark it. */
const mailbox: Entry[] = [
  {
    uid: 1,
    folder: 'INBOX',
    from: 'Prize Desk <win@prizes.example>',
    subject: 'You have won',
    headers: {
      'x-spam-flag': 'YES',
      'x-spam-status': 'Yes, score=7.3 required=5.0 tests=BAYES_99',
      'x-spam-level': '*******',
    },
  },
  {
    uid: 2,
    folder: 'INBOX',
    from: 'Pharmacy <rx@pills.example>',
    subject: 'Cheap meds',
    headers: { 'X-Spam-Status': 'No, score=6.1 required=5.0' },
  },
  { uid: 3, folder: 'INBOX', from: 'Deals <d@deals.example>', subject: '[SPAM] Limited offer', headers: {} },
  { uid: 4, folder: 'INBOX', from: 'Deals <d@deals.example>', subject: '***SPAM*** Act now', headers: {} },
  {
    uid: 5,
    folder: 'INBOX',
    from: 'Ada <ada@example.org>',
    subject: 'Lunch?',
    headers: { 'x-spam-flag': 'NO', 'x-spam-status': 'No, score=-1.2 required=5.0' },
  },
  {
    uid: 6,
    folder: 'INBOX',
    from: 'Bob <bob@example.org>',
    subject: 'Minutes of the meeting',
    headers: { 'x-spam-status': 'No, score=0.4 required=5.0' },
  },
];

/** Mail no filter has looked at: the rules cannot decide, the model is asked. */
const unmarked: Entry[] = [
  {
    uid: 7,
    from: 'Lottery <l@lotto.example>',
    subject: 'Claim your prize now',
    snippet: 'Send your bank details',
  },
  { uid: 8, from: 'Carol <carol@example.org>', subject: 'Photos from the trip', snippet: 'Here they are' },
];

/** A host `model` service that labels entries mentioning a prize as spam, and keeps what it was asked. */
function fakeModel(answer?: (prompt: string) => string) {
  const calls: HostServiceCall[] = [];
  const service: HostService = (call) => {
    calls.push(call);
    const prompt = String((call.body as { prompt: string }).prompt);
    if (answer) return { ok: true, value: { text: answer(prompt) } };
    const labels = prompt
      .split('\n')
      .filter((line) => line.startsWith('{"i":'))
      .map((line) => JSON.parse(line) as { i: number; subject?: string })
      .map((item) => ({ i: item.i, label: /prize|won/i.test(item.subject ?? '') ? 'spam' : 'not_spam' }));
    return { ok: true, value: { text: `Here you are:\n${JSON.stringify(labels)}` } };
  };
  return { service, calls };
}

function verdicts(result: Awaited<ReturnType<typeof executor.invoke>>, dimension = 'spam') {
  if (!result.ok) throw new Error(JSON.stringify(result));
  const { entries } = result.content as {
    entries: Array<Record<string, Record<string, string>> & { uid: number }>;
  };
  return entries.map((entry) => [entry.uid, entry.classes![dimension], entry.decided_by![dimension]]);
}

describe('classify_entries birth', () => {
  it('decides mail marked by spam filters with rules alone and asks the model nothing', async () => {
    const model = fakeModel();
    const result = await executor.invoke(
      { entries: mailbox, dimension: 'spam' },
      { hostServices: { model: model.service } },
    );
    expect(verdicts(result)).toEqual([
      [1, 'spam', 'rule'],
      [2, 'spam', 'rule'],
      [3, 'spam', 'rule'],
      [4, 'spam', 'rule'],
      [5, 'not_spam', 'rule'],
      [6, 'not_spam', 'rule'],
    ]);
    expect(model.calls).toHaveLength(0);
    expect(result).toMatchObject({
      ok: true,
      content: {
        summary: {
          labels: { spam: 4, not_spam: 2 },
          decided: { rule: 6, model: 0, undecided: 0 },
          model_requests: 0,
        },
      },
    });
    const first =
      (result.ok && (result.content as { entries: Array<Record<string, unknown>> }).entries[0]) || {};
    expect(first).toMatchObject({ ...mailbox[0], reasons: { spam: 'X-Spam-Flag: YES' } });
  });

  it('sends only the entries the rules leave undecided to the model, in one request', async () => {
    const model = fakeModel();
    const result = await executor.invoke(
      { entries: [...mailbox, ...unmarked], dimension: 'spam' },
      { hostServices: { model: model.service } },
    );
    expect(verdicts(result).slice(6)).toEqual([
      [7, 'spam', 'model'],
      [8, 'not_spam', 'model'],
    ]);
    expect(model.calls).toHaveLength(1);
    const prompt = String((model.calls[0]!.body as { prompt: string }).prompt);
    expect(prompt).toContain('Claim your prize now');
    expect(prompt).toContain('Photos from the trip');
    for (const decided of mailbox) expect(prompt).not.toContain(String(decided.subject));
    expect(model.calls[0]!.executor.name).toBe('classify_entries');
    expect(result).toMatchObject({
      ok: true,
      content: { summary: { decided: { rule: 6, model: 2, undecided: 0 }, model_requests: 1 } },
    });
  });

  it('leaves entries undecided, and says why, when the model is not offered, refuses or answers nonsense', async () => {
    const alone = await executor.invoke({ entries: unmarked, dimension: 'spam' });
    expect(verdicts(alone)).toEqual([
      [7, 'undecided', 'undecided'],
      [8, 'undecided', 'undecided'],
    ]);
    expect(alone).toMatchObject({
      content: { summary: { model_note: 'no host services reach this sandbox' } },
    });

    const spent: HostService = () => ({
      ok: false,
      error: { class: 'BudgetExhausted', message: 'no more model calls' },
    });
    const refused = await executor.invoke(
      { entries: unmarked, dimension: 'spam' },
      { hostServices: { model: spent } },
    );
    expect(refused).toMatchObject({
      content: {
        summary: { decided: { undecided: 2 }, model_note: expect.stringContaining('BudgetExhausted') },
      },
    });

    const injected = fakeModel(
      () => '[{"i": 1, "label": "delete_everything"}, {"i": 2, "label": "spam"}, {"i": 9, "label": "spam"}]',
    );
    const odd = await executor.invoke(
      { entries: unmarked, dimension: 'spam' },
      { hostServices: { model: injected.service } },
    );
    expect(verdicts(odd)).toEqual([
      [7, 'undecided', 'undecided'],
      [8, 'spam', 'model'],
    ]);

    const rulesOnly = fakeModel();
    const without = await executor.invoke(
      { entries: unmarked, dimension: 'spam', use_model: false },
      { hostServices: { model: rulesOnly.service } },
    );
    expect(rulesOnly.calls).toHaveLength(0);
    expect(without).toMatchObject({ content: { summary: { model_requests: 0, decided: { undecided: 2 } } } });
  });

  it('reads newsletters, urgency and personal mail from headers, and keeps earlier labels', async () => {
    const mail: Entry[] = [
      {
        uid: 1,
        subject: 'Weekly digest',
        headers: { 'list-unsubscribe': '<mailto:u@news.example>' },
        classes: { spam: 'not_spam' },
      },
      { uid: 2, subject: 'Re: our plans', headers: { 'in-reply-to': '<a@b>' } },
      { uid: 3, subject: 'Server down', headers: { 'x-priority': '1 (Highest)' } },
      { uid: 4, subject: 'Your receipt', from: 'no-reply@shop.example', headers: {} },
    ];
    const newsletter = await executor.invoke({ entries: mail, dimension: 'newsletter', use_model: false });
    expect(verdicts(newsletter, 'newsletter')).toEqual([
      [1, 'newsletter', 'rule'],
      [2, 'not_newsletter', 'rule'],
      [3, 'undecided', 'undecided'],
      [4, 'undecided', 'undecided'],
    ]);
    expect(verdicts(newsletter, 'spam')[0]).toEqual([1, 'not_spam', undefined]);
    expect(
      verdicts(await executor.invoke({ entries: mail, dimension: 'urgent', use_model: false }), 'urgent'),
    ).toEqual([
      [1, 'not_urgent', 'rule'],
      [2, 'undecided', 'undecided'],
      [3, 'urgent', 'rule'],
      [4, 'undecided', 'undecided'],
    ]);
    expect(
      verdicts(await executor.invoke({ entries: mail, dimension: 'personal', use_model: false }), 'personal'),
    ).toEqual([
      [1, 'not_personal', 'rule'],
      [2, 'personal', 'rule'],
      [3, 'undecided', 'undecided'],
      [4, 'not_personal', 'rule'],
    ]);
  });

  it('asks the model for a dimension of the user’s own, and refuses bad dimensions and labels', async () => {
    const model = fakeModel((prompt) =>
      prompt.includes('family, work') ? '[{"i":1,"label":"family"},{"i":2,"label":"work"}]' : '[]',
    );
    const result = await executor.invoke(
      { entries: unmarked, dimension: 'topic', labels: ['family', 'work'] },
      { hostServices: { model: model.service } },
    );
    expect(verdicts(result, 'topic')).toEqual([
      [7, 'family', 'model'],
      [8, 'work', 'model'],
    ]);
    expect(await executor.invoke({ entries: unmarked, dimension: 'topic' })).toMatchObject({
      ok: false,
      error: { class: 'BadLabels' },
    });
    expect(
      await executor.invoke({ entries: unmarked, dimension: 'topic', labels: ['a', 'undecided'] }),
    ).toMatchObject({
      ok: false,
      error: { class: 'BadLabels' },
    });
    expect(
      await executor.invoke({ entries: unmarked, dimension: '__proto__', labels: ['a', 'b'] }),
    ).toMatchObject({
      ok: false,
      error: { class: 'BadDimension' },
    });
  });

  it('handles hostile entries without reaching a prototype', async () => {
    const hostile = JSON.parse(
      '[{"uid": 1, "__proto__": {"polluted": true}, "classes": {"__proto__": {"polluted": true}}, "headers": {"__proto__": "x", "x-spam-flag": "YES"}}]',
    );
    const result = await executor.invoke({ entries: hostile, dimension: 'spam' });
    expect(verdicts(result)).toEqual([[1, 'spam', 'rule']]);
    const big = Array.from({ length: 5001 }, (_, uid) => ({ uid }));
    expect(await executor.invoke({ entries: big, dimension: 'spam' })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });
});
