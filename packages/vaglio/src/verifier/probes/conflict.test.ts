import { describe, expect, it } from 'vitest';
import { answer, entryOf, input, ok } from '../../__fixtures__/verifier.ts';
import type { EvidenceInput } from '../shapes.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();

function probe(evidence: EvidenceInput[]) {
  return entryOf(verifier.verify(input({ candidate: answer('Your balance.'), evidence })), 'probe.conflict');
}

const balance = (id: string, amount: number, args: unknown = { account: 'main' }) =>
  ok(id, 'bank_balance', args, { amount });

describe('probe.conflict', () => {
  it('warns when the same read returned different results', () => {
    expect(probe([balance('step1', 120), balance('step2', 95)])).toMatchObject({
      outcome: 'warn',
      reason: 'the same call returned different results in step1 and step2 (bank_balance)',
    });
  });

  it('reads arguments canonically: key order does not make a different call', () => {
    const first = balance('step1', 120, { account: 'main', currency: 'EUR' });
    const second = balance('step2', 95, { currency: 'EUR', account: 'main' });
    expect(probe([first, second]).outcome).toBe('warn');
  });

  it('passes agreeing reads, different calls, and reads a successful write stands between', () => {
    expect(probe([balance('step1', 120), balance('step2', 120)]).outcome).toBe('pass');
    expect(probe([balance('step1', 120), balance('step2', 95, { account: 'savings' })]).outcome).toBe('pass');
    const transfer = ok('step2', 'bank_transfer', { amount: 25 }, { done: true }, { sideEffects: true });
    expect(probe([balance('step1', 120), transfer, balance('step3', 95)]).outcome).toBe('pass');
  });
});
