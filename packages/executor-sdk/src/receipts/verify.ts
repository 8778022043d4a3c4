import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareHlc, formatHlc } from '../hlc.ts';
import type { PublicKey } from '../keys.ts';
import { DAY_FILE, dayFileOf, listDayFiles, parseReceiptLine, readHead } from './files.ts';
import { type Receipt, receiptSignatureValid } from './format.ts';

/** Why a link of the chain is broken. */
export type ChainBreakReason =
  | 'unreadable'
  | 'not_canonical'
  | 'unknown_key'
  | 'bad_signature'
  | 'missing'
  | 'reordered'
  | 'broken_link'
  | 'hlc_not_monotonic'
  | 'wrong_day'
  | 'missing_start'
  | 'truncated'
  | 'head_invalid';

/** The first broken link: where it is and why. */
export interface ChainBreak {
  reason: ChainBreakReason;
  /** The day file (name only), when the break is in one. */
  file?: string;
  /** 1-based line in that file. */
  line?: number;
  /** The receipt's sequence number, when the line could be read. */
  seq?: number;
  message: string;
}

/** A `repair` receipt met on the way: a gap the chain itself records. */
export interface ChainRepair {
  seq: number;
  file: string;
  line: number;
  reason: string;
}

/** What {@link verifyReceiptChain} found. */
export interface ChainReport {
  /** `ok`: every receipt checked; `broken`: see `broken`; `torn_tail`: all good up to a torn last line; `empty`: no receipts. */
  status: 'ok' | 'broken' | 'torn_tail' | 'empty';
  receipts: number;
  files: number;
  first?: { seq: number; hlc: string };
  last?: { seq: number; hlc: string };
  /** With `from`: the first receipt read is taken as given (its parent is in an earlier file not read). */
  anchored: boolean;
  broken?: ChainBreak;
  tornTail?: { file: string; line: number; bytes: number };
  repairs: ChainRepair[];
}

/** Settings of {@link verifyReceiptChain}. */
export interface VerifyChainSettings {
  /** The folder of day files. */
  dir: string;
  /** Public keys receipts may be signed with (the installation's, and earlier ones after a rotation). */
  keys: readonly PublicKey[];
  /** `YYYY-MM-DD`: start at this UTC day's file; the first receipt read anchors the rest. */
  from?: string;
}

interface Cursor {
  previous?: Receipt;
  sigs: Map<number, string>;
  report: ChainReport;
}

/** The break a receipt makes against the one before it, if any. */
function linkBreak(
  receipt: Receipt,
  previous: Receipt | undefined,
  anchored: boolean,
  keys: readonly PublicKey[],
  upcoming: () => number[],
): { reason: ChainBreakReason; message: string } | undefined {
  const key = keys.find((candidate) => candidate.keyId === receipt.key_id);
  if (!key)
    return { reason: 'unknown_key', message: `signed by ${receipt.key_id}, which is not a key given` };
  if (!receiptSignatureValid(receipt, key))
    return { reason: 'bad_signature', message: 'its signature does not verify: the line was changed' };
  if (!previous) {
    if (anchored || (receipt.seq === 0 && receipt.parent_sig === null)) return undefined;
    return {
      reason: 'missing_start',
      message: `the chain starts at receipt ${receipt.seq}: the receipts before it were removed`,
    };
  }
  const expected = previous.seq + 1;
  if (receipt.seq !== expected) {
    const reordered = receipt.seq < expected || upcoming().includes(expected);
    return reordered
      ? {
          reason: 'reordered',
          message: `receipt ${receipt.seq} stands where receipt ${expected} belongs: lines were reordered`,
        }
      : {
          reason: 'missing',
          message: `receipt ${expected} is missing (the next line is receipt ${receipt.seq}): lines were removed`,
        };
  }
  if (receipt.parent_sig !== previous.sig)
    return {
      reason: 'broken_link',
      message: `its parent_sig is not the signature of receipt ${previous.seq}`,
    };
  if (compareHlc(receipt.hlc, previous.hlc) <= 0)
    return {
      reason: 'hlc_not_monotonic',
      message: `its HLC ${formatHlc(receipt.hlc)} is not after ${formatHlc(previous.hlc)}`,
    };
  return undefined;
}

