import { defineExecutor, type ExecutorContext, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

interface Args {
  text: string;
  at?: string;
  in_minutes?: number;
  channel?: string;
}

interface Output {
  schedule_id: string;
  next_fire: string | null;
  channel: string | null;
  text: string;
}

const REMINDERS_URL = 'http://metnos.host/reminders';
// An instant with a date, a time and a zone: a local time would mean a different instant on every host.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

const cut = (value: string, length: number) => (value.length > length ? `${value.slice(0, length)}…` : value);

/** Asks the host's `reminders` service for one reminder: its answer, or a typed failure. */
async function ask(body: Record<string, unknown>, ctx: ExecutorContext): Promise<Record<string, unknown>> {
  if (!(process.env.HTTP_PROXY ?? process.env.http_proxy))
    throw new ExecutorFailure(
      'NotOffered',
      'no host services reach this sandbox, so no reminder can be set here',
    );
  let response: Response;
  try {
    response = await fetch(REMINDERS_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(Math.max(500, ctx.remainingMs() - 500)),
    });
  } catch (error) {
    // the request may have reached the host: say so rather than pretend nothing happened
    throw new ExecutorFailure(
      'Unavailable',
      `the reminders service did not answer (${(error as Error).name}); the reminder may or may not be set`,
    );
  }
  let answer: unknown;
  try {
    answer = await response.json();
  } catch {
    throw new ExecutorFailure(
      'Unavailable',
      `the reminders service answered HTTP ${response.status} without JSON`,
    );
  }
  const record = (answer ?? {}) as Record<string, unknown>;
  if (response.status === 200) return record;
  const error = (record.error ?? {}) as Record<string, unknown>;
  const message = typeof error.message === 'string' ? cut(error.message, 300) : `HTTP ${response.status}`;
  if (response.status === 403)
    throw new ExecutorFailure('NotOffered', `reminders are not offered here: ${message}`);
  if (error.class === 'InvalidInput') throw new ExecutorFailure('Refused', message);
  throw new ExecutorFailure('Unavailable', `the reminders service refused: ${message}`);
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    if ((args.at === undefined) === (args.in_minutes === undefined))
      throw new ExecutorFailure('BadTime', 'say when: either at (an ISO instant) or in_minutes, not both');
    if (args.at !== undefined && (!INSTANT.test(args.at) || !Number.isFinite(Date.parse(args.at))))
      throw new ExecutorFailure(
        'BadTime',
        `"${cut(args.at, 40)}" is not an instant such as 2026-05-04T09:30:00+02:00 (a date, a time and Z or an offset)`,
      );
    const body: Record<string, unknown> = {
      text: args.text,
      ...(args.at !== undefined ? { at: args.at } : { in_minutes: args.in_minutes }),
      ...(args.channel !== undefined ? { channel: args.channel } : {}),
    };
    const answer = await ask(body, ctx);
    if (typeof answer.schedule_id !== 'string')
      throw new ExecutorFailure('Unavailable', 'the reminders service answered without a schedule id');
    return ok({
      schedule_id: answer.schedule_id,
      next_fire: typeof answer.next_fire === 'string' ? answer.next_fire : null,
      channel: typeof answer.channel === 'string' ? answer.channel : null,
      text: args.text,
    });
  },
});
