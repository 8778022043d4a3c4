import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { exceedsJsonDepth } from '@metnos/executor-sdk';
import { z } from 'zod';
import { callHash } from './call-hash.ts';
import { ApprovalStoreError } from './errors.ts';
import type { PendingApproval, ProposedCall } from './types.ts';

/** Where an approval stands. `used` and `denied` are final. */
export type ApprovalState = 'pending' | 'approved' | 'used' | 'denied';

const recordSchema = z.object({
  id: z.string(),
  callHash: z.string(),
  executor: z.string(),
  version: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  state: z.enum(['pending', 'approved', 'used', 'denied']),
});

/**
 * One approval as stored: the call's hash and identity, never its arguments.
 */
export type ApprovalRecord = z.infer<typeof recordSchema>;

const fileSchema = z.object({ version: z.literal(1), approvals: z.array(recordSchema) });

/** Why an approval was refused. */
export type ApprovalFailureReason =
  /** No approval with that id (never requested, or long pruned). */
  | 'unknown'
  /** The approval's time ran out. */
  | 'expired'
  /** The approval was already given (for `approve`) or already consumed (for `check`). */
  | 'already_used'
  /** The person refused it. */
  | 'denied'
  /** Another executor or another version than the one that was paused. */
  | 'different_executor'
  /** Same executor, but other arguments, another turn or another step. */
  | 'different_call'
  /** `check` before the person approved. */
  | 'not_approved';

/** The outcome of `approve` or `check`: data, never an exception. */
export type ApprovalResult =
  | ({ ok: true } & PendingApproval)
  | { ok: false; reason: ApprovalFailureReason; message: string };

/**
 * Somewhere to keep approvals between processes: `load` once at start, `save`
 * the whole list after each change. {@link createApprovalStore} builds a JSON
 * file one from `path`; pass your own as `db` (e.g. a table in the app's database).
 */
export interface ApprovalDb {
  load(): Promise<ApprovalRecord[]>;
  save(records: ApprovalRecord[]): Promise<void>;
}

/** Settings of {@link createApprovalStore}: in memory by default, or persisted to `path` or `db`. */
export interface ApprovalStoreSettings {
  /** A JSON file, written atomically (temp file + rename) after each change. */
  path?: string;
  /** Your own persistence; wins over `path`. */
  db?: ApprovalDb;
  clock?: () => Date;
  ids?: () => string;
  /** How long a pending approval stays valid. Default 15 minutes. */
  ttlMs?: number;
  /** How long finished or expired approvals are kept (so a late reuse reads `expired`/`already_used`, not `unknown`). Default 1 day. */
  retainMs?: number;
}

/**
 * Reinforced confirmation for calls with side effects that cannot be
 * repeated safely. The vaglio `request`s an approval for the exact call; the
 * person `approve`s that exact call; the planner `check`s it before running
 * and thereby consumes it. Each approval works once, before it expires, for
 * the call whose hash it holds and no other.
 */
export interface ApprovalStore {
  /** Opens a pending approval for `call`, or returns the live one already open for the same call. */
  request(call: ProposedCall): Promise<PendingApproval>;
  /** The person approves: succeeds only for the same call, not expired, not approved or used before. */
  approve(id: string, call: ProposedCall): Promise<ApprovalResult>;
  /** The person refuses; later `approve` and `check` answer `denied`. */
  deny(id: string): Promise<ApprovalResult>;
  /** Before running: succeeds once for an approved, unexpired approval of this exact call, and consumes it. */
  check(id: string, call: ProposedCall): Promise<ApprovalResult>;
  /** The stored record, without the call's arguments. */
  get(id: string): Promise<ApprovalRecord | undefined>;
}

const MESSAGES: Record<ApprovalFailureReason, string> = {
  unknown: 'no approval with this id',
  expired: 'the approval has expired; the call must be proposed and confirmed again',
  already_used: 'the approval was already used; each approval works once',
  denied: 'the approval was refused',
  different_executor: 'the approval was given for another executor or version',
  different_call: 'the approval was given for a different call (arguments, turn or step changed)',
  not_approved: 'the call is still waiting for approval',
};

function failure(reason: ApprovalFailureReason): ApprovalResult {
  return { ok: false, reason, message: MESSAGES[reason] };
}

/**
 * A JSON-file {@link ApprovalDb}: a missing file is an empty store; a file
 * that is not an approval store is an {@link ApprovalStoreError}.
 *
 * @example
 * const store = createApprovalStore({ db: createFileApprovalDb('/home/ada/.local/share/metnos/approvals.json') });
 */
