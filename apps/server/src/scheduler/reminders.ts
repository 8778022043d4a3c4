import type { HostService, HostServiceAnswer, HostServiceCall } from '@metnos/executor-sdk';
import { z } from 'zod';
import { hostileInputIssues } from './schedule.ts';
import type { Scheduler } from './scheduler.ts';

/** How far ahead a reminder may be set: one year. */
export const REMINDER_MAX_AHEAD_MS = 366 * 24 * 60 * 60_000;

const CHANNEL_NAME = /^[a-z][a-z0-9_:-]{0,63}$/;

/**
 * What an executor may ask of the reminders service, and nothing more: a
 * text, when (an ISO instant with a zone, or minutes from now) and where. No
 * field names an executor, a request or a cadence, so a reminder can never
 * make Metnos run something.
 */
export const reminderRequestSchema = z
  .strictObject({
    text: z.string().trim().min(1).max(1000),
    at: z.iso.datetime({ offset: true }).optional(),
    in_minutes: z.number().int().min(1).max(527_040).optional(),
    channel: z.string().regex(CHANNEL_NAME, 'a channel name such as "telegram"').optional(),
  })
  .refine((value) => (value.at === undefined) !== (value.in_minutes === undefined), {
    message: 'give exactly one of at (an ISO instant) and in_minutes',
  });

/** Settings of {@link createRemindersService}. */
export interface RemindersServiceSettings {
  /**
   * The scheduler reminders are created in, or a function that opens it when
   * the first reminder is asked (`metnos ask` opens the data folder's store
   * only then).
   */
  scheduler: Scheduler | (() => Scheduler);
  /** The channel of a reminder that names none (e.g. `telegram`); without it such a reminder is only recorded. */
  defaultChannel?: string;
  /** Which channel names an executor may pick; default: only the default channel. */
  allowChannel?: (name: string) => boolean;
  clock?: () => Date;
}

const refusal = (errorClass: string, message: string): HostServiceAnswer => ({
  ok: false,
  error: { class: errorClass, message },
});

/**
 * The `reminders` host service: `{ text, at | in_minutes, channel? }` →
 * `{ schedule_id, next_fire }`. It is the narrow capability a seed executor
 * may hold instead of the scheduler builtin (`system:scheduler`, which no seed
 * or synthesised executor is ever granted): it creates one one-shot schedule
 * (count 1) whose target only delivers the text on the channel, never an
 * executor or a request, so nothing an executor does through it makes
 * Metnos act. The executor that asked (name, version, trace and turn) is
 * kept in the schedule's `created` event, the scheduler's append-only audit.
 *
 * @example
 * const reminders = createRemindersService({ scheduler, defaultChannel: 'telegram' });
 * const engine = createEngine({ ...settings, hostServices: { reminders } });
 */
export function createRemindersService(settings: RemindersServiceSettings): HostService {
  const clock = settings.clock ?? (() => new Date());
  const allowChannel = settings.allowChannel ?? ((name: string) => name === settings.defaultChannel);
  let scheduler: Scheduler | undefined;
  const open = () => {
    scheduler ??= typeof settings.scheduler === 'function' ? settings.scheduler() : settings.scheduler;
    return scheduler;
  };
  return (call: HostServiceCall): HostServiceAnswer => {
    const hostile = hostileInputIssues(call.body);
    if (hostile.length > 0) return refusal('InvalidInput', hostile[0]!);
    const parsed = reminderRequestSchema.safeParse(call.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return refusal(
        'InvalidInput',
        `${['reminder', ...issue.path.map(String)].join('.')}: ${issue.message}`,
      );
    }
    const request = parsed.data;
    const now = clock();
    const at =
      request.at !== undefined
        ? new Date(request.at)
        : new Date(now.getTime() + request.in_minutes! * 60_000);
    if (at.getTime() <= now.getTime()) return refusal('InvalidInput', `${request.at} is not in the future`);
    if (at.getTime() - now.getTime() > REMINDER_MAX_AHEAD_MS)
      return refusal('InvalidInput', 'a reminder is at most a year ahead');
    const channel = request.channel ?? settings.defaultChannel ?? null;
    if (channel !== null && !allowChannel(channel))
      return refusal('InvalidInput', `reminders cannot be delivered on channel ${channel}`);
    const created = open().createReminder(
      { text: request.text, at, channel },
      {
        kind: 'executor',
        executor: call.executor.name,
        version: call.executor.version,
        trace_id: call.traceId,
        ...(call.turnId ? { turn_id: call.turnId } : {}),
      },
      now,
    );
    return { ok: true, value: { schedule_id: created.schedule.id, next_fire: created.next_fire, channel } };
  };
}
