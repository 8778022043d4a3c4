import { describe, expect, it } from 'vitest';
import { answer, entryOf, failed, input, ok } from '../../__fixtures__/verifier.ts';
import type { EvidenceInput } from '../shapes.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();
const read = ok('step1', 'fs_read', { path: 'notes.md' }, { text: 'milk' });

function probe(message: string, evidence: EvidenceInput[], cites?: string[]) {
  return entryOf(verifier.verify(input({ candidate: answer(message, cites), evidence })), 'probe.policy');
}

describe('probe.policy', () => {
  it('passes when no step was refused', () => {
    expect(probe('notes.md says milk.', [read]).outcome).toBe('pass');
  });

  it('blocks a refused step the answer stays silent about', () => {
    const refused = failed('step2', 'fs_delete', { path: 'notes.md' }, 'PolicyViolation', {
      sideEffects: true,
    });
    expect(probe('notes.md says milk.', [read, refused])).toMatchObject({
      outcome: 'block',
      reason: 'step2 (fs_delete: PolicyViolation) was refused and the candidate does not say so',
    });
    expect(probe('I could not delete notes.md: it was refused.', [read, refused]).outcome).toBe('pass');
  });

  it('blocks an answer that cites a refused step, and a result from a call the vaglio did not approve', () => {
    const notApproved = ok('step2', 'shell_run', { command: 'ls' }, { out: 'a b' }, { approved: false });
    expect(probe('Blocked, but here it is: a b.', [read, notApproved], ['step2']).reason).toBe(
      'step2 carries a result although the vaglio did not approve the call; the candidate cites step2, which policy refused',
    );
  });

  it('treats Forbidden, PermissionDenied, Unauthorized and Blocked as refusals, NotFound as a plain failure', () => {
    for (const errorClass of ['Forbidden', 'PermissionDenied', 'Unauthorized', 'Blocked'])
      expect(probe('Done.', [failed('step1', 'web_fetch', {}, errorClass)]).outcome, errorClass).toBe(
        'block',
      );
    expect(probe('Done.', [failed('step1', 'fs_read', {}, 'NotFound')]).outcome).toBe('pass');
  });
});
