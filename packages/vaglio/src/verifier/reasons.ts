const MAX_QUOTE = 40;
const MAX_ITEMS = 5;

/** A candidate's word as a reason shows it: in quotes, cut to 40 characters, on one line. */
export function quote(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return `"${line.length > MAX_QUOTE ? `${line.slice(0, MAX_QUOTE - 1)}…` : line}"`;
}

/** `a, b, c and 2 more`: a list a short reason can hold. */
export function listSome(items: readonly string[]): string {
  const shown = items.slice(0, MAX_ITEMS);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}
