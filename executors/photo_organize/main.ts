import type { Stats } from 'node:fs';
import { lstat, open, opendir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  folder?: string;
  by?: 'exif' | 'mtime';
  recursive?: boolean;
  extensions?: string[];
  max_files?: number;
}

interface Move {
  op: 'move';
  from: string;
  to: string;
}

interface Output {
  folder: string;
  operations: Move[];
  organised: number;
  already_sorted: number;
  skipped: number;
  dated_by: { exif: number; mtime: number };
  truncated: boolean;
}

const PHOTO_EXTENSIONS = [
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'heic',
  'heif',
  'tif',
  'tiff',
  'dng',
  'cr2',
  'nef',
  'arw',
  'raf',
  'orf',
];
/** A year folder, and a month folder inside it: what this executor makes, and leaves alone. */
const YEAR = /^(19|20)\d{2}$/;
const MONTH = /^(0[1-9]|1[0-2])$/;
/** EXIF lives in the first 64 KiB segment; reading a bit more covers the JPEG markers before it. */
const HEAD_BYTES = 128 * 1024;

/** A 16- or 32-bit unsigned integer of a TIFF structure, in its byte order; undefined past the end. */
function reader(bytes: Buffer, start: number, little: boolean) {
  return {
    u16: (at: number) =>
      start + at + 2 <= bytes.length
        ? little
          ? bytes.readUInt16LE(start + at)
          : bytes.readUInt16BE(start + at)
        : undefined,
    u32: (at: number) =>
      start + at + 4 <= bytes.length
        ? little
          ? bytes.readUInt32LE(start + at)
          : bytes.readUInt32BE(start + at)
        : undefined,
  };
}

/** The value offset of `tag` in the IFD at `ifd` (TIFF-relative), and its count; undefined when absent. */
function findTag(
  read: ReturnType<typeof reader>,
  ifd: number,
  tag: number,
): { type: number; count: number; value: number } | undefined {
  const entries = read.u16(ifd);
  if (entries === undefined || entries > 1000) return undefined;
  for (let index = 0; index < entries; index++) {
    const at = ifd + 2 + index * 12;
    if (read.u16(at) !== tag) continue;
    const type = read.u16(at + 2);
    const count = read.u32(at + 4);
    if (type === undefined || count === undefined) return undefined;
    // values of four bytes or fewer sit in the entry itself; longer ones at the offset it holds
    const value = count <= 4 && type === 2 ? at + 8 : read.u32(at + 8);
    return value === undefined ? undefined : { type, count, value };
  }
  return undefined;
}

/** EXIF DateTimeOriginal ("YYYY:MM:DD HH:MM:SS") from a TIFF structure starting at `start`. */
function tiffDateTimeOriginal(bytes: Buffer, start: number): { year: string; month: string } | undefined {
  const order = bytes.toString('latin1', start, start + 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const read = reader(bytes, start, order === 'II');
  if (read.u16(2) !== 42) return undefined;
  const ifd0 = read.u32(4);
  if (ifd0 === undefined) return undefined;
  const pointer = findTag(read, ifd0, 0x8769);
  if (!pointer) return undefined;
  const date = findTag(read, pointer.value, 0x9003);
  if (date?.type !== 2 || date.count < 19) return undefined;
  const text = bytes.toString('latin1', start + date.value, start + date.value + 19);
  const parts = /^(\d{4}):(\d{2}):(\d{2}) \d{2}:\d{2}:\d{2}$/.exec(text);
  if (!parts || !YEAR.test(parts[1]!) || !MONTH.test(parts[2]!)) return undefined;
  return { year: parts[1]!, month: parts[2]! };
}

/**
 * The EXIF date a photo was taken, read from the file's first bytes: a JPEG's
 * APP1 "Exif" segment, or a TIFF-based file (TIFF, DNG and most raw formats)
 * whose header is the TIFF structure itself. Undefined when there is none.
 */
function exifDate(bytes: Buffer): { year: string; month: string } | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 4 <= bytes.length && bytes[at] === 0xff) {
      const marker = bytes[at + 1]!;
      // start of scan or end of image: no metadata after this point
      if (marker === 0xda || marker === 0xd9) return undefined;
      const length = bytes.readUInt16BE(at + 2);
      if (length < 2) return undefined;
      if (marker === 0xe1 && bytes.toString('latin1', at + 4, at + 10) === 'Exif\0\0') {
        const segment = bytes.subarray(0, Math.min(bytes.length, at + 2 + length));
        return tiffDateTimeOriginal(segment, at + 10);
      }
      at += 2 + length;
    }
    return undefined;
  }
  return tiffDateTimeOriginal(bytes, 0);
}

