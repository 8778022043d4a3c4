import { statSync } from 'node:fs';
import { open, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { appendAuditLine } from '../audit.ts';
import { ReceiptError } from '../errors.ts';
import { createHlc, formatHlc, type Hlc } from '../hlc.ts';
import type { SigningKey } from '../keys.ts';
import {
  dayFileOf,
  ensureReceiptsDir,
  type HeadView,
  headIdentity,
  LOCK_FILE,
  listDayFiles,
  parseReceiptLine,
  readHead,
  readTail,
  syncReceiptFiles,
  type TailView,
  writeHead,
} from './files.ts';
import {
  type Receipt,
  type ReceiptEntry,
  type ReceiptValue,
  receiptDigest,
  receiptEntrySchema,
  receiptLine,
  receiptSignatureValid,
  signReceipt,
} from './format.ts';
import { withFileLock } from './lock.ts';

/** Where receipts go: what the invoker and the model wrapper write through. */
export interface ReceiptSink {
  /** Signs `entry`, links it to the chain's last receipt and appends it. Throws `ReceiptError`. */
  append(entry: ReceiptEntry): Promise<Receipt>;
  /** Throws `ReceiptError` when the chain cannot take a receipt now (a torn tail, a truncation). */
  check(): Promise<void>;
}

/** Settings of {@link createReceiptChain}. */
export interface ReceiptChainSettings {
  /** The folder of day files, `receiptsDirOf(workspace)` beside the audit log. */
  dir: string;
  /** The installation's key (`receipts` in the key store); its secret never leaves this process. */
  key: SigningKey;
  /** The clock stamps come from; default a fresh HLC over `now`. */
  hlc?: Hlc;
  /** Physical clock in epoch milliseconds, when no `hlc` is given. */
  now?: () => number;
  /** How long to wait for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
  /**
   * When a receipt is forced to disk. `deferred` (the default): `append` resolves once the
   * line and the head are written (they survive the process being killed at any moment) and
   * one background `fsync` right after covers every receipt written meanwhile, so a power cut
   * can lose only the last few. `each`: `append` resolves after its own `fsync`.
   */
  sync?: 'deferred' | 'each';
}

/** What {@link ReceiptChain.repair} did. */
export interface RepairReport {
  /** The signed `repair` receipts written, one per problem settled; empty when there was nothing to repair. */
  repairs: Receipt[];
  /** Files the removed bytes were kept in. */
  keptAs: string[];
}

/** The last receipt, as the chain knows it, and the day file it ended at. */
interface TailState {
  last: Receipt | undefined;
  file: string | undefined;
  size: number;
}

function fault(reason: ReceiptError['reason'], path: string, message: string): ReceiptError {
  return new ReceiptError({ reason, path, message });
}

/**
 * The signed receipt chain of one installation: every receipt is signed with
 * the installation's Ed25519 key, carries the signature of the one before it
 * (`parent_sig`), a sequence number and an HLC stamp, and is appended as one
 * line to the UTC day's file. Appends are serialised twice: one promise queue
 * in this process (the chain's tail mutex) and a lock file shared with other
 * processes, under which the tail is read back from disk — so neither parallel
 * work nor a second Metnos process can fork the chain. A signed `head.json`
 * names the last receipt, so receipts cut off the end are noticed.
 *
 * A torn last line (a crash mid-write) or a head ahead of the file is never
 * chained onto: `append` and `check` refuse with `ReceiptError` until
 * `repair()` moves the bad bytes aside and writes a signed `repair` receipt
 * saying what it removed, so the gap stays visible in the chain.
 *
 * @example
 * const chain = createReceiptChain({ dir: receiptsDirOf(workspace), key: await keyStore.load('receipts') });
 * await chain.append({ kind: 'executor', data: { executor: 'fs_read', args: await receiptDigest(args) } });
 */
export function createReceiptChain(settings: ReceiptChainSettings) {
  const { dir, key } = settings;
  const hlc = settings.hlc ?? createHlc({ now: settings.now });
  const lockPath = join(dir, LOCK_FILE);
  let queue: Promise<unknown> = Promise.resolve();
  let cached: TailState | undefined;
  const syncEach = settings.sync === 'each';
  /** Day files written since the last background sync. */
  const unsynced = new Set<string>();
  let syncing: Promise<void> | undefined;

  /** One background sync at a time; receipts written while it runs get the next one. */
  function syncSoon(path: string): void {
    unsynced.add(path);
    if (syncing) return;
    syncing = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        while (unsynced.size > 0) {
          const files = [...unsynced];
          unsynced.clear();
          await syncReceiptFiles(dir, files);
        }
      })
      // a failed fsync leaves the bytes where the next write or the OS puts them; the write itself succeeded
      .catch(() => undefined)
      .finally(() => {
        syncing = undefined;
      });
  }

  /** Runs `work` after every earlier call of this chain, under the folder's lock. */
  function serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(async () => {
      await ensureReceiptsDir(dir);
      return withFileLock(lockPath, work, { timeoutMs: settings.lockTimeoutMs });
    });
    queue = run.catch(() => undefined);
    return run;
  }

  function lastOf(view: TailView): Receipt | undefined {
    const path = join(dir, view.file ?? '');
    if (view.torn)
      throw fault(
        'torn_tail',
        path,
        `the last receipt line of ${path} is torn (${view.torn.bytes} bytes without an end, likely a crash mid-write); no receipt is chained onto it until \`metnos receipts repair\` settles it`,
      );
    if (view.lastLine === undefined) return undefined;
    const parsed = parseReceiptLine(view.lastLine);
    if (!parsed.ok)
      throw fault('unreadable', path, `the last receipt of ${path} is not a receipt the chain wrote`);
    if (parsed.receipt.key_id === key.keyId && !receiptSignatureValid(parsed.receipt, key))
      throw fault('bad_receipt', path, `the last receipt of ${path} does not carry a valid signature`);
    return parsed.receipt;
  }

  /** The tail from disk, or from memory when the newest file is as this process left it. */
  async function loadTail(): Promise<TailState> {
    if (cached?.file && (await listDayFiles(dir)).at(-1) === cached.file) {
      const size = statSync(join(dir, cached.file), { throwIfNoEntry: false })?.size ?? -1;
      if (size === cached.size) return cached;
    }
    const view = await readTail(dir);
    return { last: lastOf(view), file: view.file, size: view.size };
  }

  /** The head as this process last wrote or checked it, and the identity of its file then. */
  let knownHead: { identity: string; view: HeadView } | undefined;

  /** The head: read and its signature checked again only when its file is not the one known. */
  async function currentHead(): Promise<HeadView> {
    const identity = headIdentity(dir);
    if (identity !== undefined && knownHead?.identity === identity) return knownHead.view;
    const view = await readHead(dir, [key]);
    // named before the read: a change in between makes the next look read it again
    knownHead = identity !== undefined && view.state === 'ok' ? { identity, view } : undefined;
    return view;
  }

  /** Refuses to chain onto a tail the signed head says is not the end. */
  async function checkHead(tail: TailState): Promise<void> {
    const head = await currentHead();
    if (head.state === 'absent') return;
    const path = join(dir, 'head.json');
    if (head.state === 'invalid')
      throw fault('bad_receipt', path, `the receipt head ${path} cannot be trusted: ${head.why}`);
    const seq = tail.last?.seq ?? -1;
    const cut =
      head.head.seq > seq ||
      (head.head.seq === seq && head.head.sig !== tail.last?.sig) ||
      (head.head.seq === seq - 1 && head.head.sig !== tail.last?.parent_sig);
    if (cut)
      throw fault(
        'truncated',
        path,
        `the receipt head says the chain reaches receipt ${head.head.seq}, but the files end at ${seq}: receipts were removed; \`metnos receipts verify\` says where, \`metnos receipts repair\` records the gap`,
      );
  }

  /** Appends `entry` after `tail`; the caller holds the lock. */
  async function write(tail: TailState, entry: ReceiptEntry): Promise<Receipt> {
    const stamp = tail.last ? hlc.receive(tail.last.hlc) : hlc.now();
    const receipt = signReceipt(
      {
        v: 1,
        seq: tail.last ? tail.last.seq + 1 : 0,
        hlc: stamp,
        kind: entry.kind,
        parent_sig: tail.last?.sig ?? null,
        data: entry.data,
      },
      key,
    );
    const file = dayFileOf(stamp);
    const path = join(dir, file);
    try {
      await appendAuditLine(path, receiptLine(receipt));
      if (syncEach) await syncReceiptFiles(dir, [path]);
      const head = await writeHead(dir, receipt, key, { flush: syncEach });
      if (!syncEach) syncSoon(path);
      const identity = headIdentity(dir);
      knownHead = identity === undefined ? undefined : { identity, view: { state: 'ok', head } };
    } catch (error) {
      cached = undefined;
      knownHead = undefined;
      throw new ReceiptError({
        reason: 'write_failed',
        path,
        message: `the receipt could not be written to ${path}: ${(error as Error).message}`,
        cause: error,
      });
    }
    cached = { last: receipt, file, size: statSync(path).size };
    return receipt;
  }

  /** Moves the last line of the newest file aside when it is torn or not a valid receipt. */
  async function setAsideBadTail(): Promise<{ entry: ReceiptEntry; keptAs: string } | undefined> {
    const view = await readTail(dir);
    if (!view.file) return undefined;
    const path = join(dir, view.file);
    let removed: Buffer | undefined;
    let reason = 'torn_tail';
    if (view.torn) removed = view.torn.text;
    else if (view.lastLine !== undefined) {
      try {
        lastOf(view);
      } catch (error) {
        reason = (error as ReceiptError).reason;
        removed = Buffer.from(`${view.lastLine}\n`);
      }
    }
    if (!removed) return undefined;
    const keptAs = `${view.file}.removed-${formatHlc(hlc.now()).replace(/[:/]/g, '-')}`;
    const handle = await open(join(dir, keptAs), 'wx', 0o600);
    try {
      await handle.writeFile(removed);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await truncate(path, view.size - removed.length);
    return {
      keptAs,
      entry: {
        kind: 'repair',
        data: {
          reason,
          file: view.file,
          removed_bytes: removed.length,
          removed_digest: await receiptDigest(removed.toString('base64')),
          kept_as: keptAs,
        },
      },
    };
  }

  return {
    dir,
    keyId: key.keyId,
    hlc,

    append(entry: ReceiptEntry): Promise<Receipt> {
      const checked = receiptEntrySchema.safeParse(entry);
      if (!checked.success)
        return Promise.reject(
          new ReceiptError({
            reason: 'bad_receipt',
            message: `a receipt holds flat metadata only: ${checked.error.issues[0]?.path.join('.')}: ${checked.error.issues[0]?.message}`,
          }),
        );
      return serialised(async () => {
        const tail = await loadTail();
        await checkHead(tail);
        return write(tail, checked.data as ReceiptEntry);
      });
    },

    check(): Promise<void> {
      return serialised(async () => {
        const tail = await loadTail();
        await checkHead(tail);
        cached = tail;
      });
    },

    /**
     * Settles what stops the chain, explicitly: a torn or invalid last line is
     * moved to `<day>.jsonl.removed-<stamp>` and a head ahead of the files is
     * replaced, each with a signed `repair` receipt naming what was removed
     * (its size and digest), so verification shows the repair, never hides it.
     */
    repair(): Promise<RepairReport> {
      return serialised(async () => {
        cached = undefined;
        const report: RepairReport = { repairs: [], keptAs: [] };
        const moved = await setAsideBadTail();
        if (moved) report.keptAs.push(moved.keptAs);
        const tail = { ...(await loadTail()) };
        if (moved) {
          tail.last = await write(tail, moved.entry);
          report.repairs.push(tail.last);
        }
        try {
          await checkHead(tail);
        } catch (error) {
          if (!ReceiptError.isInstance(error)) throw error;
          const head = await readHead(dir, [key]);
          const data: Record<string, ReceiptValue> =
            head.state === 'ok'
              ? { reason: 'truncated', head_seq: head.head.seq, head_sig: head.head.sig }
              : { reason: 'head_invalid' };
          report.repairs.push(
            await write(tail, { kind: 'repair', data: { ...data, found_seq: tail.last?.seq ?? -1 } }),
          );
        }
        return report;
      });
    },

    /** Resolves when every receipt queued so far is written (or has failed) and forced to disk. */
    async drain(): Promise<void> {
      await queue.then(() => undefined);
      while (syncing) await syncing;
    },
  };
}

/** A receipt chain made by {@link createReceiptChain}. */
export type ReceiptChain = ReturnType<typeof createReceiptChain>;
