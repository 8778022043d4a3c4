import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import {
  defineExecutor,
  displayPath,
  type ExecutorContext,
  ExecutorFailure,
  isInside,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

type Format = 'zip' | 'tar' | 'tar.gz';
type EntryType = 'file' | 'directory' | 'symlink' | 'hardlink';

interface Args {
  path: string;
  destination?: string;
  format?: Format | 'auto';
  overwrite?: boolean;
  list_only?: boolean;
}

interface ListedEntry {
  name: string;
  type: EntryType;
  size: number;
  link?: string;
}

interface Output {
  archive: string;
  destination?: string;
  format: Format;
  extracted: boolean;
  files: number;
  directories: number;
  links: number;
  bytes: number;
  entries: ListedEntry[];
  entries_truncated: boolean;
  skipped: Array<{ name: string; reason: string }>;
}

/** One member of an archive, before anything is written. */
interface Entry {
  /** The name as stored, for messages. */
  raw: string;
  /** The checked, normalised relative name (`a/b/c`). */
  name: string;
  type: EntryType;
  size: number;
  mode: number;
  mtime?: Date;
  /** Symbolic link target as stored, or the normalised name a hard link points to. */
  link?: string;
  /** Compressed bytes (zip), for the ratio check. */
  compressed?: number;
  /** The entry's bytes, checked against its declared size and (zip) CRC. */
  data(): Buffer;
}

interface Limits {
  archiveBytes: number;
  totalBytes: number;
  entries: number;
  ratio: number;
}

/** Hard ceilings; an instance may set lower ones in its settings, never higher. */
const CEILING: Limits = {
  archiveBytes: 128 * 1024 * 1024,
  totalBytes: 128 * 1024 * 1024,
  entries: 10_000,
  ratio: 200,
};
/** Entries (and archives) smaller than this are never refused for their compression ratio. */
const RATIO_FLOOR_BYTES = 1024 * 1024;
const MAX_NAME_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;
const MAX_DEPTH = 64;
const LISTED = 200;
const RESERVED = ['.audit'];

// ---------------------------------------------------------------------------
// Names and links

/** Checks a stored name and returns it normalised, or undefined for the archive's root itself. */
function safeName(raw: string): string | undefined {
  if (raw.includes('\0')) throw new ExecutorFailure('UnsafeEntry', `an entry name contains a NUL byte`);
  const shown = JSON.stringify(raw.slice(0, 200));
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new ExecutorFailure('UnsafeEntry', `entry ${shown} has an absolute name; nothing was extracted`);
  }
  const parts: string[] = [];
  for (const segment of name.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      throw new ExecutorFailure(
        'UnsafeEntry',
        `entry ${shown} climbs out of the destination with ".."; nothing was extracted`,
      );
    }
    if (/\p{Cc}/u.test(segment)) {
      throw new ExecutorFailure('UnsafeEntry', `entry ${shown} has control characters in its name`);
    }
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      throw new ExecutorFailure(
        'UnsafeEntry',
        `entry ${shown} has a name part longer than ${MAX_SEGMENT_BYTES} bytes`,
      );
    }
    parts.push(segment);
  }
  if (parts.length === 0) return undefined;
  const joined = parts.join('/');
  if (parts.length > MAX_DEPTH || Buffer.byteLength(joined) > MAX_NAME_BYTES) {
    throw new ExecutorFailure('UnsafeEntry', `entry ${shown} is nested too deep or named too long`);
  }
  return joined;
}

/**
 * A symbolic link may point only inside the destination: a relative target,
 * `..` only at its start, landing inside the destination from the link's
 * folder. (A `..` after a name could climb out through another link.)
 */
