import { defineExecutor, ok } from '@metnos/executor-sdk/define';

interface Args {
  text: string;
  head?: number;
  tail?: number;
}

interface Output {
  lines: number;
  words: number;
  chars: number;
  bytes: number;
  blank_lines: number;
  longest_line: number;
  head: string[];
  tail: string[];
}

/** Lines as a reader sees them: "a\nb" and "a\nb\n" both have two, "" has none. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function countCodePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export default defineExecutor<Args, Output>({
  run(args) {
    const lines = splitLines(args.text);
    const head = args.head ?? 0;
    const tail = args.tail ?? 0;
    return ok({
      lines: lines.length,
      words: args.text.match(/\S+/gu)?.length ?? 0,
      chars: countCodePoints(args.text),
      bytes: Buffer.byteLength(args.text, 'utf8'),
      blank_lines: lines.filter((line) => line.trim() === '').length,
      longest_line: lines.reduce((longest, line) => Math.max(longest, countCodePoints(line)), 0),
      head: head > 0 ? lines.slice(0, head) : [],
      tail: tail > 0 ? lines.slice(-tail) : [],
    });
  },
});