export function createFileApprovalDb(path: string): ApprovalDb {
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw new ApprovalStoreError({
          message: `cannot read the approval store ${path}`,
          path,
          cause: error,
        });
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new ApprovalStoreError({
          message: `${path} is not JSON; move it away to start an empty approval store`,
          path,
          cause: error,
        });
      }
      const parsed = fileSchema.safeParse(value);
      if (!parsed.success)
        throw new ApprovalStoreError({
          message: `${path} is not a Metnos approval store`,
          path,
          cause: parsed.error,
        });
      return parsed.data.approvals;
    },
    async save(records) {
      const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(temp, `${JSON.stringify({ version: 1, approvals: records }, null, 2)}\n`, {
          mode: 0o600,
          flush: true,
        });
        await rename(temp, path);
      } catch (error) {
        throw new ApprovalStoreError({
          message: `cannot write the approval store ${path}`,
          path,
          cause: error,
        });
      }
    },
  };
}

/**
 * Creates an approval store. Every decision happens synchronously in memory
 * (so two concurrent `approve` calls cannot both succeed), then the store is
 * saved; saves are serialised. One process owns a store file at a time.
 *
 * @example
 * const approvals = createApprovalStore({ path: '/home/ada/.local/share/metnos/approvals.json' });
 * const pending = await approvals.request(call);
 * await approvals.approve(pending.id, call); // { ok: true, … }
 * await approvals.check(pending.id, call); // { ok: true, … }, and a second check: { ok: false, reason: 'already_used' }
 */
export function createApprovalStore(settings: ApprovalStoreSettings = {}): ApprovalStore {
  const clock = settings.clock ?? (() => new Date());
  const ids = settings.ids ?? randomUUID;
  const ttlMs = settings.ttlMs ?? 15 * 60_000;
  const retainMs = settings.retainMs ?? 24 * 60 * 60_000;
  const db = settings.db ?? (settings.path === undefined ? undefined : createFileApprovalDb(settings.path));
  const records = new Map<string, ApprovalRecord>();
  let loaded: Promise<void> | undefined;
  let saving: Promise<void> = Promise.resolve();

  function ready(): Promise<void> {
    loaded ??= (async () => {
      for (const record of (await db?.load()) ?? []) records.set(record.id, record);
    })();
    return loaded;
  }

  function persist(): Promise<void> {
    if (!db) return Promise.resolve();
    const snapshot = [...records.values()].map((record) => ({ ...record }));
    saving = saving.catch(() => undefined).then(() => db.save(snapshot));
    return saving;
  }

  function prune(now: number): void {
    for (const [id, record] of records) {
      if (Date.parse(record.expiresAt) + retainMs < now) records.delete(id);
    }
  }

  function pendingOf(record: ApprovalRecord): PendingApproval {
    return { id: record.id, callHash: record.callHash, expiresAt: record.expiresAt };
  }

  /** The reason `call` may not use `record` now, if any, before looking at its state. */
  function mismatch(
    record: ApprovalRecord,
    call: ProposedCall,
    now: number,
  ): ApprovalFailureReason | undefined {
    if (record.state === 'used') return 'already_used';
    if (record.state === 'denied') return 'denied';
    if (now >= Date.parse(record.expiresAt)) return 'expired';
    if (record.executor !== call.executor.name || record.version !== call.executor.version)
      return 'different_executor';
    if (exceedsJsonDepth(call.args) || record.callHash !== callHash(call)) return 'different_call';
    return undefined;
  }

  return {
    async request(call) {
      await ready();
      const now = clock().getTime();
      prune(now);
      const hash = callHash(call);
      for (const record of records.values()) {
        if (record.callHash === hash && record.state === 'pending' && now < Date.parse(record.expiresAt))
          return pendingOf(record);
      }
      const record: ApprovalRecord = {
        id: ids(),
        callHash: hash,
        executor: call.executor.name,
        version: call.executor.version,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + ttlMs).toISOString(),
        state: 'pending',
      };
      records.set(record.id, record);
      await persist();
      return pendingOf(record);
    },

    async approve(id, call) {
      await ready();
      const record = records.get(id);
      if (!record) return failure('unknown');
      if (record.state === 'approved') return failure('already_used');
      const refused = mismatch(record, call, clock().getTime());
      if (refused) return failure(refused);
      record.state = 'approved';
      await persist();
      return { ok: true, ...pendingOf(record) };
    },

    async deny(id) {
      await ready();
      const record = records.get(id);
      if (!record) return failure('unknown');
      if (record.state === 'used') return failure('already_used');
      record.state = 'denied';
      await persist();
      return { ok: true, ...pendingOf(record) };
    },

    async check(id, call) {
      await ready();
      const record = records.get(id);
      if (!record) return failure('unknown');
      const refused = mismatch(record, call, clock().getTime());
      if (refused) return failure(refused);
      if (record.state !== 'approved') return failure('not_approved');
      record.state = 'used';
      await persist();
      return { ok: true, ...pendingOf(record) };
    },

    async get(id) {
      await ready();
      const record = records.get(id);
      return record && { ...record };
    },
  };
}
