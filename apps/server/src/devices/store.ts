import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openDatabase, packageMigrations, type StoreMigrations } from '@metnos/autopath/stores';
import type { FileEntry, LaptopAudit, RemoteResult } from '@metnos/laptop-agent/protocol';
import type Database from 'better-sqlite3';
import { and, desc, eq, isNull } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { devices, pairings, remoteCalls } from './tables.ts';

/**
 * The device store's migrations, in the package's `drizzle/devices` (found from the package root,
 * so the same call works from `src/` and from the published `dist/`), recorded in their own table.
 */
export function deviceStoreMigrations(): StoreMigrations {
  const root = packageMigrations(import.meta.url, '__drizzle_migrations_devices');
  return { folder: join(root.folder, 'devices'), table: root.table };
}

/** A paired device as the server knows it. */
export interface Device {
  id: string;
  name: string;
  publicKey: string;
  fingerprint: string;
  executors: string[];
  state: 'active' | 'revoked';
  platform: string | null;
  tier: string | null;
  createdAt: number;
  lastSeenAt: number | null;
  revokedAt: number | null;
}

/** An open one-time code. */
export interface Pairing {
  lookup: string;
  secret: string;
  executors: string[];
  expiresAt: number;
  usedAt: number | null;
  device: string | null;
  attempts: number;
}

/** A remote call as the server recorded it. */
export interface RemoteCallRecord {
  key: string;
  trace: string;
  device: string;
  executor: string;
  version: string | null;
  args: unknown;
  caller: unknown;
  state: 'pending' | 'done' | 'failed';
  result: RemoteResult | null;
  before: FileEntry[] | null;
  after: FileEntry[] | null;
  laptopAudit: LaptopAudit | null;
  undoOf: string | null;
  undoneBy: string | null;
  createdAt: number;
  finishedAt: number | null;
}

const json = (text: string | null) => (text === null ? null : JSON.parse(text));

function toDevice(row: typeof devices.$inferSelect): Device {
  return { ...row, executors: JSON.parse(row.executors) as string[], state: row.state as Device['state'] };
}

function toCall(row: typeof remoteCalls.$inferSelect): RemoteCallRecord {
  return {
    ...row,
    args: JSON.parse(row.args),
    caller: JSON.parse(row.caller),
    state: row.state as RemoteCallRecord['state'],
    result: json(row.result),
    before: json(row.before),
    after: json(row.after),
    laptopAudit: json(row.laptopAudit),
  };
}

/** Attempts a code takes before it is burnt. */
export const MAX_PAIRING_ATTEMPTS = 5;

/**
 * The server's record of paired devices, open pairing codes and remote calls
 * (`devices.sqlite` in the data dir). `metnos devices …` and the running
 * server open the same file; the server reads a device's state at every
 * frame and every call, so a revocation made by either is in force at once.
 *
 * @example
 * const store = createDeviceStore({ path: join(dataDir, 'devices.sqlite') });
 * store.devices(); // [{ id: 'dev_…', name: 'ada-laptop', state: 'active', … }]
 */
