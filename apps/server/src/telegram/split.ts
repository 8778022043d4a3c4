import { TELEGRAM_MESSAGE_LIMIT } from './client.ts';

/**
 * `text` cut into pieces of at most `limit` UTF-16 code units (Telegram's
 * count), each cut at the last line break, else the last space, inside the
 * limit, and never inside a surrogate pair. Empty text is one empty piece.
 *
 * @example
 * splitMessage('a'.repeat(5000)).map((piece) => piece.length); // [4096, 904]
 */
export function splitMessage(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  if (limit < 2) throw new RangeError('the limit must be at least 2');
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf('\n', limit);
    if (cut < limit / 2) {
      const space = rest.lastIndexOf(' ', limit);
      cut = space >= limit / 2 ? space : limit;
    }
    if (cut === limit && isHighSurrogate(rest.charCodeAt(cut - 1))) cut -= 1;
    const piece = rest.slice(0, cut);
    rest = rest.slice(cut);
    // The line break or space cut at starts the next piece; drop it there.
    if (rest.startsWith('\n') || rest.startsWith(' ')) rest = rest.slice(1);
    pieces.push(piece);
  }
  pieces.push(rest);
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
