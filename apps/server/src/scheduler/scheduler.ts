import { randomBytes } from 'node:crypto';
import { formatCadence, parseCadence, resolveCadence, slotAfter, slotAtOrBefore } from './cadence.ts';
import {
  type Schedule,
  type ScheduleInput,
  ScheduleInputError,
  type SchedulePatch,
  scheduleInputSchema,
  schedulePatchSchema,
  validate,
} from './schedule.ts';
import { SchedulerStore } from './store.ts';

/** The instant a schedule was due, and which attempt at it this is (1, then 2 on a retry). */
export interface Slot {
  scheduleId: string;
  at: Date;
  attempt: number;
}

/** What a firing reports. A thrown error counts as `{ ok: false, error: message }`. */
export interface FireResult {
  ok: boolean;
  summary?: string;
  error?: string;
}

export type Fire = (schedule: Schedule, slot: Slot) => Promise<FireResult>;

/** A built-in task: a schedule the runtime registers by name, fired by its own function. */
export interface BuiltinTask {
  /** Unique, `snake_case` (`memory_aging`). */
  name: string;
  /** A formal cadence (`daily@04:00`) or a sentence. */
  cadence: string;
  timezone?: string;
  run: (slot: Slot) => Promise<FireResult>;
}

/** What one firing of a slot came to. */
export interface SlotOutcome {
  scheduleId: string;
  at: Date;
  ok: boolean;
  attempts: number;
  summary?: string;
  error?: string;
  state: Schedule['state'];
}

export interface SchedulerOptions {
  /** The store file, e.g. `<workspace>/.runtime/scheduler.sqlite`, or an open store. */
  store: string | SchedulerStore;
  fire: Fire;
  /** Told when a slot fails for good and its schedule says `on_failure: notify`. */
  notify?: (schedule: Schedule, slot: Slot, error: string) => void | Promise<void>;
  /** This process in the lease; random by default. */
  holder?: string;
  /** How long the lease lasts without renewal; default 3 minutes (three daemon ticks). */
  leaseMs?: number;
  /** The clock of `start()`'s loop and of the methods that take no `now`. */
  clock?: () => Date;
}

const LEASE = 'tick';

/** An id or name that names no schedule. */
export class ScheduleNotFoundError extends Error {
  readonly id: string;
  constructor(id: string) {
    super(`no schedule ${id}`);
    this.id = id;
    this.name = 'ScheduleNotFoundError';
  }
}

function ms(date: Date | undefined, clock: () => Date): number {
  return (date ?? clock()).getTime();
}

/**
 * The scheduler builtin: schedules in a SQLite store, fired exactly once per
 * slot by whichever process holds the lease.
 *
 * @example
 * const scheduler = new Scheduler({ store: '.runtime/scheduler.sqlite', fire: async () => ({ ok: true }) });
 * await scheduler.tick();
 */
export class Scheduler {
  readonly store: SchedulerStore;
  readonly holder: string;
  private readonly fire: Fire;
  private readonly notify: SchedulerOptions['notify'];
  private readonly leaseMs: number;
  private readonly clock: () => Date;
  private readonly builtins = new Map<string, BuiltinTask>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private leader = false;

  constructor(options: SchedulerOptions) {
    this.store = typeof options.store === 'string' ? new SchedulerStore(options.store) : options.store;
    this.fire = options.fire;
    this.notify = options.notify;
    this.holder = options.holder ?? `pid${process.pid}-${randomBytes(4).toString('hex')}`;
    this.leaseMs = options.leaseMs ?? 180_000;
    this.clock = options.clock ?? (() => new Date());
  }

  /**
   * Creates a schedule from untrusted input. A cadence written as a sentence
   * is translated here; `description` is for the user to confirm.
   */
  create(
    input: ScheduleInput | unknown,
    now?: Date,
  ): { schedule: Schedule; next_fire: string | null; description: string } {
    const parsed = validate(scheduleInputSchema, input);
    const cadence = resolveCadence(parsed.cadence, parsed.timezone);
    const schedule = this.store.insert(
      {
        name: null,
        target: parsed.target,
        cadence: cadence.text,
        timezone: parsed.timezone,
        channel: parsed.channel,
        count: parsed.count,
        expiry: parsed.expiry?.getTime() ?? null,
        on_failure: parsed.on_failure,
        max_consecutive_failures: parsed.max_consecutive_failures,
        paused: parsed.paused,
      },
      ms(now, this.clock),
    );
    return { schedule, next_fire: this.nextFire(schedule, now), description: cadence.description };
  }