async function head(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const bytes = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(bytes, 0, HEAD_BYTES, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function failureForCode(error: unknown, shown: string): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') throw new ExecutorFailure('NotFound', `${shown} does not exist`);
  if (code === 'ENOTDIR') throw new ExecutorFailure('NotADirectory', `${shown} is not a folder`);
  if (code === 'EACCES' || code === 'EPERM')
    throw new ExecutorFailure('PermissionDenied', `${shown} cannot be read (${code})`);
  throw error;
}

/** The photos of a folder (and, with `recursive`, of its sub-folders), in name order; hidden names skipped. */
async function photosOf(
  root: string,
  options: { recursive: boolean; extensions: Set<string>; limit: number },
): Promise<{ files: Array<{ path: string; stats: Stats }>; skipped: number; truncated: boolean }> {
  const files: Array<{ path: string; stats: Stats }> = [];
  let skipped = 0;
  let truncated = false;
  const walk = async (dir: string): Promise<void> => {
    const names: string[] = [];
    for await (const entry of await opendir(dir)) names.push(entry.name);
    names.sort();
    for (const name of names) {
      if (files.length >= options.limit) {
        truncated = true;
        return;
      }
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      const stats = await lstat(path);
      if (stats.isDirectory()) {
        if (options.recursive) await walk(path);
        continue;
      }
      const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
      // links are never followed or moved, and a file with a second name could be one of a secret
      if (!stats.isFile() || stats.nlink > 1 || !options.extensions.has(extension)) {
        skipped++;
        continue;
      }
      files.push({ path, stats });
    }
  };
  await walk(root);
  return { files, skipped, truncated };
}

/** `name` in `folder`, or `name (2)`, `name (3)` … the first that neither exists nor is taken by this plan. */
async function freeName(folder: string, name: string, taken: Set<string>): Promise<string> {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const extension = dot > 0 ? name.slice(dot) : '';
  for (let attempt = 1; attempt < 10_000; attempt++) {
    const candidate = join(folder, attempt === 1 ? name : `${stem} (${attempt})${extension}`);
    if (taken.has(candidate)) continue;
    const exists = await lstat(candidate).then(
      () => true,
      () => false,
    );
    if (!exists) return candidate;
  }
  throw new ExecutorFailure('PermissionDenied', `no free name for ${name} in ${folder}`);
}

function workspaceRelative(path: string, ctx: { workspace: string }): string {
  return relative(ctx.workspace, path).split(sep).join('/');
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const input = args.folder ?? '.';
    const root = await resolveAllowedPath(input, ctx, { roots: ctx.profile.fs.read, verb: 'read' });
    const shown = displayPath(root, ctx);
    const rootStats = await lstat(root).catch((error: unknown) => failureForCode(error, shown));
    if (!rootStats.isDirectory()) throw new ExecutorFailure('NotADirectory', `${shown} is not a folder`);
    const extensions = new Set(
      (args.extensions ?? PHOTO_EXTENSIONS).map((extension) => extension.toLowerCase()),
    );
    const { files, skipped, truncated } = await photosOf(root, {
      recursive: args.recursive ?? false,
      extensions,
      limit: args.max_files ?? 10_000,
    }).catch((error: unknown) => failureForCode(error, shown));

    const operations: Move[] = [];
    const taken = new Set<string>();
    const datedBy = { exif: 0, mtime: 0 };
    let alreadySorted = 0;
    for (const file of files) {
      let date =
        args.by === 'mtime' ? undefined : exifDate(await head(file.path).catch(() => Buffer.alloc(0)));
      if (date) datedBy.exif++;
      else {
        const mtime = file.stats.mtime;
        date = {
          year: String(mtime.getUTCFullYear()).padStart(4, '0'),
          month: String(mtime.getUTCMonth() + 1).padStart(2, '0'),
        };
        datedBy.mtime++;
      }
      const folder = join(root, date.year, date.month);
      const name = file.path.slice(file.path.lastIndexOf(sep) + 1);
      if (join(folder, name) === file.path) {
        alreadySorted++;
        continue;
      }
      const target = await freeName(folder, name, taken);
      taken.add(target);
      operations.push({
        op: 'move',
        from: workspaceRelative(file.path, ctx),
        to: workspaceRelative(target, ctx),
      });
    }
    return ok({
      folder: shown,
      operations,
      organised: operations.length,
      already_sorted: alreadySorted,
      skipped,
      dated_by: datedBy,
      truncated,
    });
  },
});