/** Checks one day file's lines; returns false once a break is recorded. */
function verifyFile(
  file: string,
  text: string,
  isLast: boolean,
  cursor: Cursor,
  keys: readonly PublicKey[],
): boolean {
  const { report } = cursor;
  const lines = text.split('\n');
  const tail = lines.pop()!;
  const stop = (reason: ChainBreakReason, line: number, message: string, seq?: number) => {
    report.status = 'broken';
    report.broken = { reason, file, line, ...(seq === undefined ? {} : { seq }), message };
    return false;
  };
  const seqs = lines.map((line) => /^\{"v":1,"seq":(\d+),/.exec(line)?.[1]).map(Number);
  for (const [index, line] of lines.entries()) {
    const parsed = parseReceiptLine(line);
    if (!parsed.ok)
      return stop(
        parsed.why,
        index + 1,
        parsed.why === 'unreadable'
          ? 'the line is not a receipt (cut short or changed)'
          : 'the line is not written as the chain writes it: it was changed',
      );
    const { receipt } = parsed;
    const broken = linkBreak(receipt, cursor.previous, report.anchored, keys, () => seqs.slice(index + 1));
    if (broken) return stop(broken.reason, index + 1, broken.message, receipt.seq);
    if (dayFileOf(receipt.hlc) !== file)
      return stop('wrong_day', index + 1, `the receipt belongs in ${dayFileOf(receipt.hlc)}`, receipt.seq);
    if (receipt.kind === 'repair')
      report.repairs.push({ seq: receipt.seq, file, line: index + 1, reason: String(receipt.data.reason) });
    cursor.previous = receipt;
    cursor.sigs.set(receipt.seq, receipt.sig);
    report.receipts++;
    report.first ??= { seq: receipt.seq, hlc: formatHlc(receipt.hlc) };
    report.last = { seq: receipt.seq, hlc: formatHlc(receipt.hlc) };
  }
  if (tail === '') return true;
  if (!isLast) return stop('unreadable', lines.length + 1, 'the file ends in a line cut short');
  report.status = 'torn_tail';
  report.tornTail = { file, line: lines.length + 1, bytes: Buffer.byteLength(tail) };
  return false;
}

/** Checks the signed head against what the files hold. */
async function verifyHead(settings: VerifyChainSettings, cursor: Cursor): Promise<void> {
  const { report } = cursor;
  const head = await readHead(settings.dir, settings.keys);
  if (head.state === 'absent') return;
  const stop = (reason: ChainBreakReason, message: string) => {
    report.status = 'broken';
    report.broken = { reason, file: 'head.json', message };
  };
  if (head.state === 'invalid') return stop('head_invalid', `head.json cannot be trusted: ${head.why}`);
  const last = cursor.previous?.seq ?? -1;
  if (head.head.seq > last)
    return stop(
      'truncated',
      `the signed head says the chain reaches receipt ${head.head.seq}, but it ends at ${last}: receipts were removed from its end`,
    );
  const sig = cursor.sigs.get(head.head.seq);
  if (sig !== undefined && sig !== head.head.sig)
    stop('truncated', `receipt ${head.head.seq} is not the one the signed head names: the end was replaced`);
}

/**
 * Verifies a receipt chain offline, with public keys only: every line is a
 * receipt written as the chain writes it, signed by a given key, numbered one
 * after the other, linked by `parent_sig` to the one before it, with an HLC
 * stamp later than the one before and in the file of its day; the chain
 * starts at receipt 0 (unless `from` anchors it later) and reaches the
 * receipt its signed head names. Stops at the first broken link and names it
 * (file, line, receipt, reason). A torn last line is reported as such
 * (`torn_tail`), after everything before it was checked. Never throws on bad
 * content.
 *
 * @example
 * const report = await verifyReceiptChain({ dir: receiptsDirOf(workspace), keys: [publicKey] });
 * if (report.status === 'broken') console.error(report.broken?.file, report.broken?.line, report.broken?.message);
 */
export async function verifyReceiptChain(settings: VerifyChainSettings): Promise<ChainReport> {
  const all = await listDayFiles(settings.dir);
  const files = settings.from ? all.filter((file) => DAY_FILE.exec(file)![1]! >= settings.from!) : all;
  const cursor: Cursor = {
    sigs: new Map(),
    report: {
      status: 'ok',
      receipts: 0,
      files: files.length,
      anchored: settings.from !== undefined && files.length < all.length,
      repairs: [],
    },
  };
  for (const [index, file] of files.entries()) {
    const text = await readFile(join(settings.dir, file), 'utf8');
    if (!verifyFile(file, text, index === files.length - 1, cursor, settings.keys)) return cursor.report;
  }
  await verifyHead(settings, cursor);
  if (cursor.report.status === 'ok' && cursor.report.receipts === 0) cursor.report.status = 'empty';
  return cursor.report;
}