  /**
   * Creates a one-shot reminder: a schedule whose target delivers `text` on
   * `channel` and runs nothing, fired once at `at` (cron to the second, UTC,
   * count 1) and closed a day later if it never could fire. Only the
   * reminders host service calls this; `by` (the executor that asked) is
   * kept in the schedule's `created` event.
   */
  createReminder(
    reminder: { text: string; at: Date; channel: string | null },
    by: Record<string, unknown>,
    now?: Date,
  ): { schedule: Schedule; next_fire: string | null } {
    const at = reminder.at;
    const cadence = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    const schedule = this.store.insert(
      {
        name: null,
        target: { kind: 'reminder', text: reminder.text },
        cadence: formatCadence(parseCadence(cadence, 'UTC')),
        timezone: 'UTC',
        channel: reminder.channel,
        count: 1,
        expiry: at.getTime() + 24 * 60 * 60_000,
        on_failure: 'skip',
        max_consecutive_failures: null,
        paused: false,
      },
      ms(now, this.clock),
      by,
    );
    return { schedule, next_fire: this.nextFire(schedule, now) };
  }

  /** The next instant a schedule will fire, ISO; null when manual, closed or past its expiry. */
  nextFire(schedule: Schedule, after?: Date): string | null {
    if (schedule.state === 'completed' || schedule.state === 'cancelled') return null;
    const cadence = parseCadence(schedule.cadence, schedule.timezone);
    const anchor = Date.parse(schedule.anchor);
    const last = this.store.lastSlot(schedule.id);
    const from = Math.max(ms(after, this.clock), last ?? -Infinity);
    const next =
      last === undefined && from <= anchor
        ? slotAtOrBefore(cadence, schedule.timezone, anchor, anchor)
        : undefined;
    const slot = next ?? slotAfter(cadence, schedule.timezone, anchor, from);
    if (slot === undefined) return null;
    if (schedule.expiry !== null && slot >= Date.parse(schedule.expiry)) return null;
    return new Date(slot).toISOString();
  }

  list(options: { all?: boolean } = {}): Schedule[] {
    return this.store.list(options.all ? undefined : ['active', 'paused']);
  }

  get(id: string): Schedule | undefined {
    return this.store.get(id);
  }

  private must(id: string): Schedule {
    const schedule = this.store.get(id);
    if (!schedule) throw new ScheduleNotFoundError(id);
    return schedule;
  }

  /**
   * Changes a schedule. `needsApproval` is true when the cadence or the target
   * changed: the caller asks the human before applying such a change (see
   * {@link Scheduler.wouldNeedApproval} to ask first). A new cadence counts slots from now.
   */
  modify(
    id: string,
    patch: SchedulePatch | unknown,
    now?: Date,
  ): { schedule: Schedule; needsApproval: boolean } {
    const schedule = this.must(id);
    if (schedule.state === 'completed' || schedule.state === 'cancelled')
      throw new ScheduleInputError([`schedule ${id} is ${schedule.state}`]);
    if (schedule.target.kind === 'builtin') throw new ScheduleInputError([`schedule ${id} is built in`]);
    const parsed = validate(schedulePatchSchema, patch);
    const at = ms(now, this.clock);
    const columns: Record<string, string | number | null> = {};
    const timezone = parsed.timezone ?? schedule.timezone;
    let cadenceChanged = false;
    if (parsed.cadence !== undefined || parsed.timezone !== undefined) {
      const cadence = resolveCadence(parsed.cadence ?? schedule.cadence, timezone).text;
      cadenceChanged = cadence !== schedule.cadence || timezone !== schedule.timezone;
      if (cadenceChanged) Object.assign(columns, { cadence, timezone, anchor: at });
    }
    const targetChanged =
      parsed.target !== undefined && JSON.stringify(parsed.target) !== JSON.stringify(schedule.target);
    if (targetChanged) columns.target = JSON.stringify(parsed.target);
    if (parsed.channel !== undefined) columns.channel = parsed.channel;
    if (parsed.count !== undefined) columns.count = parsed.count;
    if (parsed.expiry !== undefined) columns.expiry = parsed.expiry?.getTime() ?? null;
    if (parsed.on_failure !== undefined) columns.on_failure = parsed.on_failure;
    if (parsed.max_consecutive_failures !== undefined)
      columns.max_consecutive_failures = parsed.max_consecutive_failures;
    this.store.update(id, columns, at, { name: 'modified', detail: columns });
    return { schedule: this.must(id), needsApproval: cadenceChanged || targetChanged };
  }