function checkSymlink(entry: Entry): void {
  const target = entry.link ?? '';
  const shown = `${JSON.stringify(entry.name)} → ${JSON.stringify(target.slice(0, 200))}`;
  if (
    target === '' ||
    target.includes('\0') ||
    target.startsWith('/') ||
    /^[A-Za-z]:/.test(target) ||
    target.includes('\\')
  ) {
    throw new ExecutorFailure(
      'UnsafeEntry',
      `symbolic link ${shown} points outside the destination; nothing was extracted`,
    );
  }
  const segments = target.split('/').filter((segment) => segment !== '' && segment !== '.');
  const firstName = segments.findIndex((segment) => segment !== '..');
  if (firstName !== -1 && segments.slice(firstName).includes('..')) {
    throw new ExecutorFailure(
      'UnsafeEntry',
      `symbolic link ${shown} climbs with ".." after a name; nothing was extracted`,
    );
  }
  const landing = posix.normalize(posix.join('/root', posix.dirname(entry.name), target));
  if (landing !== '/root' && !landing.startsWith('/root/')) {
    throw new ExecutorFailure(
      'UnsafeEntry',
      `symbolic link ${shown} points outside the destination; nothing was extracted`,
    );
  }
}

// ---------------------------------------------------------------------------
// zip

/** Code page 437, bytes 0x80–0xFF: the encoding of zip names without the UTF-8 flag. */
const CP437 =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■ ';

function zipName(bytes: Buffer, utf8: boolean): string {
  if (utf8) return bytes.toString('utf8');
  let name = '';
  for (const byte of bytes) name += byte < 0x80 ? String.fromCharCode(byte) : CP437[byte - 0x80]!;
  return name;
}

