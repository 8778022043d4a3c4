import { sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { constants, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ReceiptError } from '../errors.ts';
import { type HlcTimestamp, hlcSchema } from '../hlc.ts';
import { nodePublicKey, nodeSigningKey, type PublicKey, type SigningKey } from '../keys.ts';
import { writeFileAtomic } from '../sign.ts';
import { type Receipt, receiptLine, receiptSchema } from './format.ts';

/** A day's file of receipts: `YYYY-MM-DD.jsonl`, the UTC day of the receipts' HLC stamps. */
export const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** The signed head: the last receipt the chain wrote, so receipts cut off its end are noticed. */
export const HEAD_FILE = 'head.json';

/** The lock processes sharing the folder take turns on. */
export const LOCK_FILE = '.lock';

const HEAD_TAG = 'metnos.receipt-head.v1';

/** The day file a stamp's receipt goes to. */
export function dayFileOf(stamp: HlcTimestamp): string {
  return `${new Date(stamp.ms).toISOString().slice(0, 10)}.jsonl`;
}

/** The receipts folder of a workspace: beside the audit log, under the `.audit` the sandbox masks. */
export function receiptsDirOf(workspace: string): string {
  return join(workspace, '.audit', 'receipts');
}

/** The day files of a folder, oldest first. A missing folder has none. */
export async function listDayFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries.filter((entry) => DAY_FILE.test(entry)).sort();
}

/** Creates the folder (0700) and checks it is a real folder of this user, never a symlink. */
export async function ensureReceiptsDir(dir: string): Promise<void> {
  // synchronous, as the lock: it runs before every receipt
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ReceiptError({
      reason: 'unsafe_path',
      path: dir,
      message: `the receipts folder ${dir} cannot be created: ${(error as Error).message}`,
      cause: error,
    });
  }
  const info = lstatSync(dir);
  const uid = process.getuid?.() ?? 0;
  if (info.isSymbolicLink() || !info.isDirectory() || info.uid !== uid)
    throw new ReceiptError({
      reason: 'unsafe_path',
      path: dir,
      message: `the receipts folder ${dir} must be a real folder of this user (not a symlink)`,
    });
}

/** A stored line read back: the receipt, or why it is not one. */
export type ParsedLine = { ok: true; receipt: Receipt } | { ok: false; why: 'unreadable' | 'not_canonical' };

/** Parses one stored line and checks it is written exactly as the chain writes it. */
export function parseReceiptLine(line: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, why: 'unreadable' };
  }
  const parsed = receiptSchema.safeParse(value);
  if (!parsed.success) return { ok: false, why: 'unreadable' };
  const receipt = parsed.data as Receipt;
  return receiptLine(receipt) === line ? { ok: true, receipt } : { ok: false, why: 'not_canonical' };
}

/** The end of the newest non-empty day file. */
export interface TailView {
  /** The file (name only), or undefined when no file holds a byte. */
  file?: string;
  size: number;
  /** The last complete line, when there is one. */
  lastLine?: string;
  /** Bytes after the last newline: a write cut short, or a line someone left open. */
  torn?: { bytes: number; text: Buffer };
}

/** Reads the end of the newest day file that holds anything (the last 64 KiB: far more than a line). */
export async function readTail(dir: string): Promise<TailView> {
  const files = await listDayFiles(dir);
  for (const file of files.reverse()) {
    const handle = await open(join(dir, file), 'r');
    try {
      const { size } = await handle.stat();
      if (size === 0) continue;
      const length = Math.min(size, 64 * 1024);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      const end = buffer.lastIndexOf(0x0a);
      const torn = end === length - 1 ? undefined : buffer.subarray(end + 1);
      const complete = buffer.subarray(0, end + 1).toString('utf8');
      const lines = complete.split('\n').filter((line) => line !== '');
      return {
        file,
        size,
        ...(lines.length > 0 ? { lastLine: lines[lines.length - 1] } : {}),
        ...(torn ? { torn: { bytes: torn.length, text: Buffer.from(torn) } } : {}),
      };
    } finally {
      await handle.close();
    }
  }
  return { size: 0 };
}

