import { randomBytes } from 'node:crypto';
import { lstat, open, opendir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
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

interface Args {
  path: string;
  sources: string[];
  format?: Format;
  overwrite?: boolean;
  include_hidden?: boolean;
}

interface Output {
  path: string;
  format: Format;
  files: number;
  directories: number;
  bytes_in: number;
  bytes_out: number;
  skipped: Array<{ name: string; reason: string }>;
}

/** One member to write: a folder, or a file with its bytes. */
interface Member {
  name: string;
  directory: boolean;
  mode: number;
  mtime: Date;
  data: Buffer;
}

const MAX_INPUT_BYTES = 128 * 1024 * 1024;
const MAX_ENTRIES = 10_000;
const MAX_DEPTH = 32;
const MAX_SKIPPED = 100;
const RESERVED = ['.audit'];

function formatOf(path: string, requested: Format | undefined): Format {
  if (requested) return requested;
  if (/\.zip$/i.test(path)) return 'zip';
  if (/\.(tar\.gz|tgz)$/i.test(path)) return 'tar.gz';
  if (/\.tar$/i.test(path)) return 'tar';
  throw new ExecutorFailure(
    'Unsupported',
    `cannot tell the format from ${basename(path)}: name it .zip, .tar, .tar.gz or .tgz, or pass format`,
  );
}

function failureForCode(error: unknown, shown: string): never {
  if (error instanceof ExecutorFailure) throw error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') throw new ExecutorFailure('NotFound', `${shown} does not exist`);
  if (code === 'ENOTDIR') throw new ExecutorFailure('NotFound', `a parent of ${shown} is a file`);
  if (code === 'EISDIR') throw new ExecutorFailure('IsADirectory', `${shown} is a folder`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ERR_ACCESS_DENIED') {
    throw new ExecutorFailure('PermissionDenied', `${shown} cannot be accessed (${code})`);
  }
  if (code === 'EDQUOT' || code === 'ENOSPC' || code === 'EFBIG') {
    throw new ExecutorFailure('TooLarge', `no room to write ${shown} (${code})`);
  }
  throw error;
}

// ---------------------------------------------------------------------------
// Collecting the sources: no link is followed, no file with a second name is read

interface Collected {
  members: Member[];
  skipped: Output['skipped'];
  bytes: number;
}

async function collect(
  sources: readonly string[],
  output: string,
  ctx: ExecutorContext,
  includeHidden: boolean,
): Promise<Collected> {
  const collected: Collected = { members: [], skipped: [], bytes: 0 };
  const names = new Set<string>();
  const reserved = RESERVED.map((name) => join(ctx.workspace, name));
  const skip = (name: string, reason: string) => {
    if (collected.skipped.length < MAX_SKIPPED) collected.skipped.push({ name, reason });
  };
  const add = async (path: string, name: string, depth: number): Promise<void> => {
    if (path === output || reserved.some((folder) => isInside(folder, path))) return;
    const info = await lstat(path).catch((error: unknown) => failureForCode(error, displayPath(path, ctx)));
    if (collected.members.length >= MAX_ENTRIES) {
      throw new ExecutorFailure('TooManyEntries', `the sources hold more than ${MAX_ENTRIES} entries`);
    }
    if (names.has(name)) {
      skip(name, 'a second source with the same name');
      return;
    }
    if (info.isSymbolicLink()) return skip(name, 'a symbolic link (links are not followed)');
    if (info.isDirectory()) {
      if (depth > MAX_DEPTH) return skip(name, `nested deeper than ${MAX_DEPTH} folders`);
      names.add(name);
      collected.members.push({
        name,
        directory: true,
        mode: info.mode & 0o755,
        mtime: info.mtime,
        data: Buffer.alloc(0),
      });
      const children: string[] = [];
      for await (const entry of await opendir(path)) children.push(entry.name);
      for (const child of children.sort()) {
        if (!includeHidden && child.startsWith('.')) continue;
        await add(join(path, child), `${name}/${child}`, depth + 1);
      }
      return;
    }
    if (!info.isFile()) return skip(name, 'a device, socket or pipe');
    if (info.nlink > 1) {
      return skip(name, 'a file with more than one name (it could be a second name of a secret)');
    }
    collected.bytes += info.size;
    if (collected.bytes > MAX_INPUT_BYTES) {
      throw new ExecutorFailure('TooLarge', `the sources hold more than ${MAX_INPUT_BYTES} bytes`);
    }
    const data = await readFile(path).catch((error: unknown) =>
      failureForCode(error, displayPath(path, ctx)),
    );
    names.add(name);
    collected.members.push({ name, directory: false, mode: info.mode & 0o755, mtime: info.mtime, data });
  };
  for (const source of sources) {
    const path = await resolveAllowedPath(source, ctx, {
      roots: ctx.profile.fs.read,
      verb: 'read',
      reserved: RESERVED,
    });
    if (path === output) {
      throw new ExecutorFailure('InvalidTarget', `${displayPath(path, ctx)} is the archive being written`);
    }
    // Named after the source itself: "photos" → photos/…; the workspace itself → its folder name.
    const name = basename(path) || 'workspace';
    await add(path, name, 0);
  }
  return collected;
}

// ---------------------------------------------------------------------------
// zip writer: stored or deflated entries, UTF-8 names, Unix modes

function dosDateTime(date: Date): { date: number; time: number } {
  const year = Math.min(Math.max(date.getUTCFullYear(), 1980), 2107);
  return {
    date: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >> 1),
  };
}

