import { describe, expect, it } from 'vitest';
import { answer, entryOf, failed, input, ok, outcomeOf } from '../../__fixtures__/verifier.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();
const listing = ok(
  'step1',
  'fs_list',
  { path: '~/metnos/notes' },
  { entries: [{ name: 'a.md' }, { name: 'b.txt' }], root: '/home/ada/metnos/notes' },
);

function check(message: string, evidence = [listing]) {
  return verifier.verify(input({ rulePack: 'rules.files.v1', candidate: answer(message), evidence }));
}

describe('rules.files.v1', () => {
  it('files.path-in-evidence passes paths a successful step reported, however written', () => {
    for (const message of [
      'You have a.md and b.txt.',
      'Open notes/a.md.',
      'Open ~/metnos/notes/a.md.',
      'Open /home/ada/metnos/notes/b.txt.',
    ])
      expect(outcomeOf(check(message), 'files.path-in-evidence')).toBe('pass');
  });

  it('files.path-in-evidence blocks a file no successful step reported', () => {
    expect(entryOf(check('You have a.md and report.pdf.'), 'files.path-in-evidence')).toMatchObject({
      outcome: 'block',
      reason: 'names files no successful step reported: "report.pdf"',
    });
    expect(outcomeOf(check('See /etc/hosts.'), 'files.path-in-evidence')).toBe('block');
  });

  it('files.path-in-evidence allows a file only a failed step touched when the message says it failed', () => {
    const missing = failed('step1', 'fs_read', { path: 'todo.md' }, 'NotFound');
    expect(entryOf(check('todo.md says: call Bob.', [missing]), 'files.path-in-evidence')).toMatchObject({
      outcome: 'block',
      reason:
        'names files no successful step reported: "todo.md" (only step1 (fs_read: NotFound) touched it)',
    });
    expect(outcomeOf(check('todo.md was not found.', [missing]), 'files.path-in-evidence')).toBe('pass');
  });

  it('files.path-in-evidence reads no path in plain words, links, fractions or product names', () => {
    const read = ok(
      'step1',
      'web_fetch',
      { url: 'https://nodejs.org/en/about' },
      { text: 'Node.js is a runtime' },
    );
    const message =
      'Node.js, per https://nodejs.org/en/about (terms: https://nodejs.org/terms.html), runs JavaScript and/or TypeScript at 1/2 the cost.';
    expect(outcomeOf(check(message, [read]), 'files.path-in-evidence')).toBe('pass');
  });

  it('files.changed-file-reported blocks a saved file that is not the one a step wrote', () => {
    const wrote = ok('step2', 'fs_write', { path: 'notes/summary.md' }, { bytes: 10 }, { sideEffects: true });
    const evidence = [listing, wrote];
    expect(outcomeOf(check('Saved notes/summary.md.', evidence), 'files.changed-file-reported')).toBe('pass');
    expect(
      outcomeOf(check('I saved the summary of a.md to summary.md.', evidence), 'files.changed-file-reported'),
    ).toBe('pass');
    expect(entryOf(check('I saved a.md.', evidence), 'files.changed-file-reported')).toMatchObject({
      outcome: 'block',
      reason: 'says a file changed, but no successful step with side effects touched "a.md"',
    });
    expect(outcomeOf(check('I sent a.md to Ada.', evidence), 'files.changed-file-reported')).toBe('pass');
  });
});