/** The signed head as stored. */
export interface ReceiptHead {
  v: 1;
  seq: number;
  sig: string;
  hlc: HlcTimestamp;
  key_id: string;
  head_sig: string;
}

const headSchema = z
  .object({
    v: z.literal(1),
    seq: z.number().int().nonnegative(),
    sig: z.string(),
    hlc: hlcSchema,
    key_id: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
    head_sig: z.string(),
  })
  .strict();

function headBytes(head: Omit<ReceiptHead, 'head_sig'>): Uint8Array {
  return new TextEncoder().encode(
    `${HEAD_TAG}\n${JSON.stringify({ v: head.v, seq: head.seq, sig: head.sig, hlc: head.hlc, key_id: head.key_id })}`,
  );
}

/**
 * Writes the head for `receipt` (atomically: a temp file, then a rename) and returns it.
 * With `flush: false` the bytes reach the page cache only (they survive the process being
 * killed, not a power cut) and the caller makes them durable later ({@link syncReceiptFiles}).
 */
export async function writeHead(
  dir: string,
  receipt: Receipt,
  key: SigningKey,
  { flush = true }: { flush?: boolean } = {},
): Promise<ReceiptHead> {
  const unsigned = { v: 1 as const, seq: receipt.seq, sig: receipt.sig, hlc: receipt.hlc, key_id: key.keyId };
  const head_sig = nodeSign(null, headBytes(unsigned), nodeSigningKey(key)).toString('base64');
  await writeFileAtomic(join(dir, HEAD_FILE), `${JSON.stringify({ ...unsigned, head_sig })}\n`, 0o600, {
    flush,
  });
  return { ...unsigned, head_sig };
}

/**
 * Forces the named day files, then the head and the folder itself (the head's rename) to
 * disk, in that order: after a power cut the head never names a receipt the files lost.
 */
export async function syncReceiptFiles(dir: string, dayFiles: Iterable<string>): Promise<void> {
  for (const path of [...dayFiles, join(dir, HEAD_FILE), dir]) {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
    if (!handle) continue;
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/**
 * The head file's identity (device, inode, size, modification and change
 * times in nanoseconds), or undefined when there is none: any write to it or
 * replacement of it changes this, and the change time cannot be set back.
 */
export function headIdentity(dir: string): string | undefined {
  const info = statSync(join(dir, HEAD_FILE), { bigint: true, throwIfNoEntry: false });
  return info ? `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}` : undefined;
}

/** What the head file says: absent, unusable (unreadable or signed by no key given), or the head. */
export type HeadView =
  | { state: 'absent' }
  | { state: 'invalid'; why: string }
  | { state: 'ok'; head: ReceiptHead };

/** Reads and checks the head against the keys that may have signed it. */
export async function readHead(dir: string, keys: readonly PublicKey[]): Promise<HeadView> {
  let text: string;
  try {
    text = await readFile(join(dir, HEAD_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    return { state: 'invalid', why: (error as Error).message };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { state: 'invalid', why: 'it is not JSON' };
  }
  const parsed = headSchema.safeParse(value);
  if (!parsed.success) return { state: 'invalid', why: 'it is not a receipt head' };
  const head = parsed.data as ReceiptHead;
  const key = keys.find((candidate) => candidate.keyId === head.key_id);
  if (!key) return { state: 'invalid', why: `it is signed by ${head.key_id}, a key not given` };
  let valid = false;
  try {
    const { head_sig, ...unsigned } = head;
    // OpenSSL's Ed25519: RFC 8032 rules, no ZIP-215 leniency
    valid = nodeVerify(null, headBytes(unsigned), nodePublicKey(key), Buffer.from(head_sig, 'base64'));
  } catch {
    valid = false;
  }
  return valid ? { state: 'ok', head } : { state: 'invalid', why: 'its signature does not verify' };
}
