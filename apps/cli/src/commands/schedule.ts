import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CadenceError,
  createScheduledFire,
  resolveCadence,
  type Schedule,
  ScheduleInputError,
  ScheduleNotFoundError,
  Scheduler,
} from '@metnos/server';
import { CliFailure, type CliIo } from '../output.ts';
import { confirm, openLearningEngine, runtime } from './ask.ts';

export const SCHEDULE_HELP = `metnos schedule — what Metnos does on its own, at a cadence

Usage:
  metnos schedule add "<request>" --every "<cadence>" [--tz <zone>] [--channel <name>] [--yes]
  metnos schedule add --executor <name> --args '<json>' --every "<cadence>" [--tz <zone>] [--yes]
  metnos schedule list [--all] [--json]
  metnos schedule pause|resume|cancel <id>
  metnos schedule run-now <id>

A cadence is cron ("0 8 * * *"), daily@HH:MM, every_N_minutes, manual, or a sentence such as
"every morning at 8" or "ogni lunedì alle 9"; it is shown back as cron with the next firing and
asked to confirm (--yes confirms ahead). The schedules are kept in scheduler.sqlite in the data
dir, where \`metnos serve\` fires them exactly once per slot; run-now fires one here and now.
`;

function openScheduler(data: string, fire?: ConstructorParameters<typeof Scheduler>[0]['fire']) {
  return new Scheduler({
    store: join(data, 'scheduler.sqlite'),
    fire: fire ?? (async () => ({ ok: false, error: 'this process does not fire schedules' })),
  });
}

function describe(schedule: Schedule, scheduler: Scheduler): string {
  const target =
    schedule.target.kind === 'request'
      ? `"${schedule.target.text}"`
      : schedule.target.kind === 'executor'
        ? `${schedule.target.executor}`
        : schedule.target.kind === 'reminder'
          ? `reminder "${schedule.target.text}"`
          : `built-in ${schedule.name ?? ''}`;
  const next = scheduler.nextFire(schedule);
  return `${schedule.id}  ${schedule.state.padEnd(9)}  ${schedule.cadence} (${schedule.timezone})  ${target}${next ? `  next ${next}` : ''}`;
}

/** The arguments of `add` as the schedule's input. */
function addInput(values: Record<string, string | boolean | undefined>, positionals: string[]) {
  const request = positionals.join(' ').trim();
  const every = values.every;
  if (typeof every !== 'string' || !every.trim()) throw new CliFailure('add needs --every "<cadence>"', 2);
  let target: Record<string, unknown>;
  if (typeof values.executor === 'string') {
    let args: unknown = {};
    try {
      args = typeof values.args === 'string' ? JSON.parse(values.args) : {};
    } catch {
      throw new CliFailure('--args must be a JSON object', 2);
    }
    target = { kind: 'executor', executor: values.executor, args };
  } else if (request) target = { kind: 'request', text: request };
  else throw new CliFailure('add needs the request text, or --executor <name>', 2);
  return {
    target,
    cadence: every,
    ...(typeof values.tz === 'string' ? { timezone: values.tz } : {}),
    ...(typeof values.channel === 'string' ? { channel: values.channel } : {}),
  };
}

/** `metnos schedule …`: add, list, pause, resume, cancel, run-now over the data dir's scheduler store. */
export async function scheduleCommand(argv: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = argv;
  if (!action || action === '--help' || action === '-h') {
    io.out(SCHEDULE_HELP);
    return action ? 0 : 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      every: { type: 'string' },
      tz: { type: 'string' },
      channel: { type: 'string' },
      executor: { type: 'string' },
      args: { type: 'string' },
      yes: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      executors: { type: 'string' },
      workspace: { type: 'string' },
    },
  });
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  try {
    return await runAction(action, values, positionals, context, io);
  } catch (error) {
    if (
      error instanceof CadenceError ||
      error instanceof ScheduleInputError ||
      error instanceof ScheduleNotFoundError
    )
      throw new CliFailure(error.message, 2);
    throw error;
  }
}

async function runAction(
  action: string,
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  context: Awaited<ReturnType<typeof runtime>>,
  io: CliIo,
): Promise<number> {
  if (action === 'run-now') return runNow(positionals[0], context, io);
  const scheduler = openScheduler(context.data);
  try {
    switch (action) {
      case 'add': {
        const input = addInput(values, positionals);
        const resolved = resolveCadence(input.cadence, input.timezone ?? 'UTC');
        io.err(`cadence: ${resolved.text} — ${resolved.description}`);
        if (!values.yes && !(await confirm(io, 'Create this schedule?'))) {
          io.err('not created (confirm with --yes, or answer y)');
          return 1;
        }
        const created = scheduler.create({ ...input, cadence: resolved.text });
        io.out(values.json ? JSON.stringify(created, null, 2) : describe(created.schedule, scheduler));
        return 0;
      }
      case 'list': {
        const schedules = scheduler.list({ all: values.all === true });
        if (values.json) io.out(JSON.stringify(schedules, null, 2));
        else if (schedules.length === 0) io.out('no schedules');
        else for (const schedule of schedules) io.out(describe(schedule, scheduler));
        return 0;
      }
      case 'pause':
      case 'resume':
      case 'cancel': {
        const id = positionals[0];
        if (!id) throw new CliFailure(`${action} needs a schedule id (metnos schedule list)`, 2);
        io.out(describe(scheduler[action](id), scheduler));
        return 0;
      }
      default:
        throw new CliFailure(
          `unknown schedule action "${action}" (add, list, pause, resume, cancel, run-now)`,
          2,
        );
    }
  } finally {
    await scheduler.stop();
    scheduler.store.close?.();
  }
}

/** Fires one schedule now, through the same engine and sandboxed invoker `metnos serve` uses. */
async function runNow(id: string | undefined, context: Awaited<ReturnType<typeof runtime>>, io: CliIo) {
  if (!id) throw new CliFailure('run-now needs a schedule id (metnos schedule list)', 2);
  const { engine, invoker, close } = await openLearningEngine(context, io, {
    yes: false,
    ask: false,
    variant: 'learning',
  });
  const scheduler = openScheduler(
    context.data,
    createScheduledFire({ engine, invoker, workspace: context.place.workspace }),
  );
  try {
    const outcome = await scheduler.runNow(id);
    if (!outcome) throw new CliFailure(`schedule ${id} cannot run now`, 1);
    io.out(JSON.stringify(outcome));
    return (outcome as { status?: string }).status === 'failed' ? 1 : 0;
  } finally {
    await scheduler.stop();
    scheduler.store.close?.();
    close();
  }
}