  /** Whether a patch would touch cadence or target, without applying it. */
  wouldNeedApproval(id: string, patch: SchedulePatch | unknown): boolean {
    const schedule = this.must(id);
    const parsed = validate(schedulePatchSchema, patch);
    const timezone = parsed.timezone ?? schedule.timezone;
    const cadence =
      parsed.cadence === undefined
        ? schedule.cadence
        : formatCadence(resolveCadence(parsed.cadence, timezone).cadence);
    return (
      cadence !== schedule.cadence ||
      timezone !== schedule.timezone ||
      (parsed.target !== undefined && JSON.stringify(parsed.target) !== JSON.stringify(schedule.target))
    );
  }

  private transition(
    id: string,
    from: Schedule['state'][],
    to: Schedule['state'],
    reason: string,
    now?: Date,
  ) {
    const schedule = this.must(id);
    if (!from.includes(schedule.state))
      throw new ScheduleInputError([`schedule ${id} is ${schedule.state}, cannot become ${to}`]);
    this.store.update(
      id,
      { state: to, closed_reason: to === 'cancelled' || to === 'completed' ? reason : null },
      ms(now, this.clock),
      { name: to === 'active' ? 'resumed' : to, detail: reason },
    );
    return this.must(id);
  }

  cancel(id: string, reason = 'cancelled by the user', now?: Date): Schedule {
    return this.transition(id, ['active', 'paused'], 'cancelled', reason, now);
  }

  pause(id: string, now?: Date): Schedule {
    return this.transition(id, ['active'], 'paused', 'paused by the user', now);
  }

  /** Resumes a paused schedule; slots missed while paused are not fired. */
  resume(id: string, now?: Date): Schedule {
    const schedule = this.transition(id, ['paused'], 'active', 'resumed by the user', now);
    this.store.update(id, { anchor: ms(now, this.clock) }, ms(now, this.clock));
    return this.must(schedule.id);
  }

  history(id: string) {
    return this.store.history(id);
  }

