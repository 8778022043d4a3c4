import type { Candidate } from './shapes.ts';
import { stringsIn } from './sources.ts';

/**
 * The message a candidate would show the person (`''` when its kind has
 * none). Built-in kinds always have one.
 *
 * @example
 * messageOf({ kind: 'answer', message: 'Done.' }); // 'Done.'
 */
export function messageOf(candidate: Candidate): string {
  return typeof candidate.message === 'string' ? candidate.message : '';
}

/** The evidence ids a candidate cites (`[]` when it cites none). */
export function citesOf(candidate: Candidate): string[] {
  const cites = candidate.cites;
  return Array.isArray(cites) ? cites.filter((cite): cite is string => typeof cite === 'string') : [];
}

/**
 * Every string value of a candidate that a person would read: all but
 * `kind` and `cites`, keys excluded.
 *
 * @example
 * candidateTexts({ kind: 'mail', message: 'Sending.', mail: { to: ['a@x.org'], subject: 'Hi', body: 'Hello' } });
 * // ['Sending.', 'a@x.org', 'Hi', 'Hello']
 */
export function candidateTexts(candidate: Candidate): string[] {
  const { kind: _kind, cites: _cites, ...readable } = candidate;
  return stringsIn([readable], { keys: false });
}
