import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

type Mode = 'whole' | 'head' | 'tail' | 'range';

interface Args {
  path: string;
  mode?: Mode;
  lines?: number;
  start_line?: number;
  end_line?: number;
  start_byte?: number;
  end_byte?: number;
  max_bytes?: number;
  encoding?: 'utf8' | 'base64';
}

interface Output {
  path: string;
  mode: Mode;
  content: string;
  encoding: 'utf8' | 'base64';
  size: number;
  mtime: string;
  bytes_returned: number;
  start_line?: number;
  end_line?: number;
  total_lines?: number;
  start_byte?: number;
  end_byte?: number;
  truncated: boolean;
  binary: boolean;
}

const CHUNK_BYTES = 64 * 1024;
/** Files up to this size get their lines counted, so tail can say which line numbers it returns. */
const COUNT_LINES_UP_TO = 32 * 1024 * 1024;
const NEWLINE = 0x0a;

function failureForCode(error: unknown, path: string): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    throw new ExecutorFailure('NotFound', `${path} does not exist`);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    throw new ExecutorFailure('PermissionDenied', `${path} cannot be read (${code})`);
  }
  if (code === 'EISDIR') throw new ExecutorFailure('IsADirectory', `${path} is a directory; use fs_list`);
  if (code === 'ELOOP') throw new ExecutorFailure('NotFound', `${path} is a loop of symbolic links`);
  throw error;
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Bytes of lines `from`..`to` (1-based, inclusive), stopping once more than `limit` bytes are gathered. */
async function readLines(handle: FileHandle, from: number, to: number, limit: number): Promise<Buffer> {
  const pieces: Buffer[] = [];
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let gathered = 0;
  let line = 1;
  let position = 0;
  while (line <= to && gathered <= limit) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const view = chunk.subarray(0, bytesRead);
    let start = 0;
    while (start < bytesRead && line <= to && gathered <= limit) {
      const newline = view.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytesRead : newline + 1;
      if (line >= from) {
        pieces.push(Buffer.from(view.subarray(start, end)));
        gathered += end - start;
      }
      if (newline !== -1) line++;
      start = end;
    }
    position += bytesRead;
  }
  return Buffer.concat(pieces);
}

/** The offset where the last `count` lines of the file begin. */
async function tailOffset(handle: FileHandle, size: number, count: number): Promise<number> {
  let position = size;
  let seen = 0;
  let skipFinalNewline = true;
  while (position > 0) {
    const length = Math.min(CHUNK_BYTES, position);
    position -= length;
    const chunk = await readAt(handle, position, length);
    for (let index = chunk.length - 1; index >= 0; index--) {
      if (chunk[index] !== NEWLINE) {
        skipFinalNewline = false;
        continue;
      }
      if (skipFinalNewline) {
        skipFinalNewline = false;
        continue;
      }
      seen++;
      if (seen === count) return position + index + 1;
    }
  }
  return 0;
}

function countLines(buffer: Buffer): number {
  if (buffer.length === 0) return 0;
  let count = 0;
  let index = buffer.indexOf(NEWLINE);
  while (index !== -1) {
    count++;
    index = buffer.indexOf(NEWLINE, index + 1);
  }
  return buffer[buffer.length - 1] === NEWLINE ? count : count + 1;
}

async function countFileLines(handle: FileHandle, size: number): Promise<number | undefined> {
  if (size > COUNT_LINES_UP_TO) return undefined;
  return countLines(await readAt(handle, 0, size));
}

/** Backs `end` off to the start of a UTF-8 character so text is never cut mid-character. */
function utf8Boundary(buffer: Buffer, end: number): number {
  let cut = Math.min(end, buffer.length);
  while (cut > 0 && cut < buffer.length && (buffer[cut]! & 0xc0) === 0x80) cut--;
  return cut;
}

/** Keeps the leading complete lines that fit in `limit` bytes (or a character-safe cut of one long line). */
function keepHead(buffer: Buffer, limit: number): { kept: Buffer; truncated: boolean } {
  if (buffer.length <= limit) return { kept: buffer, truncated: false };
  const lastNewline = buffer.subarray(0, limit).lastIndexOf(NEWLINE);
  const cut = lastNewline === -1 ? utf8Boundary(buffer, limit) : lastNewline + 1;
  return { kept: buffer.subarray(0, cut), truncated: true };
}

/** Drops the partial first line of `buffer` (it started before the bytes read), keeping at least a character-safe cut. */
function dropPartialLine(buffer: Buffer): Buffer {
  const newline = buffer.indexOf(NEWLINE);
  let start = newline !== -1 && newline < buffer.length - 1 ? newline + 1 : 0;
  while (start < buffer.length && (buffer[start]! & 0xc0) === 0x80) start++;
  return buffer.subarray(start);
}

function looksBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, 8192).includes(0);
}

function encode(buffer: Buffer, encoding: 'utf8' | 'base64'): string {
  return encoding === 'base64'
    ? buffer.toString('base64')
    : new TextDecoder('utf-8', { fatal: false }).decode(buffer);
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const mode = args.mode ?? 'whole';
    const encoding = args.encoding ?? 'utf8';
    const maxBytes = args.max_bytes ?? 1024 * 1024;
    const path = await resolveAllowedPath(args.path, ctx, { roots: ctx.profile.fs.read, verb: 'read' });
    const shown = displayPath(path, ctx);

    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      failureForCode(error, shown);
    }
    try {
      const stats = await handle.stat().catch((error: unknown) => failureForCode(error, shown));
      if (stats.isDirectory()) {
        throw new ExecutorFailure('IsADirectory', `${shown} is a directory; use fs_list`);
      }
      if (!stats.isFile()) throw new ExecutorFailure('PermissionDenied', `${shown} is not a regular file`);
      const size = stats.size;
      const base = { path: shown, mode, encoding, size, mtime: stats.mtime.toISOString() };

      const finish = (bytes: Buffer, extra: Partial<Output> & { truncated: boolean }): Output => ({
        ...base,
        content: encode(bytes, encoding),
        bytes_returned: bytes.length,
        binary: looksBinary(bytes),
        ...extra,
      });
      const lineSpan = (first: number, bytes: Buffer) => {
        const count = countLines(bytes);
        return count === 0 ? {} : { start_line: first, end_line: first + count - 1 };
      };

      const readFailure = (error: unknown) => failureForCode(error, shown);

      if (mode === 'whole') {
        if (size > maxBytes) {
          throw new ExecutorFailure(
            'TooLarge',
            `${shown} is ${size} bytes, above max_bytes ${maxBytes}; read part of it with mode "head", "tail" or "range"`,
          );
        }
        const bytes = await readAt(handle, 0, size).catch(readFailure);
        return ok(finish(bytes, { truncated: false, total_lines: countLines(bytes), ...lineSpan(1, bytes) }));
      }

      if (mode === 'head') {
        const raw = await readLines(handle, 1, args.lines ?? 20, maxBytes).catch(readFailure);
        const { kept, truncated } = keepHead(raw, maxBytes);
        return ok(finish(kept, { truncated, ...lineSpan(1, kept) }));
      }

      if (mode === 'tail') {
        const offset = await tailOffset(handle, size, args.lines ?? 20).catch(readFailure);
        const start = Math.max(offset, size - maxBytes);
        let kept = await readAt(handle, start, size - start).catch(readFailure);
        const truncated = start > offset;
        if (truncated) {
          const [before] = await readAt(handle, start - 1, 1).catch(readFailure);
          if (before !== NEWLINE) kept = dropPartialLine(kept);
        }
        const total = await countFileLines(handle, size).catch(readFailure);
        if (total === undefined) return ok(finish(kept, { truncated }));
        return ok(
          finish(kept, { truncated, total_lines: total, ...lineSpan(total - countLines(kept) + 1, kept) }),
        );
      }

      const byLines = args.start_line !== undefined || args.end_line !== undefined;
      const byBytes = args.start_byte !== undefined || args.end_byte !== undefined;
      if (byLines === byBytes) {
        throw new ExecutorFailure(
          'BadRange',
          'mode "range" needs either start_line/end_line or start_byte/end_byte (exactly one of the two kinds)',
        );
      }
      if (byLines) {
        const from = args.start_line ?? 1;
        const to = args.end_line ?? Number.MAX_SAFE_INTEGER;
        if (to < from) throw new ExecutorFailure('BadRange', `end_line ${to} is before start_line ${from}`);
        const raw = await readLines(handle, from, to, maxBytes).catch(readFailure);
        const { kept, truncated } = keepHead(raw, maxBytes);
        return ok(finish(kept, { truncated, ...lineSpan(from, kept) }));
      }
      const start = args.start_byte ?? 0;
      if (start > size) {
        throw new ExecutorFailure(
          'BadRange',
          `start_byte ${start} is past the end of the file (${size} bytes)`,
        );
      }
      const end = Math.min(args.end_byte ?? Math.min(size, start + maxBytes), size);
      if (end < start) throw new ExecutorFailure('BadRange', `end_byte ${end} is before start_byte ${start}`);
      if (end - start > maxBytes) {
        throw new ExecutorFailure(
          'TooLarge',
          `the range is ${end - start} bytes, above max_bytes ${maxBytes}`,
        );
      }
      const bytes = await readAt(handle, start, end - start).catch(readFailure);
      return ok(finish(bytes, { truncated: false, start_byte: start, end_byte: start + bytes.length }));
    } finally {
      await handle.close();
    }
  },
});
