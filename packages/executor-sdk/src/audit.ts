import { constants, lstatSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Caller } from './context.ts';
import { AuditError } from './errors.ts';

/** One audit line: one invocation (or one refusal). Absent values are `null`, so every line has every field. */
export interface AuditEntry {
  ts: string;
  trace_id: string;
  turn_id: string | null;
  executor: string;
  version: string | null;
  caller: Caller;
  input: Record<string, unknown>;
  output: { size: number; sha: string | null };
  duration_ms: number;
  exit: 'ok' | 'error' | 'policy' | 'crash' | 'timeout' | 'refused';
  error_class?: string;
  isolation?: string;
}

const MAX_STRING = 200;

/**
 * A short, bounded picture of the arguments: strings cut to 200 characters
 * with their length, nested values cut to depth 3, at most 32 keys.
 */
export function summarizeInput(args: unknown, depth = 0): Record<string, unknown> {
  const summarize = (value: unknown, level: number): unknown => {
    if (typeof value === 'string') {
      return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…(${value.length} chars)` : value;
    }
    if (value === null || typeof value !== 'object') return value;
    if (level >= 3) return Array.isArray(value) ? `[array of ${value.length}]` : '[object]';
    if (Array.isArray(value)) return value.slice(0, 16).map((item) => summarize(item, level + 1));
    const entries = Object.entries(value).slice(0, 32);
    return Object.fromEntries(entries.map(([key, item]) => [key, summarize(item, level + 1)]));
  };
  const summary = summarize(args, depth);
  return summary !== null && typeof summary === 'object' && !Array.isArray(summary)
    ? (summary as Record<string, unknown>)
    : { value: summary };
}

/**
 * Bytes kept allocated in `.audit/.reserve`. When the disk fills up, the
 * reserve is given back so the lines that record it still fit; the next call
 * then finds no room to rebuild the reserve and is refused.
 */
export const AUDIT_RESERVE_BYTES = 1024 * 1024;

/** The folders of a workspace's audit tree, below `.audit`. */
export const AUDIT_SUBDIRS = ['executors', 'sandbox'] as const;

const OPEN_APPEND = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

function currentUid(): number {
  return process.getuid?.() ?? 0;
}

/** A folder of the audit tree must be a real folder of this user, never a symlink. */
async function checkAuditDir(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new AuditError(
        path,
        `the audit folder ${path} cannot be created: ${(error as Error).message}`,
        error,
      );
  }
  const info = await lstat(path);
  if (info.isSymbolicLink())
    throw new AuditError(
      path,
      `the audit folder ${path} is a symlink; move it aside (metnos doctor prints the command)`,
    );
  if (!info.isDirectory()) throw new AuditError(path, `the audit folder ${path} is not a folder`);
  if (info.uid !== currentUid())
    throw new AuditError(path, `the audit folder ${path} belongs to uid ${info.uid}, not to this user`);
}

/**
 * The audit tree's root when it is already whole (every folder a real folder of
 * this user, the reserve a plain file with one link and its full size), or
 * undefined. A handful of `lstat`s without a thread hop: it runs before every
 * call, and anything unusual is left to the full check, which creates, repairs
 * or refuses.
 */
function wholeAuditTree(workspace: string): string | undefined {
  const root = join(workspace, '.audit');
  try {
    for (const dir of [root, ...AUDIT_SUBDIRS.map((sub) => join(root, sub))]) {
      const info = lstatSync(dir);
      if (!info.isDirectory() || info.uid !== currentUid()) return undefined;
    }
    const reserve = lstatSync(join(root, '.reserve'));
    if (!reserve.isFile() || reserve.nlink !== 1 || reserve.size < AUDIT_RESERVE_BYTES) return undefined;
    return root;
  } catch {
    return undefined;
  }
}

/**
 * Creates the audit tree of a workspace (`.audit/`, `.audit/executors/`,
 * `.audit/sandbox/`, and the space reserve) before any executor runs, so the
 * sandbox can mask it from the very first call. Every folder must be a real
 * folder owned by the user. Throws {@link AuditError} otherwise, or when the
 * reserve cannot be rebuilt because the disk is full.
 *
 * @example
 * const auditDir = await ensureAuditTree('/home/me/metnos');
 */
export async function ensureAuditTree(workspace: string): Promise<string> {
  const whole = wholeAuditTree(workspace);
  if (whole) return whole;
  try {
    await mkdir(workspace, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new AuditError(
      workspace,
      `the workspace ${workspace} cannot be created: ${(error as Error).message}`,
      error,
    );
  }
  const root = join(workspace, '.audit');
  await checkAuditDir(root);
  for (const sub of AUDIT_SUBDIRS) await checkAuditDir(join(root, sub));
  const reserve = join(root, '.reserve');
  let handle: FileHandle | undefined;
  try {
    handle = await open(reserve, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    const info = await handle.stat();
    if (!info.isFile() || info.nlink !== 1) throw new Error('not a plain file with one link');
    if (info.size < AUDIT_RESERVE_BYTES) {
      // a short write is the disk running out, without an error of its own
      await writeWhole(handle, Buffer.alloc(AUDIT_RESERVE_BYTES - info.size), info.size);
      await handle.sync();
    }
  } catch (error) {
    const full =
      (error as NodeJS.ErrnoException).code === 'ENOSPC' ||
      (error as NodeJS.ErrnoException).code === 'EDQUOT';
    if (handle && full) await handle.truncate(0).catch(() => undefined);
    throw new AuditError(
      reserve,
      full
        ? `the disk holding ${root} is full; Metnos runs no executor until it can record the call (free some space)`
        : `the audit reserve ${reserve} is unusable: ${(error as Error).message}`,
      error,
      { diskFull: full },
    );
  } finally {
    await handle?.close();
  }
  return root;
}

/** Opens an audit file for appending and checks it is a plain file of this user with one link. */
async function openAuditFile(file: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_APPEND, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ELOOP' ? 'it is a symlink' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message;
    throw new AuditError(file, `the audit file ${file} cannot be opened: ${why}`, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new AuditError(file, `the audit file ${file} is not a plain file`);
    if (info.uid !== currentUid())
      throw new AuditError(file, `the audit file ${file} belongs to uid ${info.uid}, not to this user`);
    if (info.nlink !== 1)
      throw new AuditError(file, `the audit file ${file} has ${info.nlink} links; it must have one`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Writes all of `bytes`; a short write (how a full disk often answers) is ENOSPC. */
async function writeWhole(handle: FileHandle, bytes: Buffer, position?: number): Promise<void> {
  const { bytesWritten } = await handle.write(bytes, 0, bytes.length, position);
  if (bytesWritten < bytes.length) throw Object.assign(new Error('no room left'), { code: 'ENOSPC' });
}

/**
 * Appends one line to an audit file safely: opened with `O_NOFOLLOW` (a symlink
 * planted in its place is refused), checked to be a plain file of this user with
 * one link, started on a fresh line when the file ends in a partial one, and
 * written from the reserve when the disk is full. Throws {@link AuditError}.
 *
 * @example
 * await appendAuditLine('/ws/.audit/executors/2026-11-22.jsonl', JSON.stringify(entry));
 */
export async function appendAuditLine(file: string, line: string, reserve?: string): Promise<void> {
  const handle = await openAuditFile(file);
  try {
    const info = await handle.stat();
    let prefix = '';
    if (info.size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, info.size - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    const bytes = Buffer.from(`${prefix}${line}\n`);
    try {
      await writeWhole(handle, bytes);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOSPC' && code !== 'EDQUOT') || !reserve) throw error;
      // Give the reserve back to the filesystem and write the line in the room it leaves.
      const spare = await open(reserve, constants.O_WRONLY | constants.O_NOFOLLOW).catch(() => undefined);
      await spare?.truncate(0);
      await spare?.close();
      const now = (await handle.stat()).size;
      const last = Buffer.alloc(1);
      if (now > 0) await handle.read(last, 0, 1, now - 1);
      await writeWhole(handle, Buffer.from(`${now > 0 && last[0] !== 0x0a ? '\n' : ''}${line}\n`));
    }
  } catch (error) {
    if (AuditError.isInstance(error)) throw error;
    throw new AuditError(
      file,
      `the audit line could not be written to ${file}: ${(error as Error).message}`,
      error,
    );
  } finally {
    await handle.close();
  }
}

/**
 * Appends one line to the day's file of a folder of the workspace's audit tree
 * (`executors` for the invoker, `sandbox` for the runner's refusals): the tree
 * is checked first ({@link ensureAuditTree}), and on a full disk the line is
 * still written from the room the reserve gives back ({@link appendAuditLine}).
 *
 * @example
 * await appendToAuditTree('/home/me/metnos', 'sandbox', entry.ts, JSON.stringify(entry));
 */
export async function appendToAuditTree(
  workspace: string,
  folder: (typeof AUDIT_SUBDIRS)[number],
  ts: string,
  line: string,
): Promise<void> {
  const root = join(workspace, '.audit');
  await ensureAuditTree(workspace).catch((error) => {
    if (!AuditError.isInstance(error) || !error.diskFull) throw error;
  });
  await appendAuditLine(join(root, folder, `${ts.slice(0, 10)}.jsonl`), line, join(root, '.reserve'));
}

/** Settings of {@link createAuditLog}. */
export interface AuditLogSettings {
  /** Lines go to `<workspace>/.audit/executors/YYYY-MM-DD.jsonl`. */
  workspace: string;
}

/**
 * The append-only invocation log: one JSON line per call, in a file per UTC
 * day, opened in append mode for every write.
 *
 * @example
 * const audit = createAuditLog({ workspace: '/home/me/metnos' });
 * await audit.append(entry);
 */
export function createAuditLog(settings: AuditLogSettings) {
  const dir = join(settings.workspace, '.audit', 'executors');
  const fileFor = (ts: string) => join(dir, `${ts.slice(0, 10)}.jsonl`);
  return {
    dir,
    /** The file for the day of `ts`. */
    fileFor,
    /**
     * Checks, before a call, that its line can be written: the tree exists and
     * is sound, the reserve is in place, the day's file opens as a plain file.
     * Throws {@link AuditError}; the invoker then refuses the call.
     */
    async check(ts: string): Promise<void> {
      await ensureAuditTree(settings.workspace);
      await (await openAuditFile(fileFor(ts))).close();
    },
    async append(entry: AuditEntry): Promise<void> {
      await appendToAuditTree(settings.workspace, 'executors', entry.ts, JSON.stringify(entry));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
