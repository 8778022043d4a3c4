import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ExecutorResult, InvokeOptions } from '@metnos/executor-sdk';
import type { EngineResult, MaintenanceReport, TurnOptions } from '@metnos/planner';
import { isTimeZone } from './cadence.ts';
import type { Schedule } from './schedule.ts';
import { type Fire, type FireResult, Scheduler, type Slot } from './scheduler.ts';

/** The part of the engine a schedule drives: a turn for a request, a round of maintenance for aging. */
export interface ScheduledEngine {
  runTurn(request: string, options?: TurnOptions): Promise<EngineResult>;
  maintain(): Promise<MaintenanceReport>;
}

/** The part of the invoker a schedule drives. */
export interface ScheduledInvoker {
  invoke(name: string, args: unknown, options: InvokeOptions): Promise<ExecutorResult>;
}

/** Sends a schedule's result (or its failure) to a named channel (`telegram`, `telegram:<chat id>`). */
export type Deliver = (channel: string, text: string) => Promise<void>;

/** Told when a slot fails for good and its schedule says `on_failure: notify`. */
export type Notify = (schedule: Schedule, slot: Slot, error: string) => void | Promise<void>;

/** What {@link createScheduledFire} needs. */
export interface ScheduledFireSettings {
  engine: Pick<ScheduledEngine, 'runTurn'>;
  invoker: ScheduledInvoker;
  /** The workspace root executors run in. */
  workspace: string;
  /** Where results go when a schedule names a channel; without it such results are only recorded. */
  deliver?: Deliver;
  /**
   * Called for a failure under `on_failure: notify`. Default: the failure is
   * sent to the schedule's channel through `deliver`, when it names one.
   */
  notify?: Notify;
}

/** The scheduler's `fire`, with the `notify` that goes with it. */
export interface ScheduledFire extends Fire {
  notify: Notify;
}

/** The longest text a firing records or hands to a channel. */
const SUMMARY_LIMIT = 3500;

