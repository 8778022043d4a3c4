import { describe, expect, it } from 'vitest';
import {
  actionClaimsIn,
  filePathsIn,
  mentionsFailure,
  numberReadings,
  placeholdersIn,
  quotedIn,
  samePath,
} from './text-patterns.ts';

describe('verifier text readers', () => {
  it('find file paths, not links, addresses, fractions or plain words with slashes', () => {
    expect(
      filePathsIn(
        'Saved ~/notes/a.md, ./b.txt and report.PDF (see https://x.org/c.md, ada@x.org, 1/2, and/or).',
      ),
    ).toEqual(['~/notes/a.md', './b.txt', 'report.PDF']);
    expect(filePathsIn('Look in /etc/hosts and `src/main.ts`.')).toEqual(['/etc/hosts', 'src/main.ts']);
    expect(filePathsIn('Version 1.2, e.g. Node.js and v2.0.1')).toEqual([]);
  });

  it('compare paths at / boundaries', () => {
    expect(samePath('notes/a.md', '/home/ada/metnos/notes/a.md')).toBe(true);
    expect(samePath('~/notes/a.md', 'notes/a.md')).toBe(true);
    expect(samePath('a.md', 'data.md')).toBe(false);
    expect(samePath('', 'a.md')).toBe(false);
  });

  it('read numbers in English and Italian notation alike', () => {
    expect(numberReadings('1,234.5')).toContain('1234.5');
    expect(numberReadings('1.234,5')).toContain('1234.5');
    expect(numberReadings('3.50')).toContain('3.5');
    expect(numberReadings('007')).toContain('7');
  });

  it('find placeholders and quoted names', () => {
    expect(placeholdersIn('a ${step1.x} b ${FILLER:y')).toEqual(['${step1.x}', '${FILLER:y']);
    expect(quotedIn('titled “April rent” and "X" and `npm test`')).toEqual(['April rent', 'npm test']);
  });

  it('find claimed actions in English and Italian, skipping negations and other people', () => {
    expect(actionClaimsIn('i sent it')).toEqual(['sent']);
    expect(actionClaimsIn("I've sent it. Saved to a.md. It has been deleted.")).toEqual([
      'sent',
      'deleted',
      'saved',
    ]);
    expect(actionClaimsIn('Ho inviato la mail. È stato salvato. Sono stati creati.')).toEqual([
      'inviato',
      'salvato',
      'creati',
    ]);
    expect(
      actionClaimsIn("I haven't sent it; I did not save it; the file you saved; non ho inviato"),
    ).toEqual([]);
  });

  it('tell a failure owned up to from a plain message', () => {
    for (const text of [
      "I couldn't read it",
      'notes.md was not found',
      'the call timed out',
      'non è stato possibile',
    ])
      expect(mentionsFailure(text), text).toBe(true);
    for (const text of ['Here are your notes', 'Errands: milk', 'non-stop flights'])
      expect(mentionsFailure(text), text).toBe(false);
  });
});
