import { describe, expect, it } from 'vitest';
import { answer, entryOf, input, ok } from '../../__fixtures__/verifier.ts';
import type { VerifyInput } from '../shapes.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();
const listing = ok(
  'step1',
  'fs_list',
  { path: 'invoices' },
  {
    entries: [
      { name: 'march.pdf', size: 12_480, from: 'billing@acme.example' },
      { name: 'april.pdf', size: 9_310.5, title: 'April rent' },
      { name: 'may.pdf', size: 7_002 },
    ],
  },
);

function probe(message: string, extra: Partial<VerifyInput> = {}) {
  const verdict = verifier.verify(input({ candidate: answer(message), evidence: [listing], ...extra }));
  return entryOf(verdict, 'probe.hallucination');
}

describe('probe.hallucination', () => {
  it('passes numbers, files, addresses and quoted names the evidence holds, however written', () => {
    for (const message of [
      'march.pdf is 12,480 bytes; april.pdf 9,310.50 bytes.',
      'march.pdf pesa 12.480 byte.',
      'There are 3 invoices in invoices/.',
      'March came from billing@acme.example, April is titled "April rent".',
      'You have 2 big ones.',
    ])
      expect(probe(message), message).toEqual({
        class: 'probe',
        rule: 'probe.hallucination',
        outcome: 'pass',
      });
  });

  it('counts the length of a list as a number the evidence holds', () => {
    const names = [...'abcdefghijkl'].map((letter) => `${letter}.jpg`);
    const photos = ok('step2', 'fs_list', { path: 'photos' }, { names });
    expect(probe('You have 12 photos.', { evidence: [photos] }).outcome).toBe('pass');
    expect(probe('You have 13 photos.', { evidence: [photos] }).outcome).toBe('warn');
  });

  it('counts the request and the pinned runtime values as sources', () => {
    const message = 'As of 2026-04-27 10:42 you have 3 invoices, Ada; June 2025 is not among them.';
    expect(probe(message).outcome).toBe('warn');
    expect(
      probe(message, {
        request: 'which invoices since June 2025?',
        runtime: { now: '2026-04-27T10:42:00Z', actor: 'Ada' },
      }).outcome,
    ).toBe('pass');
  });

  it('warns on numbers, files, addresses, links and quoted names no evidence holds', () => {
    const entry = probe(
      'june.pdf costs 1,234 EUR, sent by "Acme Billing" from pay@acme.example; see https://acme.example/pay.',
    );
    expect(entry.outcome).toBe('warn');
    expect(entry.reason).toBe(
      'names what no evidence holds: link "https://acme.example/pay", address "pay@acme.example", file "june.pdf", number "1,234" and name "Acme Billing"',
    );
  });

  it('blocks a candidate that cites evidence that does not exist', () => {
    const verdict = verifier.verify(
      input({ candidate: answer('march.pdf is there.', ['step1', 'step7']), evidence: [listing] }),
    );
    expect(entryOf(verdict, 'probe.hallucination')).toMatchObject({
      outcome: 'block',
      reason: 'cites evidence that does not exist: "step7"',
    });
  });
});