function cut(text: string, limit = SUMMARY_LIMIT): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** A result's content as text: a string as it is, anything else as JSON. */
function render(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  try {
    return JSON.stringify(content) ?? '';
  } catch {
    return '[content that is not JSON]';
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The instant of a slot as it appears in trace and turn ids. */
function slotKey(slot: Slot): string {
  return slot.at.toISOString();
}

async function runRequest(
  settings: ScheduledFireSettings,
  schedule: Schedule,
  slot: Slot,
  text: string,
): Promise<FireResult> {
  const result = await settings.engine.runTurn(text, {
    turnId: `sched:${schedule.id}:${slotKey(slot)}:${slot.attempt}`,
  });
  if (result.finalKind === 'answer') return { ok: true, summary: cut(result.finalMessage) };
  if (result.finalKind === 'pending_approval')
    // not a failure to retry: running the turn again would ask a second time
    return {
      ok: true,
      summary: cut(
        `waiting for your approval to run ${result.pending?.tool ?? 'a step'}${
          result.finalMessage ? `: ${result.finalMessage}` : ''
        }`,
      ),
    };
  return {
    ok: false,
    error: cut(
      `the turn ended without an answer (${result.termination?.cause ?? 'terminated'}): ${result.finalMessage}`,
    ),
  };
}

async function runExecutor(
  settings: ScheduledFireSettings,
  schedule: Schedule,
  slot: Slot,
  executor: string,
  args: Record<string, unknown>,
): Promise<FireResult> {
  const result = await settings.invoker.invoke(executor, args, {
    workspace: settings.workspace,
    caller: { kind: 'scheduler', scheduleId: schedule.id },
    traceId: `sched:${schedule.id}:${slotKey(slot)}`,
    turnId: `sched:${schedule.id}:${slotKey(slot)}:${slot.attempt}`,
  });
  // the summary names the executor and its result, never the arguments it was given
  if (!result.ok)
    return { ok: false, error: cut(`${executor}: ${result.error.class}: ${result.error.message}`) };
  const content = render(result.content);
  return { ok: true, summary: cut(content ? `${executor}: ${content}` : `${executor}: done`) };
}

/**
 * The scheduler's `fire` for the server: a request target runs
 * `engine.runTurn(text)`, an executor target runs `invoker.invoke(executor,
 * args, …)` with `caller: { kind: 'scheduler', scheduleId }` and the trace id
 * `sched:<id>:<slot ISO>`, a reminder target runs nothing and its summary is
 * `Reminder: <text>`. The result's summary (the answer, or the
 * executor's name and output; never its arguments) goes back to the
 * scheduler and, when the schedule names a channel, to `deliver`. A delivery
 * that fails does not fail the firing (the work is done; a retry would do it
 * twice): the summary says it was not delivered. A turn that waits for an
 * approval counts as fired and says so. `fire.notify` is the scheduler's
 * `notify`.
 *
 * @example
 * const fire = createScheduledFire({ engine, invoker, workspace, deliver });
 * const scheduler = new Scheduler({ store, fire, notify: fire.notify });
 */
export function createScheduledFire(settings: ScheduledFireSettings): ScheduledFire {
  const fire = async (schedule: Schedule, slot: Slot): Promise<FireResult> => {
    const target = schedule.target;
    let result: FireResult;
    if (target.kind === 'request') result = await runRequest(settings, schedule, slot, target.text);
    else if (target.kind === 'reminder') result = { ok: true, summary: cut(`Reminder: ${target.text}`) };
    else if (target.kind === 'executor')
      result = await runExecutor(settings, schedule, slot, target.executor, target.args);
    else return { ok: false, error: `built-in task ${target.task} is not registered in this process` };
    if (!result.ok || schedule.channel === null) return result;
    const summary = result.summary ?? 'done';
    if (!settings.deliver)
      return { ...result, summary: cut(`${summary}\n(no delivery for ${schedule.channel})`) };
    try {
      await settings.deliver(schedule.channel, summary);
      return result;
    } catch (error) {
      return {
        ...result,
        summary: cut(`${summary}\n(not delivered to ${schedule.channel}: ${cut(errorText(error), 200)})`),
      };
    }
  };
  const notify: Notify = async (schedule, slot, error) => {
    if (settings.notify) return settings.notify(schedule, slot, error);
    if (!settings.deliver || schedule.channel === null) return;
    const what =
      schedule.target.kind === 'executor'
        ? schedule.target.executor
        : schedule.target.kind === 'reminder'
          ? 'a reminder'
          : 'a scheduled request';
    await settings.deliver(
      schedule.channel,
      cut(`Schedule ${schedule.id} (${what}) failed at ${slotKey(slot)}: ${error}`),
    );
  };
  return Object.assign(fire, { notify });
}

/**
 * A {@link Deliver} for the Telegram channel: `telegram` sends to
 * `defaultChatId`, `telegram:<chat id>` to that chat (which the channel must
 * allow); any other channel name is refused.
 *
 * @example
 * const deliver = telegramDelivery(channel, 123456789);
 * await deliver('telegram', 'good morning');
 */
export function telegramDelivery(
  channel: { deliver(chatId: number, text: string): Promise<void> },
  defaultChatId?: number,
): Deliver {
  return async (name, text) => {
    const match = /^telegram(?::(-?\d{1,20}))?$/.exec(name);
    if (!match) throw new Error(`no delivery for channel ${name}`);
    const chatId = match[1] === undefined ? defaultChatId : Number(match[1]);
    if (chatId === undefined || !Number.isSafeInteger(chatId))
      throw new Error(`channel ${name} names no chat`);
    await channel.deliver(chatId, text);
  };
}

/** The built-in tasks the server registers. */
export const BUILTIN_TASKS = {
  /** Memory aging: `engine.maintain()` (aging, invalidation, re-embedding, calibration). */
  memoryAging: { name: 'memory_aging', cadence: 'daily@04:00' },
  /** The mnestome/synt hook: the mnestome's ager when the server has one (`mnestomeAgerTask`). */
  synt: { name: 'mnestome_synt', cadence: 'daily@04:30' },
} as const;

/** What {@link startSchedulerService} needs. */
export interface SchedulerServiceSettings extends Omit<ScheduledFireSettings, 'engine'> {
  /** The store file; the server passes `<workspace>/.runtime/scheduler.sqlite`. */
  path: string;
  engine: ScheduledEngine;
  /** Milliseconds between ticks (default 60 s). */
  tickMs?: number;
  /** The zone the built-ins' hours are read in: default this machine's, else UTC. */
  timezone?: string;
  /** What the synt hook runs (`mnestomeAgerTask(...)`: the mnestome's ager); default nothing. */
  synt?: (slot: Slot) => Promise<FireResult>;
  /** Told of a tick that throws; the loop goes on. */
  onError?: (error: unknown) => void;
  holder?: string;
  leaseMs?: number;
  clock?: () => Date;
}

function localZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && isTimeZone(zone) ? zone : 'UTC';
}

function describeMaintenance(report: MaintenanceReport): string {
  const calibrated = Object.keys(report.calibrated);
  return [
    `${report.aged.length} aged`,
    `${report.invalidated.length} invalidated`,
    `${report.retired.length} retired`,
    `${report.reembedded} re-embedded`,
    calibrated.length > 0 ? `calibrated ${calibrated.join(', ')}` : 'no calibration',
  ].join(', ');
}

/**
 * Opens the scheduler store at `path` (creating its folder), registers the
 * built-ins — memory aging (`engine.maintain()`) daily at 04:00 and the
 * mnestome/synt hook daily at 04:30, each once however often the service
 * starts — fires schedules through {@link createScheduledFire}, and ticks
 * every `tickMs`. `stop()` ends the loop, waits for firings under way, gives
 * the lease up and closes the store.
 *
 * @example
 * const service = startSchedulerService({
 *   path: join(workspace, '.runtime', 'scheduler.sqlite'), engine, invoker, workspace, deliver,
 * });
 * process.once('SIGTERM', () => void service.stop());
 */
export function startSchedulerService(settings: SchedulerServiceSettings) {
  mkdirSync(dirname(settings.path), { recursive: true, mode: 0o700 });
  const fire = createScheduledFire(settings);
  const scheduler = new Scheduler({
    store: settings.path,
    fire,
    notify: fire.notify,
    holder: settings.holder,
    leaseMs: settings.leaseMs,
    clock: settings.clock,
  });
  const timezone = settings.timezone ?? localZone();
  let builtins: { memoryAging: Schedule; synt: Schedule };
  try {
    builtins = {
      memoryAging: scheduler.registerBuiltin({
        ...BUILTIN_TASKS.memoryAging,
        timezone,
        run: async () => ({ ok: true, summary: describeMaintenance(await settings.engine.maintain()) }),
      }),
      synt: scheduler.registerBuiltin({
        ...BUILTIN_TASKS.synt,
        timezone,
        run: settings.synt ?? (async () => ({ ok: true, summary: 'nothing to do yet' })),
      }),
    };
  } catch (error) {
    void scheduler.stop();
    throw error;
  }
  scheduler.start(settings.tickMs ?? 60_000, settings.onError);
  let stopping: Promise<void> | undefined;
  return {
    scheduler,
    builtins,
    /** Stops ticking, lets firings under way finish, releases the lease and closes the store. */
    stop(): Promise<void> {
      stopping ??= scheduler.stop();
      return stopping;
    },
  };
}

export type SchedulerService = ReturnType<typeof startSchedulerService>;