function dosDate(date: number, time: number): Date | undefined {
  const value = new Date(
    Date.UTC(
      1980 + (date >> 9),
      ((date >> 5) & 0xf) - 1,
      date & 0x1f,
      time >> 11,
      (time >> 5) & 0x3f,
      (time & 0x1f) * 2,
    ),
  );
  return Number.isNaN(value.getTime()) ? undefined : value;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;

function corrupt(message: string): never {
  throw new ExecutorFailure('Corrupt', message);
}

/** Reads a zip's central directory; data is inflated only when asked, capped at the declared size. */
function readZip(archive: Buffer, limits: Limits): { entries: Entry[]; skipped: Output['skipped'] } {
  const searchFrom = Math.max(0, archive.length - 22 - 0xffff);
  let end = -1;
  for (let offset = archive.length - 22; offset >= searchFrom; offset--) {
    if (archive.readUInt32LE(offset) === 0x06054b50) {
      end = offset;
      break;
    }
  }
  if (end === -1) corrupt('no end of central directory: this is not a zip archive, or it is truncated');
  const disk = archive.readUInt16LE(end + 4);
  const total = archive.readUInt16LE(end + 10);
  const directorySize = archive.readUInt32LE(end + 12);
  const directoryOffset = archive.readUInt32LE(end + 16);
  if (disk !== 0) throw new ExecutorFailure('Unsupported', 'multi-part zip archives are not supported');
  if (total === 0xffff || directoryOffset === 0xffffffff || directorySize === 0xffffffff) {
    throw new ExecutorFailure('Unsupported', 'ZIP64 archives are not supported');
  }
  if (total > limits.entries) {
    throw new ExecutorFailure(
      'TooManyEntries',
      `the archive has ${total} entries; at most ${limits.entries} are extracted`,
    );
  }
  if (directoryOffset + directorySize > end) corrupt('the central directory lies outside the archive');

  const entries: Entry[] = [];
  const skipped: Output['skipped'] = [];
  const spans: Array<[number, number, string]> = [];
  let offset = directoryOffset;
  for (let index = 0; index < total; index++) {
    if (offset + 46 > end || archive.readUInt32LE(offset) !== 0x02014b50)
      corrupt(`central directory entry ${index + 1} is damaged`);
    const madeBy = archive.readUInt16LE(offset + 4) >> 8;
    const flags = archive.readUInt16LE(offset + 8);
    const method = archive.readUInt16LE(offset + 10);
    const time = archive.readUInt16LE(offset + 12);
    const date = archive.readUInt16LE(offset + 14);
    const crc = archive.readUInt32LE(offset + 16);
    const compressed = archive.readUInt32LE(offset + 20);
    const size = archive.readUInt32LE(offset + 24);
    const nameLength = archive.readUInt16LE(offset + 28);
    const extraLength = archive.readUInt16LE(offset + 30);
    const commentLength = archive.readUInt16LE(offset + 32);
    const external = archive.readUInt32LE(offset + 38);
    const local = archive.readUInt32LE(offset + 42);
    const raw = zipName(archive.subarray(offset + 46, offset + 46 + nameLength), (flags & 0x800) !== 0);
    offset += 46 + nameLength + extraLength + commentLength;
    if (offset > end) corrupt('the central directory runs past its end');
    if (compressed === 0xffffffff || size === 0xffffffff || local === 0xffffffff) {
      throw new ExecutorFailure('Unsupported', 'ZIP64 entries are not supported');
    }
    if (flags & 0x1) throw new ExecutorFailure('Unsupported', `entry ${JSON.stringify(raw)} is encrypted`);
    const unixMode = madeBy === 3 ? external >>> 16 : 0;
    const kind = unixMode & S_IFMT;
    const directory =
      raw.endsWith('/') ||
      raw.endsWith('\\') ||
      kind === S_IFDIR ||
      (madeBy === 0 && (external & 0x10) !== 0);
    const name = safeName(raw);
    if (name === undefined) continue;
    if (kind !== 0 && kind !== S_IFDIR && kind !== S_IFLNK && kind !== S_IFREG) {
      skipped.push({ name, reason: 'a device, socket or pipe' });
      continue;
    }
    if (method !== 0 && method !== 8) {
      throw new ExecutorFailure(
        'Unsupported',
        `entry ${JSON.stringify(name)} uses compression method ${method}; only stored and deflate are supported`,
      );
    }
    if (local + 30 > directoryOffset || archive.readUInt32LE(local) !== 0x04034b50)
      corrupt(`the local header of ${JSON.stringify(name)} is damaged`);
    const dataStart = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const dataEnd = dataStart + compressed;
    if (dataEnd > directoryOffset)
      corrupt(`the data of ${JSON.stringify(name)} runs past the end of the archive`);
    spans.push([local, dataEnd, name]);
    const data = (): Buffer => {
      const stored = archive.subarray(dataStart, dataEnd);
      let bytes: Buffer;
      if (method === 0) {
        bytes = stored;
      } else {
        try {
          bytes = inflateRawSync(stored, { maxOutputLength: Math.max(1, size) });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
            throw new ExecutorFailure(
              'TooLarge',
              `entry ${JSON.stringify(name)} inflates to more than the ${size} bytes it declares; nothing more was extracted`,
            );
          }
          corrupt(`entry ${JSON.stringify(name)} does not inflate: ${(error as Error).message}`);
        }
      }
      if (bytes.length !== size)
        corrupt(`entry ${JSON.stringify(name)} has ${bytes.length} bytes, not the ${size} it declares`);
      if (crc32(bytes) !== crc) corrupt(`entry ${JSON.stringify(name)} fails its CRC check`);
      return bytes;
    };
    const type: EntryType = directory ? 'directory' : kind === S_IFLNK ? 'symlink' : 'file';
    const entry: Entry = {
      raw,
      name,
      type,
      size: type === 'file' ? size : 0,
      mode: unixMode & 0o777,
      mtime: dosDate(date, time),
      compressed,
      data,
    };
    if (type === 'symlink') {
      if (size > 4096) corrupt(`symbolic link ${JSON.stringify(name)} has a ${size}-byte target`);
      entry.link = data().toString('utf8');
    }
    entries.push(entry);
  }
  // Entries sharing bytes are how a small zip claims gigabytes: refused outright.
  spans.sort((a, b) => a[0] - b[0]);
  for (let index = 1; index < spans.length; index++) {
    if (spans[index]![0] < spans[index - 1]![1]) {
      throw new ExecutorFailure(
        'TooLarge',
        `entries ${JSON.stringify(spans[index - 1]![2])} and ${JSON.stringify(spans[index]![2])} overlap: a zip bomb; nothing was extracted`,
      );
    }
  }
  return { entries, skipped };
}

