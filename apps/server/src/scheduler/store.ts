import { randomBytes } from 'node:crypto';
import { openDatabase, packageMigrations, type StoreMigrations } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import type { OnFailure, Schedule, ScheduleState, ScheduleTarget } from './schedule.ts';

let migrations: StoreMigrations | undefined;

/** The scheduler's migrations, in `apps/server/drizzle`, recorded in their own table. */
export function schedulerStoreMigrations(): StoreMigrations {
  migrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_server');
  return migrations;
}

/** Where a slot is: claimed, firing, done, or left unfinished by a process that died. */
export type SlotStatus = 'claimed' | 'running' | 'ok' | 'failed' | 'interrupted';

export interface SlotRow {
  schedule_id: string;
  slot_at: number;
  status: SlotStatus;
  holder: string;
  attempts: number;
  claimed_at: number;
  finished_at: number | null;
  summary: string | null;
  error: string | null;
}

/** One line of a schedule's append-only history. */
export interface RunEvent {
  id: number;
  schedule_id: string;
  slot_at: number | null;
  event: string;
  at: number;
  holder: string | null;
  detail: string | null;
}

interface ScheduleRow {
  id: string;
  name: string | null;
  target: string;
  cadence: string;
  timezone: string;
  channel: string | null;
  count: number | null;
  expiry: number | null;
  on_failure: string;
  max_consecutive_failures: number | null;
  state: string;
  closed_reason: string | null;
  fired: number;
  consecutive_failures: number;
  anchor: number;
  created_at: number;
  updated_at: number;
}

/** A schedule's columns as `insert` takes them. */
export interface NewSchedule {
  id?: string;
  name: string | null;
  target: ScheduleTarget;
  cadence: string;
  timezone: string;
  channel: string | null;
  count: number | null;
  expiry: number | null;
  on_failure: OnFailure;
  max_consecutive_failures: number | null;
  paused: boolean;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    name: row.name,
    target: JSON.parse(row.target) as ScheduleTarget,
    cadence: row.cadence,
    timezone: row.timezone,
    channel: row.channel,
    count: row.count,
    expiry: iso(row.expiry),
    on_failure: row.on_failure as OnFailure,
    max_consecutive_failures: row.max_consecutive_failures,
    paused: row.state === 'paused',
    state: row.state as ScheduleState,
    closed_reason: row.closed_reason,
    fired: row.fired,
    consecutive_failures: row.consecutive_failures,
    anchor: iso(row.anchor)!,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

/** A sortable id: 12 hex digits of milliseconds, then 10 random. */
export function scheduleId(now: number): string {
  return `sch_${now.toString(16).padStart(12, '0')}${randomBytes(5).toString('hex')}`;
}

/**
 * The schedule store: one SQLite file in WAL mode. Every method is one
 * statement or one transaction, so two processes on one file see each
 * other's claims at once and a kill -9 leaves no half-written row.
 */
export class SchedulerStore {
  readonly db: Database.Database;
  readonly file: string;
  private readonly owned: boolean;

  constructor(path: string) {
    const { client, owned } = openDatabase({ path }, schedulerStoreMigrations());
    client.pragma('busy_timeout = 5000');
    this.db = client;
    this.owned = owned;
    this.file = path;
  }

  close(): void {
    if (this.owned && this.db.open) this.db.close();
  }

  /** Appends one line to the history (the runs table refuses UPDATE and DELETE). */
  event(
    scheduleId: string,
    event: string,
    at: number,
    detail?: unknown,
    slotAt?: number,
    holder?: string,
  ): void {
    this.db
      .prepare(
        'INSERT INTO scheduler_runs (schedule_id, slot_at, event, at, holder, detail) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        scheduleId,
        slotAt ?? null,
        event,
        at,
        holder ?? null,
        detail === undefined ? null : typeof detail === 'string' ? detail : JSON.stringify(detail),
      );
  }