export function createDeviceStore(
  settings: ({ path: string } | { db: Database.Database }) & { now?: () => number },
) {
  const { client, owned } = openDatabase(
    'path' in settings ? { path: settings.path } : { db: settings.db },
    deviceStoreMigrations(),
  );
  client.pragma('synchronous = FULL');
  const db = drizzle(client);
  const now = settings.now ?? Date.now;
  const device = (id: string): Device | undefined => {
    const row = db.select().from(devices).where(eq(devices.id, id)).get();
    return row ? toDevice(row) : undefined;
  };
  const call = (key: string): RemoteCallRecord | undefined => {
    const row = db.select().from(remoteCalls).where(eq(remoteCalls.key, key)).get();
    return row ? toCall(row) : undefined;
  };

  return {
    device,
    devices(): Device[] {
      return db.select().from(devices).orderBy(devices.createdAt).all().map(toDevice);
    },
    /** A device by id or by name (names are not unique: the first active one). */
    find(idOrName: string): Device | undefined {
      return (
        device(idOrName) ??
        this.devices().find((candidate) => candidate.name === idOrName && candidate.state === 'active')
      );
    },
    openPairing(pairing: { lookup: string; secret: string; executors: string[]; expiresAt: number }): void {
      db.insert(pairings)
        .values({ ...pairing, executors: JSON.stringify(pairing.executors), createdAt: now() })
        .run();
    },
    /** An open code: not used, not expired, not burnt. */
    pairing(lookup: string): Pairing | undefined {
      const row = db.select().from(pairings).where(eq(pairings.lookup, lookup)).get();
      if (!row || row.usedAt !== null || row.expiresAt < now() || row.attempts >= MAX_PAIRING_ATTEMPTS)
        return undefined;
      return { ...row, executors: JSON.parse(row.executors) as string[] };
    },
    /** Counts a failed proof against a code. */
    failPairing(lookup: string): void {
      const row = db.select().from(pairings).where(eq(pairings.lookup, lookup)).get();
      if (row)
        db.update(pairings)
          .set({ attempts: row.attempts + 1 })
          .where(eq(pairings.lookup, lookup))
          .run();
    },
    /** Codes still open, for the console (never the codes themselves). */
    openPairings(): Array<{ expiresAt: number; executors: string[] }> {
      return db
        .select()
        .from(pairings)
        .where(isNull(pairings.usedAt))
        .all()
        .filter((row) => row.expiresAt >= now() && row.attempts < MAX_PAIRING_ATTEMPTS)
        .map((row) => ({ expiresAt: row.expiresAt, executors: JSON.parse(row.executors) as string[] }));
    },
    /** Uses a code (once) and records the device it admitted, in one transaction; false when the code was taken meanwhile. */
    admit(
      lookup: string,
      admitted: Omit<Device, 'state' | 'platform' | 'tier' | 'createdAt' | 'lastSeenAt' | 'revokedAt'>,
    ): boolean {
      return client.transaction(() => {
        const used = db
          .update(pairings)
          .set({ usedAt: now(), device: admitted.id })
          .where(and(eq(pairings.lookup, lookup), isNull(pairings.usedAt)))
          .run();
        if (used.changes !== 1) return false;
        db.insert(devices)
          .values({
            ...admitted,
            executors: JSON.stringify(admitted.executors),
            state: 'active',
            createdAt: now(),
          })
          .run();
        return true;
      })();
    },
    rename(id: string, name: string): boolean {
      return db.update(devices).set({ name }).where(eq(devices.id, id)).run().changes === 1;
    },
    revoke(id: string): boolean {
      return (
        db
          .update(devices)
          .set({ state: 'revoked', revokedAt: now() })
          .where(and(eq(devices.id, id), eq(devices.state, 'active')))
          .run().changes === 1
      );
    },
    /** Sets which executors a device may run. */
    allow(id: string, executors: string[]): boolean {
      return (
        db
          .update(devices)
          .set({ executors: JSON.stringify(executors) })
          .where(eq(devices.id, id))
          .run().changes === 1
      );
    },
    seen(id: string, hello: { platform: string; tier: string }): void {
      db.update(devices)
        .set({ lastSeenAt: now(), platform: hello.platform, tier: hello.tier })
        .where(eq(devices.id, id))
        .run();
    },
    call,
    startCall(
      record: Pick<
        RemoteCallRecord,
        'key' | 'trace' | 'device' | 'executor' | 'version' | 'args' | 'caller' | 'undoOf'
      >,
    ): void {
      db.insert(remoteCalls)
        .values({
          ...record,
          args: JSON.stringify(record.args),
          caller: JSON.stringify(record.caller),
          state: 'pending',
          createdAt: now(),
        })
        .run();
    },
    recordBefore(key: string, entries: FileEntry[]): void {
      db.update(remoteCalls)
        .set({ before: JSON.stringify(entries) })
        .where(eq(remoteCalls.key, key))
        .run();
    },
    finishCall(
      key: string,
      outcome: {
        result: RemoteResult;
        after?: FileEntry[];
        before?: FileEntry[];
        laptopAudit?: LaptopAudit;
        failed?: boolean;
      },
    ): void {
      client.transaction(() => {
        const set: Partial<typeof remoteCalls.$inferInsert> = {
          state: outcome.failed ? 'failed' : 'done',
          result: JSON.stringify(outcome.result),
          finishedAt: now(),
          ...(outcome.after ? { after: JSON.stringify(outcome.after) } : {}),
          ...(outcome.before ? { before: JSON.stringify(outcome.before) } : {}),
          ...(outcome.laptopAudit ? { laptopAudit: JSON.stringify(outcome.laptopAudit) } : {}),
        };
        db.update(remoteCalls).set(set).where(eq(remoteCalls.key, key)).run();
        const row = call(key);
        if (row?.undoOf && outcome.result.ok)
          db.update(remoteCalls).set({ undoneBy: key }).where(eq(remoteCalls.key, row.undoOf)).run();
      })();
    },
    /** Every call of a trace, oldest first. */
    callsOfTrace(trace: string): RemoteCallRecord[] {
      return db
        .select()
        .from(remoteCalls)
        .where(eq(remoteCalls.trace, trace))
        .orderBy(remoteCalls.createdAt)
        .all()
        .map(toCall);
    },
    /** The latest calls, newest first. */
    recentCalls(limit = 50): RemoteCallRecord[] {
      return db
        .select()
        .from(remoteCalls)
        .orderBy(desc(remoteCalls.createdAt))
        .limit(limit)
        .all()
        .map(toCall);
    },
    /** Calls sent to a device and not finished (after a restart of the server, they are delivered again). */
    pendingCalls(device: string): RemoteCallRecord[] {
      return db
        .select()
        .from(remoteCalls)
        .where(and(eq(remoteCalls.device, device), eq(remoteCalls.state, 'pending')))
        .orderBy(remoteCalls.createdAt)
        .all()
        .map(toCall);
    },
    close(): void {
      if (owned) client.close();
    },
  };
}

export type DeviceStore = ReturnType<typeof createDeviceStore>;

/** A fresh device id: `dev_` and 16 lowercase letters and digits. */
export function newDeviceId(): string {
  return `dev_${randomBytes(10).toString('hex').slice(0, 16)}`;
}