// ---------------------------------------------------------------------------
// tar (ustar, pax and GNU long names)

function tarString(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const zero = field.indexOf(0);
  return field.subarray(0, zero === -1 ? length : zero).toString('utf8');
}

function tarNumber(block: Buffer, start: number, length: number, what: string): number {
  const field = block.subarray(start, start + length);
  if (field[0]! & 0x80) {
    // base-256: big-endian, the first byte's top bit is the marker
    if (field[0] === 0xff) corrupt(`a negative ${what} in a tar header`);
    let value = field[0]! & 0x7f;
    for (let index = 1; index < length; index++) {
      value = value * 256 + field[index]!;
      if (value > Number.MAX_SAFE_INTEGER) corrupt(`a ${what} too large in a tar header`);
    }
    return value;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^[\0 ]+/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) corrupt(`a ${what} that is not a number in a tar header`);
  return Number.parseInt(text, 8);
}

/** Records of a pax header (`<length> key=value\n`), into a map so no key can be special. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space === -1 || space - offset > 12) break;
    const length = Number(data.subarray(offset, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= space - offset + 1 || offset + length > data.length) {
      corrupt('a damaged pax header record');
    }
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

function readTar(archive: Buffer, limits: Limits): { entries: Entry[]; skipped: Output['skipped'] } {
  const entries: Entry[] = [];
  const skipped: Output['skipped'] = [];
  let offset = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  let members = 0;
  while (offset + 512 <= archive.length) {
    const block = archive.subarray(offset, offset + 512);
    if (block.every((byte) => byte === 0)) break;
    let sum = 0;
    for (let index = 0; index < 512; index++) sum += index >= 148 && index < 156 ? 0x20 : block[index]!;
    if (tarNumber(block, 148, 8, 'checksum') !== sum)
      corrupt(`the tar header at byte ${offset} fails its checksum`);
    const type = String.fromCharCode(block[156]!);
    const paxSize = pax.get('size');
    const size =
      paxSize !== undefined && /^\d{1,15}$/.test(paxSize)
        ? Number(paxSize)
        : tarNumber(block, 124, 12, 'size');
    const dataStart = offset + 512;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length) corrupt(`a tar entry runs past the end of the archive`);
    offset = dataStart + Math.ceil(size / 512) * 512;

    if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
      if (size > 1024 * 1024) corrupt('a tar extended header larger than 1 MiB');
      const data = archive.subarray(dataStart, dataEnd);
      if (type === 'x') pax = paxRecords(data);
      else if (type === 'L') longName = tarString(data, 0, data.length);
      else if (type === 'K') longLink = tarString(data, 0, data.length);
      continue;
    }
    members++;
    if (members > limits.entries) {
      throw new ExecutorFailure('TooManyEntries', `the archive has more than ${limits.entries} entries`);
    }
    const magic = block.subarray(257, 262).toString('latin1');
    const prefix = magic === 'ustar' ? tarString(block, 345, 155) : '';
    const stored = tarString(block, 0, 100);
    const raw = pax.get('path') ?? longName ?? (prefix ? `${prefix}/${stored}` : stored);
    const linkTarget = pax.get('linkpath') ?? longLink ?? tarString(block, 157, 100);
    const mtimeSeconds = tarNumber(block, 136, 12, 'mtime');
    pax = new Map();
    longName = undefined;
    longLink = undefined;

    const name = safeName(raw);
    if (name === undefined) continue;
    const mode = tarNumber(block, 100, 8, 'mode') & 0o777;
    const mtime =
      mtimeSeconds > 0 && mtimeSeconds < 253_402_300_800 ? new Date(mtimeSeconds * 1000) : undefined;
    const base = { raw, name, mode, ...(mtime ? { mtime } : {}) };
    if (type === '0' || type === '\0' || type === '7') {
      entries.push({
        ...base,
        type: raw.endsWith('/') ? 'directory' : 'file',
        size,
        data: () => archive.subarray(dataStart, dataEnd),
      });
    } else if (type === '5') {
      entries.push({ ...base, type: 'directory', size: 0, data: () => Buffer.alloc(0) });
    } else if (type === '2') {
      entries.push({ ...base, type: 'symlink', size: 0, link: linkTarget, data: () => Buffer.alloc(0) });
    } else if (type === '1') {
      const target = safeName(linkTarget);
      if (target === undefined) {
        throw new ExecutorFailure(
          'UnsafeEntry',
          `hard link ${JSON.stringify(name)} points at the destination itself`,
        );
      }
      entries.push({ ...base, type: 'hardlink', size: 0, link: target, data: () => Buffer.alloc(0) });
    } else if (type === 'S' || type === 'M') {
      throw new ExecutorFailure(
        'Unsupported',
        `entry ${JSON.stringify(name)} is a GNU sparse or multi-volume member`,
      );
    } else {
      skipped.push({
        name,
        reason:
          type === '3' || type === '4' || type === '6' ? 'a device or pipe' : `tar entry type "${type}"`,
      });
    }
  }
  return { entries, skipped };
}

// ---------------------------------------------------------------------------
// Checks before anything is written

function detectFormat(archive: Buffer, path: string): Format {
  if (archive.length >= 4 && archive.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (archive.length >= 22 && archive.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (archive.length >= 2 && archive[0] === 0x1f && archive[1] === 0x8b) return 'tar.gz';
  if (archive.length >= 262 && archive.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  if (/\.tar$/i.test(path) && archive.length >= 512) return 'tar';
  throw new ExecutorFailure('Unsupported', `${basename(path)} is not a zip, tar or tar.gz archive`);
}

/**
 * The last entry of each name wins (as tar appends updates); a name under a
 * file or a link is refused. Hard links, and symbolic links to a file of the
 * archive, become copies of that file (the sandbox lets no executor create
 * links); other symbolic links that stay inside are skipped.
 */
