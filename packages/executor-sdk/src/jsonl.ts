import { open } from 'node:fs/promises';

const NEWLINE = 0x0a;

/**
 * Appends one JSON line to a log file, always on a line of its own: when the
 * file ends in a partial line (a crash or a full disk cut the last write
 * short), a newline is written first, so the new record is never glued onto
 * the broken one. The file is created with `mode` when it does not exist.
 *
 * @example
 * await appendJsonLine('/home/ada/.local/share/metnos/turns/2026-05-02.jsonl', JSON.stringify(entry));
 */
export async function appendJsonLine(
  file: string,
  line: string,
  options: { mode?: number } = {},
): Promise<void> {
  const handle = await open(file, 'a+', options.mode ?? 0o644);
  try {
    const { size } = await handle.stat();
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      if (last[0] !== NEWLINE) prefix = '\n';
    }
    await handle.write(`${prefix}${line}\n`);
  } finally {
    await handle.close();
  }
}

/** What {@link readJsonLines} found: the records in order, and how many lines it could not read. */
export interface JsonLines {
  records: unknown[];
  /** Lines that are not JSON (a partial last write, a hand edit); skipped, never fatal. */
  skipped: number;
}

/**
 * Reads the records of a JSONL text, one per line. Blank lines are ignored;
 * a line that does not parse is skipped and counted, so one broken line
 * never hides the others.
 *
 * @example
 * readJsonLines('{"a":1}\n{"a":\n{"a":2}\n'); // { records: [{ a: 1 }, { a: 2 }], skipped: 1 }
 */
export function readJsonLines(text: string): JsonLines {
  const records: unknown[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line));
    } catch {
      skipped++;
    }
  }
  return { records, skipped };
}
