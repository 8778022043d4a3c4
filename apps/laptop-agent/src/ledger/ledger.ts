import { openDatabase, packageMigrations, type StoreMigrations } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import { and, asc, eq, lt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { calls, nonces, operations } from './tables.ts';

let migrations: StoreMigrations | undefined;

/** The ledger's migrations, in `apps/laptop-agent/drizzle`, recorded in their own table. */
export function ledgerMigrations(): StoreMigrations {
  migrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_laptop');
  return migrations;
}

/** How far a call got. */
export type CallState = 'received' | 'planned' | 'applying' | 'done';

/** A call as the ledger holds it. */
export interface LedgerCall {
  key: string;
  trace: string;
  kind: 'call' | 'undo';
  executor: string;
  version: string | null;
  digest: string;
  argsDigest: string;
  target: string | null;
  state: CallState;
  runs: number;
  plan: string | null;
  outcome: string | null;
  createdAt: number;
  updatedAt: number;
}

/** One journaled operation. */
export interface LedgerOperation {
  key: string;
  seq: number;
  op: 'move' | 'delete' | 'restore';
  source: string;
  target: string | null;
  trash: string | null;
  size: number;
  hash: string;
  identity: string;
  replacedSize: number | null;
  replacedHash: string | null;
  afterHash: string | null;
  state: 'planned' | 'done';
}

/** Settings of {@link createLedger}: an open client or a path, like the other stores. */
export type LedgerSettings = ({ path: string } | { db: Database.Database }) & { now?: () => number };

/**
 * The laptop's durable ledger of calls by idempotency key, their journaled
 * operations, and the token nonces already used. Every write is a SQLite
 * transaction on a file opened with `synchronous = FULL`, so what the ledger
 * says happened survives the process being killed, and the machine losing power.
 *
 * @example
 * const ledger = createLedger({ path: join(stateDir, 'ledger.sqlite') });
 * const call = ledger.receive({ key, trace, kind: 'call', executor: 'photo_organize', digest, argsDigest });
 */
export function createLedger(settings: LedgerSettings) {
  const { client, owned } = openDatabase(
    'path' in settings ? { path: settings.path } : { db: settings.db },
    ledgerMigrations(),
  );
  client.pragma('synchronous = FULL');
  const db = drizzle(client);
  const now = settings.now ?? Date.now;

  const get = (key: string): LedgerCall | undefined =>
    db.select().from(calls).where(eq(calls.key, key)).get() as LedgerCall | undefined;

  return {
    /** The call of `key`, if the ledger has it. */
    get,
    /**
     * Records a call the first time its key arrives and returns the row: the
     * new one, or the one recorded before (whatever its state).
     */
    receive(
      call: Pick<LedgerCall, 'key' | 'trace' | 'kind' | 'executor' | 'digest' | 'argsDigest'> & {
        version?: string;
        target?: string;
      },
    ): { call: LedgerCall; fresh: boolean } {
      const at = now();
      const inserted = db
        .insert(calls)
        .values({
          key: call.key,
          trace: call.trace,
          kind: call.kind,
          executor: call.executor,
          version: call.version ?? null,
          digest: call.digest,
          argsDigest: call.argsDigest,
          target: call.target ?? null,
          state: 'received',
          createdAt: at,
          updatedAt: at,
        })
        .onConflictDoNothing()
        .run();
      return { call: get(call.key)!, fresh: inserted.changes === 1 };
    },
    /** Counts one more executor process started for `key` (before it starts). */
    countRun(key: string): void {
      db.update(calls)
        .set({ runs: sql`${calls.runs} + 1`, updatedAt: now() })
        .where(eq(calls.key, key))
        .run();
    },
    /** The executor's result and the operations it proposes, checked, in one transaction: state planned. */
    plan(
      key: string,
      plan: string,
      planned: Omit<LedgerOperation, 'key' | 'seq' | 'state' | 'afterHash'>[],
    ): void {
      client.transaction(() => {
        db.delete(operations).where(eq(operations.key, key)).run();
        planned.forEach((operation, seq) => {
          db.insert(operations)
            .values({ ...operation, key, seq, state: 'planned', afterHash: null })
            .run();
        });
        db.update(calls).set({ plan, state: 'planned', updatedAt: now() }).where(eq(calls.key, key)).run();
      })();
    },
    /** The call's operations, in order. */
    operations(key: string): LedgerOperation[] {
      return db
        .select()
        .from(operations)
        .where(eq(operations.key, key))
        .orderBy(asc(operations.seq))
        .all() as LedgerOperation[];
    },
    /** Marks the call as applying its operations (after the server acknowledged the before manifest). */
    applying(key: string): void {
      db.update(calls).set({ state: 'applying', updatedAt: now() }).where(eq(calls.key, key)).run();
    },
    /** One operation happened (or was found to have happened): never applied again. */
    operationDone(key: string, seq: number, afterHash: string | null): void {
      db.update(operations)
        .set({ state: 'done', afterHash })
        .where(and(eq(operations.key, key), eq(operations.seq, seq)))
        .run();
    },
    /** The call's outcome: every later delivery of its key answers with it. */
    finish(key: string, outcome: string): void {
      db.update(calls).set({ outcome, state: 'done', updatedAt: now() }).where(eq(calls.key, key)).run();
    },
    /**
     * Records a token's nonce; false when it was recorded before (a replay).
     * Nonces of expired tokens are forgotten, since such a token is refused anyway.
     */
    useNonce(nonce: string, expiresAt: number): boolean {
      return client.transaction(() => {
        db.delete(nonces)
          .where(lt(nonces.expiresAt, now() - 10 * 60_000))
          .run();
        return db.insert(nonces).values({ nonce, expiresAt }).onConflictDoNothing().run().changes === 1;
      })();
    },
    /** The done call that undid `key`, if any. */
    undoneBy(key: string): LedgerCall | undefined {
      return db
        .select()
        .from(calls)
        .where(and(eq(calls.target, key), eq(calls.kind, 'undo'), eq(calls.state, 'done')))
        .get() as LedgerCall | undefined;
    },
    close(): void {
      if (owned) client.close();
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