function plan(entries: Entry[]): { kept: Entry[]; skipped: Output['skipped'] } {
  const byName = new Map<string, Entry>();
  for (const entry of entries) {
    const previous = byName.get(entry.name);
    if (previous && (previous.type === 'directory') !== (entry.type === 'directory')) {
      throw new ExecutorFailure(
        'UnsafeEntry',
        `${JSON.stringify(entry.name)} is both a folder and a file in the archive`,
      );
    }
    byName.set(entry.name, entry);
  }
  const all = [...byName.values()];
  for (const entry of all) {
    const parts = entry.name.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const ancestor = byName.get(parts.slice(0, depth).join('/'));
      if (ancestor && ancestor.type !== 'directory') {
        throw new ExecutorFailure(
          'UnsafeEntry',
          `${JSON.stringify(entry.name)} lies under ${JSON.stringify(ancestor.name)}, which is a ${ancestor.type === 'symlink' ? 'symbolic link' : 'file'} in the archive; nothing was extracted`,
        );
      }
    }
    if (entry.type === 'symlink') checkSymlink(entry);
    if (entry.type === 'hardlink') {
      const target = byName.get(entry.link!);
      if (target?.type !== 'file') {
        throw new ExecutorFailure(
          'UnsafeEntry',
          `hard link ${JSON.stringify(entry.name)} points at ${JSON.stringify(entry.link)}, which is not a file of this archive; nothing was extracted`,
        );
      }
      entry.size = target.size;
      entry.mode = target.mode;
      entry.data = () => target.data();
    }
  }
  const kept: Entry[] = [];
  const skipped: Output['skipped'] = [];
  for (const entry of all) {
    if (entry.type !== 'symlink') {
      kept.push(entry);
      continue;
    }
    // Follows links of the archive (a few hops) to the file they name, if any.
    let current: Entry | undefined = entry;
    for (let hop = 0; hop < 8 && current?.type === 'symlink'; hop++) {
      const landing = posix.normalize(posix.join(posix.dirname(current.name), current.link!));
      current = byName.get(landing);
    }
    if (current?.type === 'file' || current?.type === 'hardlink') {
      const file = current;
      entry.size = file.size;
      entry.mode = file.mode;
      entry.data = () => file.data();
      kept.push(entry);
    } else {
      skipped.push({
        name: entry.name,
        reason: `a symbolic link to ${JSON.stringify(entry.link!.slice(0, 200))}, which is not a file of the archive (links are written as copies)`,
      });
    }
  }
  return { kept, skipped };
}

