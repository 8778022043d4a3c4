import { inventory } from './arguments.ts';

/** Shorter fragments are left alone: they say nothing and would shred ordinary words. */
const MIN_FRAGMENT = 4;
const MASK = '[…]';

/**
 * Removes argument values from a free-text reason (an LLM judge's, or a
 * custom judge's): whole values and their words of four characters or more
 * become `[…]`. The vaglio's own reasons never contain values to begin with.
 *
 * @example
 * redactValues('it reads sk-live-123 from ~/notes', { token: 'sk-live-123' }); // 'it reads […] from ~/notes'
 */
export function redactValues(reason: string, args: unknown): string {
  const fragments = new Set<string>();
  for (const entry of inventory(args).strings) {
    if (entry.role !== 'value') continue;
    if (entry.text.length >= MIN_FRAGMENT && reason.includes(entry.text)) fragments.add(entry.text);
    for (const word of entry.text.split(/[\s'"`]+/)) {
      if (word.length >= MIN_FRAGMENT && reason.includes(word)) fragments.add(word);
    }
  }
  let result = reason;
  for (const fragment of [...fragments].sort((a, b) => b.length - a.length))
    result = result.split(fragment).join(MASK);
  return result;
}