function writeZip(members: readonly Member[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const member of members) {
    const name = Buffer.from(member.directory ? `${member.name}/` : member.name, 'utf8');
    const deflated = member.directory ? member.data : deflateRawSync(member.data, { level: 9 });
    const stored = member.directory || deflated.length >= member.data.length;
    const body = stored ? member.data : deflated;
    const crc = crc32(member.data);
    const { date, time } = dosDateTime(member.mtime);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(member.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE((3 << 8) | 20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x0800, 8);
    entry.writeUInt16LE(stored ? 0 : 8, 10);
    entry.writeUInt16LE(time, 12);
    entry.writeUInt16LE(date, 14);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(body.length, 20);
    entry.writeUInt32LE(member.data.length, 24);
    entry.writeUInt16LE(name.length, 28);
    const unixMode =
      (member.directory ? 0o040000 : 0o100000) | (member.mode || (member.directory ? 0o755 : 0o644));
    entry.writeUInt32LE(((unixMode << 16) | (member.directory ? 0x10 : 0)) >>> 0, 38);
    entry.writeUInt32LE(offset, 42);
    parts.push(local, name, body);
    central.push(entry, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}

// ---------------------------------------------------------------------------
// tar writer: ustar headers, a pax header for names that do not fit

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function tarHeader(
  name: string,
  size: number,
  mode: number,
  mtime: number,
  type: string,
  prefix = '',
): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, 'utf8');
  header.write(octal(mode, 8), 100, 'latin1');
  header.write(octal(0, 8), 108, 'latin1');
  header.write(octal(0, 8), 116, 'latin1');
  header.write(octal(size, 12), 124, 'latin1');
  header.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, 'latin1');
  header.write('        ', 148, 'latin1');
  header.write(type, 156, 'latin1');
  header.write('ustar\0', 257, 'latin1');
  header.write('00', 263, 'latin1');
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return header;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % 512;
  return rest === 0 ? [data] : [data, Buffer.alloc(512 - rest)];
}

/** A pax record `<length> path=<name>\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

/** Splits a long name into ustar's prefix (≤ 155 bytes) and name (≤ 100 bytes), if it can. */
function ustarSplit(name: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', name };
  for (let index = name.indexOf('/'); index !== -1; index = name.indexOf('/', index + 1)) {
    const prefix = name.slice(0, index);
    const rest = name.slice(index + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== '')
      return { prefix, name: rest };
  }
  return undefined;
}

function writeTar(members: readonly Member[]): Buffer {
  const parts: Buffer[] = [];
  for (const member of members) {
    const fullName = member.directory ? `${member.name}/` : member.name;
    const mode = member.mode || (member.directory ? 0o755 : 0o644);
    const mtime = member.mtime.getTime() / 1000;
    const split = ustarSplit(fullName);
    if (!split || Buffer.byteLength(fullName) !== fullName.length) {
      // The name travels in a pax header; the ustar field keeps a readable stand-in.
      const pax = Buffer.from(paxRecord('path', fullName), 'utf8');
      parts.push(
        tarHeader(`PaxHeaders/${basename(member.name)}`.slice(0, 99), pax.length, 0o644, mtime, 'x'),
      );
      parts.push(...padded(pax));
    }
    const stand = split ?? { prefix: '', name: fullName.slice(-99) };
    parts.push(
      tarHeader(
        stand.name,
        member.directory ? 0 : member.data.length,
        mode,
        mtime,
        member.directory ? '5' : '0',
        stand.prefix,
      ),
    );
    if (!member.directory) parts.push(...padded(member.data));
  }
  parts.push(Buffer.alloc(1024));
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  // Records of 20 blocks, as tar writes them.
  const record = 10_240;
  if (total % record !== 0) parts.push(Buffer.alloc(record - (total % record)));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const output = await resolveAllowedPath(args.path, ctx, {
      roots: ctx.profile.fs.write,
      verb: 'write',
      reserved: RESERVED,
      followLast: false,
    });
    const shown = displayPath(output, ctx);
    const format = formatOf(output, args.format);
    const existing = await lstat(output).catch(() => undefined);
    if (existing?.isDirectory()) throw new ExecutorFailure('IsADirectory', `${shown} is a folder`);
    if (existing && !(args.overwrite ?? false)) {
      throw new ExecutorFailure('Exists', `${shown} already exists; pass overwrite: true to replace it`);
    }
    const parent = await lstat(dirname(output)).catch(() => undefined);
    if (!parent?.isDirectory())
      throw new ExecutorFailure('NotFound', `the folder of ${shown} does not exist`);

    const collected = await collect(args.sources, output, ctx, args.include_hidden ?? true);
    const bytes =
      format === 'zip'
        ? writeZip(collected.members)
        : format === 'tar'
          ? writeTar(collected.members)
          : gzipSync(writeTar(collected.members), { level: 9 });

    // Written beside the target and renamed over it: never through a link, never half an archive.
    const temp = join(
      dirname(output),
      `.${basename(output).slice(0, 200)}.${randomBytes(6).toString('hex')}.tmp`,
    );
    try {
      const handle = await open(temp, 'wx', 0o644);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, output);
    } catch (error) {
      await rm(temp, { force: true });
      failureForCode(error, shown);
    }
    return ok({
      path: shown,
      format,
      files: collected.members.filter((member) => !member.directory).length,
      directories: collected.members.filter((member) => member.directory).length,
      bytes_in: collected.bytes,
      bytes_out: bytes.length,
      skipped: collected.skipped,
    });
  },
});