  /**
   * Registers a built-in task: creates its schedule the first time, updates
   * its cadence when the code changed it, and fires `run` for its slots.
   */
  registerBuiltin(task: BuiltinTask, now?: Date): Schedule {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(task.name))
      throw new ScheduleInputError([`builtin name ${task.name}`]);
    const timezone = task.timezone ?? 'UTC';
    const cadence = resolveCadence(task.cadence, timezone).text;
    this.builtins.set(task.name, task);
    const at = ms(now, this.clock);
    const existing = this.store.byName(task.name);
    if (!existing)
      return this.store.insert(
        {
          name: task.name,
          target: { kind: 'builtin', task: task.name },
          cadence,
          timezone,
          channel: null,
          count: null,
          expiry: null,
          on_failure: 'notify',
          max_consecutive_failures: null,
          paused: false,
        },
        at,
      );
    if (existing.cadence !== cadence || existing.timezone !== timezone)
      this.store.update(existing.id, { cadence, timezone, anchor: at }, at, {
        name: 'modified',
        detail: { cadence, timezone },
      });
    return this.must(existing.id);
  }

  /**
   * Takes or renews the lease. A process that takes it over marks every slot
   * another holder claimed and did not finish `interrupted`.
   */
  lead(now?: Date): boolean {
    const at = ms(now, this.clock);
    const { leader, took } = this.store.acquireLease(LEASE, this.holder, at, this.leaseMs);
    if (leader && (took || !this.leader)) this.store.markInterrupted(this.holder, at);
    this.leader = leader;
    return leader;
  }

  /**
   * Fires what is due at `now`, if this process leads: for each active
   * schedule, the latest slot at or before `now` not yet claimed — one slot
   * even when several were missed. Closes schedules past their expiry or count.
   */
  async tick(now?: Date): Promise<{ leader: boolean; fired: SlotOutcome[] }> {
    const at = ms(now, this.clock);
    if (!this.lead(new Date(at))) return { leader: false, fired: [] };
    const firings: Promise<SlotOutcome>[] = [];
    for (const schedule of this.store.list(['active'])) {
      if (schedule.expiry !== null && Date.parse(schedule.expiry) <= at) {
        this.store.update(schedule.id, { state: 'completed', closed_reason: 'expiry reached' }, at, {
          name: 'completed',
          detail: 'expiry reached',
        });
        continue;
      }
      if (schedule.count !== null && schedule.fired >= schedule.count) {
        this.store.update(
          schedule.id,
          { state: 'completed', closed_reason: `count ${schedule.count} reached` },
          at,
          {
            name: 'completed',
            detail: `count ${schedule.count} reached`,
          },
        );
        continue;
      }
      if (schedule.target.kind === 'builtin' && !this.builtins.has(schedule.target.task)) continue;
      const cadence = parseCadence(schedule.cadence, schedule.timezone);
      const slot = slotAtOrBefore(cadence, schedule.timezone, Date.parse(schedule.anchor), at);
      if (slot === undefined) continue;
      const last = this.store.lastSlot(schedule.id);
      if (last !== undefined && slot <= last) continue;
      if (!this.store.claim(schedule.id, slot, this.holder, at)) continue;
      firings.push(this.run(schedule, slot));
    }
    return { leader: true, fired: await Promise.all(firings) };
  }

  /** Fires a schedule now, whatever its cadence (the only way a `manual` one fires). */
  async runNow(id: string, now?: Date): Promise<SlotOutcome | undefined> {
    const schedule = this.must(id);
    if (schedule.state !== 'active') throw new ScheduleInputError([`schedule ${id} is ${schedule.state}`]);
    const at = ms(now, this.clock);
    if (!this.store.claim(id, at, this.holder, at)) return undefined;
    return this.run(schedule, at);
  }

  private async attemptOnce(schedule: Schedule, slot: Slot): Promise<FireResult> {
    try {
      const builtin =
        schedule.target.kind === 'builtin' ? this.builtins.get(schedule.target.task) : undefined;
      const result = builtin ? await builtin.run(slot) : await this.fire(schedule, slot);
      return result && typeof result.ok === 'boolean'
        ? result
        : { ok: false, error: 'the firing returned no result' };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  private run(schedule: Schedule, slotAt: number): Promise<SlotOutcome> {
    const promise = this.runSlot(schedule, slotAt);
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
    return promise;
  }

  private async runSlot(schedule: Schedule, slotAt: number): Promise<SlotOutcome> {
    const attempts = schedule.on_failure === 'retry' || schedule.on_failure === 'notify' ? 2 : 1;
    let result: FireResult = { ok: false };
    let attempt = 0;
    while (attempt < attempts) {
      attempt += 1;
      this.store.attempt(schedule.id, slotAt, this.holder, this.clock().getTime(), attempt);
      result = await this.attemptOnce(schedule, { scheduleId: schedule.id, at: new Date(slotAt), attempt });
      if (result.ok) break;
      if (attempt < attempts)
        this.store.event(schedule.id, 'retry', this.clock().getTime(), result.error, slotAt, this.holder);
    }
    const after = this.store.finish(schedule, slotAt, this.holder, this.clock().getTime(), result);
    if (!result.ok && schedule.on_failure === 'notify' && this.notify) {
      try {
        await this.notify(
          after,
          { scheduleId: schedule.id, at: new Date(slotAt), attempt },
          result.error ?? 'failed',
        );
        this.store.event(schedule.id, 'notified', this.clock().getTime(), result.error, slotAt, this.holder);
      } catch {
        // a notification that fails must not bring the loop down
      }
    }
    return {
      scheduleId: schedule.id,
      at: new Date(slotAt),
      ok: result.ok,
      attempts: attempt,
      summary: result.summary,
      error: result.error,
      state: after.state,
    };
  }

  /** Ticks every `intervalMs` (default 60 s) until `stop()`; a tick that throws does not stop the loop. */
  start(intervalMs = 60_000, onError: (error: unknown) => void = () => {}): void {
    if (this.timer) return;
    const loop = () => {
      this.tick().catch(onError);
    };
    loop();
    this.timer = setInterval(loop, intervalMs);
  }

  /** Stops the loop, waits for firings under way, gives the lease up and closes the store. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight]);
    if (this.store.db.open) {
      this.store.releaseLease(LEASE, this.holder);
      this.store.close();
    }
  }
}
