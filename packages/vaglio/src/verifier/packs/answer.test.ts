import { describe, expect, it } from 'vitest';
import { answer, entryOf, failed, input, ok, outcomeOf } from '../../__fixtures__/verifier.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();
const write = ok(
  'step1',
  'fs_write',
  { path: 'notes.md', text: 'milk' },
  { bytes: 4 },
  { sideEffects: true },
);
const writeFailed = failed('step1', 'fs_write', { path: 'notes.md' }, 'Timeout', { sideEffects: true });

function check(message: string, evidence = [write]) {
  return verifier.verify(input({ candidate: answer(message), evidence }));
}

describe('rules.answer.v1', () => {
  it('answer.non-empty blocks an empty or blank message', () => {
    expect(entryOf(check(''), 'answer.non-empty')).toMatchObject({
      outcome: 'block',
      reason: 'the final message is empty',
    });
    expect(outcomeOf(check(' \n\t '), 'answer.non-empty')).toBe('block');
    expect(outcomeOf(check('Saved notes.md.'), 'answer.non-empty')).toBe('pass');
  });

  it('answer.no-placeholders blocks ${…} left unresolved, closed or not', () => {
    expect(entryOf(check('It is ${step1.content.iso}'), 'answer.no-placeholders')).toMatchObject({
      outcome: 'block',
      reason: 'unresolved placeholders: "${step1.content.iso}"',
    });
    expect(outcomeOf(check('Hello ${FILLER:greeting'), 'answer.no-placeholders')).toBe('block');
    expect(outcomeOf(check('It costs $5 {per month}'), 'answer.no-placeholders')).toBe('pass');
  });

  it('answer.claimed-action blocks an action no step with side effects reported', () => {
    const read = ok('step1', 'fs_read', { path: 'notes.md' }, { text: 'milk' });
    expect(entryOf(check("I've saved notes.md", [read]), 'answer.claimed-action')).toMatchObject({
      outcome: 'block',
      reason: 'claims "saved", but no step with side effects ran',
    });
    expect(entryOf(check('Sent the list to Ada.', [writeFailed]), 'answer.claimed-action')).toMatchObject({
      outcome: 'block',
      reason: 'claims "sent", but every step with side effects failed: step1 (fs_write: Timeout)',
    });
    expect(outcomeOf(check('Ho salvato le note.', [read]), 'answer.claimed-action')).toBe('block');
    expect(outcomeOf(check('The file has been saved.', [read]), 'answer.claimed-action')).toBe('block');
  });

  it('answer.claimed-action passes reported actions, negations and other people’s actions', () => {
    const read = ok('step1', 'mail_read', { folder: 'inbox' }, { from: 'bob@example.org' });
    expect(outcomeOf(check('I saved notes.md.'), 'answer.claimed-action')).toBe('pass');
    expect(outcomeOf(check('I have not sent anything.', [read]), 'answer.claimed-action')).toBe('pass');
    expect(outcomeOf(check("I couldn't send it.", [read]), 'answer.claimed-action')).toBe('pass');
    expect(outcomeOf(check('The mail you sent on Monday was read.', [read]), 'answer.claimed-action')).toBe(
      'pass',
    );
    expect(outcomeOf(check('Non ho inviato nulla.', [read]), 'answer.claimed-action')).toBe('pass');
    expect(outcomeOf(check('Ho letto i file salvati ieri.', [read]), 'answer.claimed-action')).toBe('pass');
  });

  it('answer.failure-acknowledged warns when a step failed for good and the message hides it', () => {
    const missing = failed('step1', 'fs_read', { path: 'todo.md' }, 'NotFound');
    expect(entryOf(check('Here are your notes.', [missing]), 'answer.failure-acknowledged')).toMatchObject({
      outcome: 'warn',
      reason: 'step1 (fs_read: NotFound) failed and the message does not say so',
    });
    expect(outcomeOf(check('todo.md was not found.', [missing]), 'answer.failure-acknowledged')).toBe('pass');
    expect(
      outcomeOf(check('Non è stato possibile leggere todo.md.', [missing]), 'answer.failure-acknowledged'),
    ).toBe('pass');
    const retried = [
      failed('step1', 'fs_read', { path: 'todo.md' }, 'Timeout'),
      ok('step2', 'fs_read', { path: 'todo.md' }, { text: 'milk' }),
    ];
    expect(outcomeOf(check('todo.md says milk.', retried), 'answer.failure-acknowledged')).toBe('pass');
  });
});