  /** Adds a schedule; `createdBy` (who asked, e.g. the executor of a reminder) goes into its `created` event. */
  insert(schedule: NewSchedule, now: number, createdBy?: Record<string, unknown>): Schedule {
    const id = schedule.id ?? scheduleId(now);
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO scheduler_schedules (id, name, target, cadence, timezone, channel, count, expiry, on_failure,
             max_consecutive_failures, state, anchor, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          schedule.name,
          JSON.stringify(schedule.target),
          schedule.cadence,
          schedule.timezone,
          schedule.channel,
          schedule.count,
          schedule.expiry,
          schedule.on_failure,
          schedule.max_consecutive_failures,
          schedule.paused ? 'paused' : 'active',
          now,
          now,
          now,
        );
      this.event(id, 'created', now, {
        cadence: schedule.cadence,
        target: schedule.target,
        ...(createdBy ? { by: createdBy } : {}),
      });
    })();
    return this.get(id)!;
  }

  get(id: string): Schedule | undefined {
    const row = this.db.prepare('SELECT * FROM scheduler_schedules WHERE id = ?').get(id) as
      | ScheduleRow
      | undefined;
    return row ? toSchedule(row) : undefined;
  }

  byName(name: string): Schedule | undefined {
    const row = this.db.prepare('SELECT * FROM scheduler_schedules WHERE name = ?').get(name) as
      | ScheduleRow
      | undefined;
    return row ? toSchedule(row) : undefined;
  }

  list(states?: ScheduleState[]): Schedule[] {
    const rows = this.db
      .prepare('SELECT * FROM scheduler_schedules ORDER BY created_at, id')
      .all() as ScheduleRow[];
    return rows.map(toSchedule).filter((schedule) => !states || states.includes(schedule.state));
  }

  /** Writes changed columns; `anchor` moves when the cadence changes. */
  update(
    id: string,
    columns: Partial<Record<keyof ScheduleRow, string | number | null>>,
    now: number,
    event?: { name: string; detail?: unknown },
  ): void {
    const names = Object.keys(columns);
    this.db.transaction(() => {
      if (names.length > 0)
        this.db
          .prepare(
            `UPDATE scheduler_schedules SET ${names.map((name) => `${name} = ?`).join(', ')}, updated_at = ? WHERE id = ?`,
          )
          .run(...names.map((name) => columns[name as keyof ScheduleRow] ?? null), now, id);
      if (event) this.event(id, event.name, now, event.detail);
    })();
  }

  /** The latest slot ever claimed for a schedule, whatever became of it. */
  lastSlot(id: string): number | undefined {
    const row = this.db
      .prepare('SELECT MAX(slot_at) AS last FROM scheduler_slots WHERE schedule_id = ?')
      .get(id) as {
      last: number | null;
    };
    return row.last ?? undefined;
  }

  /**
   * Claims a slot: inserts its unique row. True for the one caller that
   * inserted it; every other caller (another tick, another process) gets false.
   */
  claim(id: string, slotAt: number, holder: string, now: number): boolean {
    return this.db
      .transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT INTO scheduler_slots (schedule_id, slot_at, status, holder, claimed_at) VALUES (?, ?, 'claimed', ?, ?)
             ON CONFLICT (schedule_id, slot_at) DO NOTHING`,
          )
          .run(id, slotAt, holder, now);
        if (inserted.changes !== 1) return false;
        this.event(id, 'claimed', now, undefined, slotAt, holder);
        return true;
      })
      .immediate();
  }

  /** Marks a claimed slot running and counts one attempt. */
  attempt(id: string, slotAt: number, holder: string, now: number, attempt: number): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE scheduler_slots SET status = 'running', attempts = ? WHERE schedule_id = ? AND slot_at = ?`,
        )
        .run(attempt, id, slotAt);
      this.event(id, 'running', now, { attempt }, slotAt, holder);
    })();
  }

  slot(id: string, slotAt: number): SlotRow | undefined {
    return this.db
      .prepare('SELECT * FROM scheduler_slots WHERE schedule_id = ? AND slot_at = ?')
      .get(id, slotAt) as SlotRow | undefined;
  }

  slots(id?: string): SlotRow[] {
    return (
      id === undefined
        ? this.db.prepare('SELECT * FROM scheduler_slots ORDER BY slot_at').all()
        : this.db.prepare('SELECT * FROM scheduler_slots WHERE schedule_id = ? ORDER BY slot_at').all(id)
    ) as SlotRow[];
  }

  history(id: string): RunEvent[] {
    return this.db
      .prepare('SELECT * FROM scheduler_runs WHERE schedule_id = ? ORDER BY id')
      .all(id) as RunEvent[];
  }

  /**
   * Marks every claimed or running slot of another holder `interrupted`, and
   * counts it as fired: it is never fired again. Called by a process when it
   * becomes leader, so the previous leader's lease has expired. Returns them.
   */
  markInterrupted(holder: string, now: number): SlotRow[] {
    return this.db
      .transaction(() => {
        const stale = this.db
          .prepare(`SELECT * FROM scheduler_slots WHERE status IN ('claimed', 'running') AND holder != ?`)
          .all(holder) as SlotRow[];
        for (const slot of stale) {
          this.db
            .prepare(
              `UPDATE scheduler_slots SET status = 'interrupted', finished_at = ? WHERE schedule_id = ? AND slot_at = ?`,
            )
            .run(now, slot.schedule_id, slot.slot_at);
          this.db
            .prepare('UPDATE scheduler_schedules SET fired = fired + 1, updated_at = ? WHERE id = ?')
            .run(now, slot.schedule_id);
          this.event(slot.schedule_id, 'interrupted', now, { holder: slot.holder }, slot.slot_at, holder);
        }
        return stale;
      })
      .immediate();
  }

  /**
   * Takes or renews the lease `name` for `holder` until `now + ttl`: granted
   * when nobody holds it, its holder is `holder`, or its holder let it expire.
   */
  acquireLease(name: string, holder: string, now: number, ttl: number): { leader: boolean; took: boolean } {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare('SELECT holder, expires_at FROM scheduler_leases WHERE name = ?')
          .get(name) as { holder: string; expires_at: number } | undefined;
        if (row && row.holder !== holder && row.expires_at > now) return { leader: false, took: false };
        this.db
          .prepare(
            `INSERT INTO scheduler_leases (name, holder, expires_at, acquired_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
               acquired_at = CASE WHEN scheduler_leases.holder = excluded.holder THEN scheduler_leases.acquired_at
                                  ELSE excluded.acquired_at END`,
          )
          .run(name, holder, now + ttl, now);
        return { leader: true, took: row?.holder !== holder };
      })
      .immediate();
  }

  /** Gives the lease up at once, so another process need not wait for it to expire. */
  releaseLease(name: string, holder: string): void {
    this.db.prepare('DELETE FROM scheduler_leases WHERE name = ? AND holder = ?').run(name, holder);
  }

  leaseHolder(name: string): { holder: string; expires_at: number } | undefined {
    return this.db.prepare('SELECT holder, expires_at FROM scheduler_leases WHERE name = ?').get(name) as
      | { holder: string; expires_at: number }
      | undefined;
  }

  /**
   * Ends a firing: the slot's outcome, and in the same transaction the
   * schedule's counters and, when they say so, its closure. A schedule
   * cancelled or paused meanwhile keeps that state.
   */
  finish(
    schedule: Schedule,
    slotAt: number,
    holder: string,
    now: number,
    outcome: { ok: boolean; summary?: string; error?: string },
  ): Schedule {
    this.db
      .transaction(() => {
        this.db
          .prepare(
            `UPDATE scheduler_slots SET status = ?, finished_at = ?, summary = ?, error = ? WHERE schedule_id = ? AND slot_at = ?`,
          )
          .run(
            outcome.ok ? 'ok' : 'failed',
            now,
            outcome.summary?.slice(0, 4000) ?? null,
            outcome.error?.slice(0, 4000) ?? null,
            schedule.id,
            slotAt,
          );
        this.event(
          schedule.id,
          outcome.ok ? 'ok' : 'failed',
          now,
          outcome.ok ? outcome.summary?.slice(0, 4000) : outcome.error?.slice(0, 4000),
          slotAt,
          holder,
        );
        const row = this.db
          .prepare('SELECT * FROM scheduler_schedules WHERE id = ?')
          .get(schedule.id) as ScheduleRow;
        const fired = row.fired + 1;
        const consecutive = outcome.ok ? 0 : row.consecutive_failures + 1;
        let close: { state: ScheduleState; reason: string } | undefined;
        if (!outcome.ok && row.on_failure === 'cancel')
          close = { state: 'cancelled', reason: 'on_failure=cancel' };
        else if (
          !outcome.ok &&
          row.max_consecutive_failures !== null &&
          consecutive >= row.max_consecutive_failures
        )
          close = { state: 'cancelled', reason: `${consecutive} consecutive failures` };
        else if (row.count !== null && fired >= row.count)
          close = { state: 'completed', reason: `count ${row.count} reached` };
        const closing = close && (row.state === 'active' || row.state === 'paused');
        this.db
          .prepare(
            `UPDATE scheduler_schedules SET fired = ?, consecutive_failures = ?, state = ?, closed_reason = ?, updated_at = ? WHERE id = ?`,
          )
          .run(
            fired,
            consecutive,
            closing ? close!.state : row.state,
            closing ? close!.reason : row.closed_reason,
            now,
            schedule.id,
          );
        if (closing) this.event(schedule.id, close!.state, now, close!.reason, slotAt, holder);
      })
      .immediate();
    return this.get(schedule.id)!;
  }
}
