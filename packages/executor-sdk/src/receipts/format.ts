import { sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { z } from 'zod';
import { loadBlake3 } from '../hash.ts';
import { type HlcTimestamp, hlcSchema } from '../hlc.ts';
import { nodePublicKey, nodeSigningKey, type PublicKey, type SigningKey } from '../keys.ts';

/** Domain-separation tag of a receipt's signed bytes; bumping it versions the format. */
export const RECEIPT_TAG = 'metnos.receipt.v1';

/** The longest string a receipt's data may hold: names, ids, digests and classes, never content. */
export const RECEIPT_STRING_LIMIT = 256;

const SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const DATA_KEY = /^[a-z][a-z0-9_]{0,47}$/;

/** One value of a receipt's data: flat scalars only, so no argument value or document can ride along. */
export type ReceiptValue = string | number | boolean | null;

/** What a caller hands the chain: the kind of event and its metadata (hashes, names, counts). */
export interface ReceiptEntry {
  /** `model`, `executor`, `tool`, `repair`, …: lower case, at most 32 characters. */
  kind: string;
  data: Record<string, ReceiptValue>;
}

/** A receipt as it is stored: one JSON line of a day's file. */
export interface Receipt extends ReceiptEntry {
  v: 1;
  /** Position in the chain, from 0. */
  seq: number;
  hlc: HlcTimestamp;
  key_id: string;
  /** The signature of the receipt before this one; `null` only for the first receipt of a chain. */
  parent_sig: string | null;
  /** Ed25519 over {@link receiptSignedBytes}, base64. */
  sig: string;
}

/** The schema every stored receipt line must pass. */
export const receiptSchema = z
  .object({
    v: z.literal(1),
    seq: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    hlc: hlcSchema,
    kind: z.string().regex(/^[a-z][a-z0-9_.-]{0,31}$/),
    key_id: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
    parent_sig: z.string().regex(SIGNATURE).nullable(),
    data: z.record(
      z.string().regex(DATA_KEY),
      z.union([z.string().max(RECEIPT_STRING_LIMIT), z.number(), z.boolean(), z.null()]),
    ),
    sig: z.string().regex(SIGNATURE),
  })
  .strict();

/** The entry schema: what {@link ReceiptEntry} may hold before it is signed. */
export const receiptEntrySchema = receiptSchema.pick({ kind: true, data: true }).strict();

function sortedData(data: Record<string, ReceiptValue>): Record<string, ReceiptValue> {
  const sorted: Record<string, ReceiptValue> = {};
  for (const key of Object.keys(data).sort()) sorted[key] = data[key]!;
  return sorted;
}

/** The receipt without its signature, fields in their fixed order and data keys sorted. */
function unsignedText(receipt: Omit<Receipt, 'sig'>): string {
  return JSON.stringify({
    v: receipt.v,
    seq: receipt.seq,
    hlc: { ms: receipt.hlc.ms, c: receipt.hlc.c },
    kind: receipt.kind,
    key_id: receipt.key_id,
    parent_sig: receipt.parent_sig,
    data: sortedData(receipt.data),
  });
}

/** The exact bytes a receipt's signature covers: the tag, a newline, the unsigned receipt. */
export function receiptSignedBytes(receipt: Omit<Receipt, 'sig'>): Uint8Array {
  return new TextEncoder().encode(`${RECEIPT_TAG}\n${unsignedText(receipt)}`);
}

/**
 * The one way a receipt is written as a line (no newline). A stored line
 * must equal this text of what it parses to, so a change of any byte, even
 * one JSON would read the same (a space, `1.0` for `1`), is detected.
 */
export function receiptLine(receipt: Receipt): string {
  return `${unsignedText(receipt).slice(0, -1)},"sig":${JSON.stringify(receipt.sig)}}`;
}

/** Signs an unsigned receipt with `key`. */
export function signReceipt(receipt: Omit<Receipt, 'sig' | 'key_id'>, key: SigningKey): Receipt {
  const unsigned = { ...receipt, key_id: key.keyId };
  const signature = nodeSign(null, receiptSignedBytes(unsigned), nodeSigningKey(key));
  return { ...unsigned, sig: Buffer.from(signature).toString('base64') };
}

/** True when the receipt's signature is valid for `key`. Never throws. */
export function receiptSignatureValid(receipt: Receipt, key: PublicKey): boolean {
  try {
    const { sig, ...unsigned } = receipt;
    return nodeVerify(null, receiptSignedBytes(unsigned), nodePublicKey(key), Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

/** Canonical JSON: object keys sorted at every depth, so equal values hash equally. */
export function canonicalJsonText(value: unknown): string {
  const seen = new Set<unknown>();
  const walk = (item: unknown): unknown => {
    if (typeof item === 'bigint') return item.toString();
    if (item === null || typeof item !== 'object') return item;
    if (seen.has(item)) return '[Circular]';
    seen.add(item);
    const out = Array.isArray(item)
      ? item.map(walk)
      : Object.fromEntries(
          Object.keys(item)
            .sort()
            .map((key) => [key, walk((item as Record<string, unknown>)[key])]),
        );
    seen.delete(item);
    return out;
  };
  return JSON.stringify(walk(value)) ?? 'null';
}

/**
 * The digest a receipt keeps in place of a value (arguments, a prompt, an
 * answer): BLAKE3 of its canonical JSON, `blake3:<hex>`. The value itself
 * never enters the chain.
 *
 * @example
 * await receiptDigest({ path: 'notes.md' }); // 'blake3:…'
 */
export async function receiptDigest(value: unknown): Promise<string> {
  const digest = await loadBlake3();
  return digest(canonicalJsonText(value));
}

/** Cuts a string to what a receipt may hold. */
export function receiptText(value: string): string {
  return value.length > RECEIPT_STRING_LIMIT ? value.slice(0, RECEIPT_STRING_LIMIT) : value;
}