function checkSizes(entries: Entry[], format: Format, archiveBytes: number, limits: Limits): number {
  let total = 0;
  for (const entry of entries) {
    total += entry.size;
    if (
      entry.compressed !== undefined &&
      entry.size > RATIO_FLOOR_BYTES &&
      entry.size > entry.compressed * limits.ratio
    ) {
      throw new ExecutorFailure(
        'TooLarge',
        `entry ${JSON.stringify(entry.name)} expands ${Math.round(entry.size / Math.max(1, entry.compressed))} times (at most ${limits.ratio}): a zip bomb; nothing was extracted`,
      );
    }
  }
  if (total > limits.totalBytes) {
    throw new ExecutorFailure(
      'TooLarge',
      `the archive holds ${total} bytes; at most ${limits.totalBytes} are extracted`,
    );
  }
  if (format !== 'tar' && total > RATIO_FLOOR_BYTES && total > archiveBytes * limits.ratio) {
    throw new ExecutorFailure(
      'TooLarge',
      `the archive expands ${Math.round(total / archiveBytes)} times (at most ${limits.ratio}): a bomb; nothing was extracted`,
    );
  }
  return total;
}

/** Refuses what is in the way on disk: links in the path, files where folders go, files kept unless overwrite. */
async function checkDisk(
  entries: Entry[],
  destination: string,
  overwrite: boolean,
  ctx: ExecutorContext,
): Promise<void> {
  const seen = new Map<string, Awaited<ReturnType<typeof lstat>> | undefined>();
  const look = async (path: string) => {
    if (!seen.has(path)) seen.set(path, await lstat(path).catch(() => undefined));
    return seen.get(path);
  };
  const workspace = ctx.workspace;
  for (const entry of entries) {
    const parts = entry.name.split('/');
    const target = join(destination, ...parts);
    for (const name of RESERVED) {
      if (isInside(join(workspace, name), target)) {
        throw new ExecutorFailure(
          'PermissionDenied',
          `entry ${JSON.stringify(entry.name)} would land in ${name}/, which is reserved to Metnos`,
        );
      }
    }
    for (let depth = 1; depth < parts.length; depth++) {
      const ancestor = join(destination, ...parts.slice(0, depth));
      const info = await look(ancestor);
      if (!info) break;
      if (info.isSymbolicLink()) {
        throw new ExecutorFailure(
          'UnsafeEntry',
          `${displayPath(ancestor, ctx)} is a symbolic link; nothing is extracted through it`,
        );
      }
      if (!info.isDirectory()) {
        throw new ExecutorFailure(
          'Exists',
          `${displayPath(ancestor, ctx)} is a file where the archive has a folder`,
        );
      }
    }
    const info = await look(target);
    if (!info) continue;
    if (entry.type === 'directory') {
      if (!info.isDirectory())
        throw new ExecutorFailure('Exists', `${displayPath(target, ctx)} exists and is not a folder`);
      continue;
    }
    if (info.isDirectory())
      throw new ExecutorFailure(
        'Exists',
        `${displayPath(target, ctx)} is a folder where the archive has a file`,
      );
    if (!overwrite) {
      throw new ExecutorFailure(
        'Exists',
        `${displayPath(target, ctx)} already exists; pass overwrite: true to replace it`,
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Writing, with a way back

interface Undo {
  files: string[];
  folders: string[];
}

async function ensureFolder(destination: string, parts: readonly string[], undo: Undo): Promise<void> {
  let current = destination;
  for (const part of parts) {
    current = join(current, part);
    const info = await lstat(current).catch(() => undefined);
    if (info?.isDirectory()) continue;
    if (info) throw new ExecutorFailure('UnsafeEntry', `${current} is not a folder`);
    await mkdir(current, { mode: 0o755 });
    undo.folders.push(current);
  }
}

/** Written beside the target and renamed over it: never through a link, never half a file. */
async function writeEntryFile(
  target: string,
  bytes: Buffer,
  mode: number,
  mtime: Date | undefined,
  undo: Undo,
): Promise<void> {
  const temp = join(
    dirname(target),
    `.${basename(target).slice(0, 200)}.${randomBytes(6).toString('hex')}.extract`,
  );
  await writeFile(temp, bytes, { flag: 'wx', mode: (mode & 0o755) | 0o600 });
  try {
    if (mtime) await utimes(temp, mtime, mtime);
    const existed = await lstat(target).then(
      () => true,
      () => false,
    );
    await rename(temp, target);
    if (!existed) undo.files.push(target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

async function rollBack(undo: Undo): Promise<void> {
  for (const file of undo.files.reverse()) await rm(file, { force: true }).catch(() => undefined);
  for (const folder of undo.folders.reverse()) await rmdir(folder).catch(() => undefined);
}

function failureForCode(error: unknown, shown: string): never {
  if (error instanceof ExecutorFailure) throw error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') throw new ExecutorFailure('NotFound', `${shown} does not exist`);
  if (code === 'EISDIR') throw new ExecutorFailure('NotFound', `${shown} is a folder, not an archive`);
  if (code === 'ENOTDIR') throw new ExecutorFailure('NotADirectory', `a parent of ${shown} is a file`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ERR_ACCESS_DENIED') {
    throw new ExecutorFailure('PermissionDenied', `${shown} cannot be accessed (${code})`);
  }
  if (code === 'EEXIST') throw new ExecutorFailure('Exists', `${shown} already exists`);
  if (code === 'EDQUOT' || code === 'ENOSPC' || code === 'EFBIG') {
    throw new ExecutorFailure('TooLarge', `no room to extract into ${shown} (${code})`);
  }
  throw error;
}

function limitsFrom(ctx: ExecutorContext): Limits {
  const pick = (key: string, ceiling: number) => {
    const value = ctx.config[key];
    return typeof value === 'number' && Number.isInteger(value) && value > 0
      ? Math.min(value, ceiling)
      : ceiling;
  };
  return {
    archiveBytes: pick('max_archive_bytes', CEILING.archiveBytes),
    totalBytes: pick('max_bytes', CEILING.totalBytes),
    entries: pick('max_entries', CEILING.entries),
    ratio: pick('max_ratio', CEILING.ratio),
  };
}

function listing(entries: Entry[]): ListedEntry[] {
  return entries.slice(0, LISTED).map((entry) => ({
    name: entry.name,
    type: entry.type,
    size: entry.size,
    ...(entry.link !== undefined ? { link: entry.link.slice(0, 1024) } : {}),
  }));
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const limits = limitsFrom(ctx);
    const archivePath = await resolveAllowedPath(args.path, ctx, {
      roots: ctx.profile.fs.read,
      verb: 'read',
    });
    const shownArchive = displayPath(archivePath, ctx);
    const info = await stat(archivePath).catch((error: unknown) => failureForCode(error, shownArchive));
    if (!info.isFile()) throw new ExecutorFailure('NotFound', `${shownArchive} is not a file`);
    if (info.size > limits.archiveBytes) {
      throw new ExecutorFailure(
        'TooLarge',
        `${shownArchive} is ${info.size} bytes; archives up to ${limits.archiveBytes} bytes are opened`,
      );
    }
    const bytes = await readFile(archivePath).catch((error: unknown) => failureForCode(error, shownArchive));
    const format =
      args.format === undefined || args.format === 'auto' ? detectFormat(bytes, archivePath) : args.format;

    let parsed: { entries: Entry[]; skipped: Output['skipped'] };
    if (format === 'zip') {
      parsed = readZip(bytes, limits);
    } else {
      let tar = bytes;
      if (format === 'tar.gz') {
        try {
          tar = gunzipSync(bytes, { maxOutputLength: limits.totalBytes + 16 * 1024 * 1024 });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
            throw new ExecutorFailure(
              'TooLarge',
              `${shownArchive} decompresses to more than ${limits.totalBytes} bytes: nothing was extracted`,
            );
          }
          corrupt(`${shownArchive} is not valid gzip: ${(error as Error).message}`);
        }
        if (tar.length > RATIO_FLOOR_BYTES && tar.length > bytes.length * limits.ratio) {
          throw new ExecutorFailure(
            'TooLarge',
            `${shownArchive} expands ${Math.round(tar.length / bytes.length)} times (at most ${limits.ratio}): a bomb; nothing was extracted`,
          );
        }
      }
      parsed = readTar(tar, limits);
    }
    const { kept: entries, skipped } = plan(parsed.entries);
    const total = checkSizes(entries, format, bytes.length, limits);
    const count = (type: EntryType) => entries.filter((entry) => entry.type === type).length;
    const summary = {
      archive: shownArchive,
      format,
      files: count('file') + count('hardlink'),
      directories: count('directory'),
      links: count('symlink'),
      bytes: total,
      entries: listing(entries),
      entries_truncated: entries.length > LISTED,
      skipped: [...parsed.skipped, ...skipped].slice(0, LISTED),
    };
    if (args.list_only) return ok({ ...summary, extracted: false });

    const destinationInput =
      args.destination ??
      join(
        dirname(shownArchive),
        basename(shownArchive).replace(/(\.tar\.gz|\.tgz|\.tar|\.zip)$/i, '') || 'extracted',
      );
    const destination = await resolveAllowedPath(destinationInput, ctx, {
      roots: ctx.profile.fs.write,
      verb: 'write',
      reserved: RESERVED,
    });
    const shownDestination = displayPath(destination, ctx);
    const destinationInfo = await lstat(destination).catch(() => undefined);
    if (destinationInfo && !destinationInfo.isDirectory()) {
      throw new ExecutorFailure('NotADirectory', `${shownDestination} exists and is not a folder`);
    }
    await checkDisk(entries, destination, args.overwrite ?? false, ctx);

    const undo: Undo = { files: [], folders: [] };
    try {
      if (!destinationInfo) {
        await mkdir(dirname(destination), { recursive: true });
        await mkdir(destination, { mode: 0o755 });
        undo.folders.push(destination);
      }
      let written = 0;
      // Folders and files first, then the copies links stand for.
      for (const entry of entries) {
        const parts = entry.name.split('/');
        if (entry.type === 'directory') {
          await ensureFolder(destination, parts, undo);
          continue;
        }
        if (entry.type === 'symlink') continue;
        await ensureFolder(destination, parts.slice(0, -1), undo);
        const data = entry.data();
        written += data.length;
        if (written > limits.totalBytes) {
          throw new ExecutorFailure(
            'TooLarge',
            `more than ${limits.totalBytes} bytes came out of the archive; nothing was kept`,
          );
        }
        await writeEntryFile(join(destination, ...parts), data, entry.mode || 0o644, entry.mtime, undo);
      }
      for (const entry of entries) {
        if (entry.type !== 'symlink') continue;
        const parts = entry.name.split('/');
        await ensureFolder(destination, parts.slice(0, -1), undo);
        await writeEntryFile(
          join(destination, ...parts),
          entry.data(),
          entry.mode || 0o644,
          entry.mtime,
          undo,
        );
      }
    } catch (error) {
      await rollBack(undo);
      failureForCode(error, shownDestination);
    }
    return ok({ ...summary, destination: shownDestination, extracted: true });
  },
});
