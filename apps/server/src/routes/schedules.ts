import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { CadenceError, resolveCadence, slotAfter, slotAtOrBefore } from '../scheduler/cadence.ts';
import {
  hostileInputIssues,
  type Schedule,
  ScheduleInputError,
  scheduleInputSchema,
  schedulePatchSchema,
} from '../scheduler/schedule.ts';
import { ScheduleNotFoundError, type Scheduler } from '../scheduler/scheduler.ts';

/** What {@link registerScheduleRoutes} needs. */
export interface ScheduleRouteSettings {
  scheduler: Scheduler;
}

const scheduleIdParam = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'not a schedule id');
/** `GET /api/schedules`: `all=true` adds completed and cancelled schedules; other keys are ignored. */
const listQuery = z.object({ all: z.enum(['true', 'false']).optional() });
const BODY_LIMIT = 64 * 1024;

/** `POST /api/schedules`: a schedule's fields, the cadence formally (`cadence`) or as a sentence (`text`). */
const createBody = scheduleInputSchema
  .extend({
    cadence: z.string().trim().min(1).max(200).optional(),
    text: z.string().trim().min(1).max(200).optional(),
    confirm: z.boolean().default(false),
  })
  .refine((body) => (body.cadence === undefined) !== (body.text === undefined), {
    message: 'give the cadence as `cadence` or as a sentence in `text`, one of them',
    path: ['cadence'],
  });

/** `PATCH /api/schedules/:id`: the fields to change, and `approved` for a change of cadence or target. */
const patchBody = schedulePatchSchema.extend({ approved: z.boolean().default(false) });

/** The routes {@link registerScheduleRoutes} mounts, for the OpenAPI document. */
export const scheduleRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/schedules',
    summary: 'active and paused schedules (all with `all=true`), each with `state` and `next_fire`',
    query: listQuery,
    refusals: [400],
  },
  {
    method: 'get',
    path: '/api/schedules/:id/runs',
    summary: 'the schedule, its append-only history and its slots with outcome and summary',
    params: { id: scheduleIdParam },
    refusals: [400, 404],
  },
  {
    method: 'post',
    path: '/api/schedules',
    summary: 'creates a schedule: without `confirm: true` only reads the cadence back and creates nothing',
    description:
      'Exactly one of `cadence` (formal or a sentence) and `text` (a sentence). Before zod: nesting over 8, `__proto__`/`constructor`/`prototype` keys and strings over 4,000 characters are refused.',
    body: createBody,
    success: 201,
    refusals: [400, 413],
  },
  {
    method: 'patch',
    path: '/api/schedules/:id',
    summary:
      'changes fields; a new cadence, time zone or target needs `approved: true`, else 409 `approval_required`',
    params: { id: scheduleIdParam },
    body: patchBody,
    refusals: [400, 404, 409, 413],
  },
  ...(
    [
      ['pause', 'active → paused'],
      ['resume', 'paused → active (missed slots are not fired)'],
      ['cancel', '→ cancelled (built-ins refuse: pause them)'],
      ['run-now', 'fires one slot now and returns its outcome'],
    ] as const
  ).map(
    ([name, summary]): RouteDoc => ({
      method: 'post',
      path: `/api/schedules/:id/${name}`,
      summary,
      params: { id: scheduleIdParam },
      refusals: [400, 404, 409],
    }),
  ),
];

type Refusal = { status: 400 | 404 | 409 | 413; error: string; message: string; issues?: string[] };

async function readBody(c: Context): Promise<{ ok: true; value: unknown } | { ok: false; refusal: Refusal }> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > BODY_LIMIT)
    return {
      ok: false,
      refusal: { status: 413, error: 'too_large', message: 'the body is larger than 64 KiB' },
    };
  const text = await c.req.text();
  if (Buffer.byteLength(text) > BODY_LIMIT)
    return {
      ok: false,
      refusal: { status: 413, error: 'too_large', message: 'the body is larger than 64 KiB' },
    };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, refusal: { status: 400, error: 'invalid', message: 'the body is not JSON' } };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return {
      ok: false,
      refusal: { status: 400, error: 'invalid', message: 'the body is not a JSON object' },
    };
  const hostile = hostileInputIssues(value);
  if (hostile.length > 0)
    return {
      ok: false,
      refusal: { status: 400, error: 'invalid', message: `refused: ${hostile.join('; ')}`, issues: hostile },
    };
  return { ok: true, value };
}

function parse<T extends z.ZodType>(
  schema: T,
  value: unknown,
): { ok: true; data: z.output<T> } | { ok: false; refusal: Refusal } {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  const issues = result.error.issues.map(
    (issue) => `${['body', ...issue.path.map(String)].join('.')}: ${issue.message}`,
  );
  return { ok: false, refusal: { status: 400, error: 'invalid', message: issues.join('; '), issues } };
}

/** What a refused request gets: `{ error, message }`, with `issues` when there are several. */
function refuse(c: Context, refusal: Refusal) {
  const { status, ...body } = refusal;
  return c.json(body, status);
}

/** Maps what the scheduler throws to a refusal; anything else goes to the app's error handler. */
function refusalOf(error: unknown, conflict = false): Refusal {
  if (error instanceof ScheduleNotFoundError)
    return { status: 404, error: 'not_found', message: `no schedule ${error.id}` };
  if (error instanceof CadenceError)
    return {
      status: 400,
      error: 'cadence',
      message: error.message,
      issues: [`not understood: ${error.unparsed}`],
    };
  if (error instanceof ScheduleInputError)
    return {
      status: conflict ? 409 : 400,
      error: conflict ? 'conflict' : 'invalid',
      message: error.issues.join('; '),
      issues: error.issues,
    };
  throw error;
}

/** A schedule as the API shows it: the stored fields and the next firing. */
function view(scheduler: Scheduler, schedule: Schedule) {
  return { ...schedule, next_fire: scheduler.nextFire(schedule) };
}

/** The next instant a schedule created now would fire, for the confirmation. */
function previewNextFire(
  cadence: ReturnType<typeof resolveCadence>['cadence'],
  timezone: string,
): string | null {
  const now = Date.now();
  const slot = slotAtOrBefore(cadence, timezone, now, now) ?? slotAfter(cadence, timezone, now, now);
  return slot === undefined ? null : new Date(slot).toISOString();
}

/**
 * The scheduler's routes, mounted on an app whose middleware already asks
 * for the bearer token:
 *
 * - `GET /api/schedules` (`?all=true` adds completed and cancelled ones) → each with `next_fire`
 * - `GET /api/schedules/:id/runs` → the append-only history and the slots fired
 * - `POST /api/schedules` `{ target, cadence | text, …, confirm }` → without `confirm: true`
 *   only the parsed cron and its description (nothing is created); with it, 201 and the schedule
 * - `PATCH /api/schedules/:id` `{ …fields, approved }` → a change of cadence or target
 *   without `approved: true` is refused with 409 `approval_required`, nothing changed
 * - `POST /api/schedules/:id/pause|resume|cancel|run-now`
 *
 * Refusals are `{ error, message }` (and `issues`): 400 for input the
 * scheduler's checks refuse (nesting, prototype keys, sizes, unknown
 * fields), 404 for an unknown id, 409 for a state that forbids the action.
 *
 * @example
 * registerScheduleRoutes(app, { scheduler });
 */
export function registerScheduleRoutes(app: Hono, settings: ScheduleRouteSettings): void {
  const { scheduler } = settings;
  const scheduleId = (c: Context): string | undefined => {
    const parsed = scheduleIdParam.safeParse(c.req.param('id'));
    return parsed.success ? parsed.data : undefined;
  };
  const badId = (c: Context) => refuse(c, { status: 400, error: 'invalid', message: 'not a schedule id' });

  app.get('/api/schedules', (c) => {
    const query = listQuery.safeParse({ all: c.req.query('all') });
    if (!query.success) return refuse(c, { status: 400, error: 'invalid', message: 'all is true or false' });
    return c.json({
      schedules: scheduler
        .list({ all: query.data.all === 'true' })
        .map((schedule) => view(scheduler, schedule)),
    });
  });

  app.get('/api/schedules/:id/runs', (c) => {
    const id = scheduleId(c);
    if (!id) return badId(c);
    const schedule = scheduler.get(id);
    if (!schedule) return refuse(c, { status: 404, error: 'not_found', message: `no schedule ${id}` });
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return c.json({
      schedule: view(scheduler, schedule),
      runs: scheduler.history(id).map((run) => ({ ...run, at: iso(run.at), slot_at: iso(run.slot_at) })),
      slots: scheduler.store.slots(id).map((slot) => ({
        ...slot,
        slot_at: iso(slot.slot_at),
        claimed_at: iso(slot.claimed_at),
        finished_at: iso(slot.finished_at),
      })),
    });
  });

  app.post('/api/schedules', async (c) => {
    const body = await readBody(c);
    if (!body.ok) return refuse(c, body.refusal);
    const parsed = parse(createBody, body.value);
    if (!parsed.ok) return refuse(c, parsed.refusal);
    const { confirm, text, cadence, ...rest } = parsed.data;
    const written = (cadence ?? text)!;
    try {
      const resolved = resolveCadence(written, rest.timezone);
      if (!confirm)
        return c.json({
          confirmed: false,
          cadence: resolved.text,
          description: resolved.description,
          next_fire: previewNextFire(resolved.cadence, rest.timezone),
          message: 'nothing created yet: send the same body with "confirm": true to create it',
        });
      const { confirm: _, text: __, ...input } = body.value as Record<string, unknown>;
      const created = scheduler.create({ ...input, cadence: written });
      return c.json(
        {
          confirmed: true,
          cadence: created.schedule.cadence,
          description: created.description,
          next_fire: created.next_fire,
          schedule: view(scheduler, created.schedule),
        },
        201,
      );
    } catch (error) {
      return refuse(c, refusalOf(error));
    }
  });

  app.patch('/api/schedules/:id', async (c) => {
    const id = scheduleId(c);
    if (!id) return badId(c);
    const body = await readBody(c);
    if (!body.ok) return refuse(c, body.refusal);
    const parsed = parse(patchBody, body.value);
    if (!parsed.ok) return refuse(c, parsed.refusal);
    const { approved: _, ...patch } = body.value as Record<string, unknown>;
    try {
      const schedule = scheduler.get(id);
      if (!schedule) throw new ScheduleNotFoundError(id);
      if (schedule.target.kind === 'builtin')
        return refuse(c, { status: 409, error: 'builtin', message: `schedule ${id} is built in` });
      if (scheduler.wouldNeedApproval(id, patch) && !parsed.data.approved)
        return refuse(c, {
          status: 409,
          error: 'approval_required',
          message:
            'changing the cadence or the target of a schedule needs approval, as a side-effecting call does: nothing was changed; send it again with "approved": true once the user has agreed',
        });
      const modified = scheduler.modify(id, patch);
      return c.json({ schedule: view(scheduler, modified.schedule), approvalNeeded: modified.needsApproval });
    } catch (error) {
      return refuse(c, refusalOf(error, true));
    }
  });

  const action = (name: string, act: (id: string) => unknown) =>
    app.post(`/api/schedules/:id/${name}`, async (c) => {
      const id = scheduleId(c);
      if (!id) return badId(c);
      try {
        return c.json((await act(id)) as object);
      } catch (error) {
        return refuse(c, refusalOf(error, true));
      }
    });

  action('pause', (id) => ({ schedule: view(scheduler, scheduler.pause(id)) }));
  action('resume', (id) => ({ schedule: view(scheduler, scheduler.resume(id)) }));
  action('cancel', (id) => {
    const schedule = scheduler.get(id);
    if (schedule?.target.kind === 'builtin')
      throw new ScheduleInputError([`schedule ${id} is built in: pause it instead`]);
    return { schedule: view(scheduler, scheduler.cancel(id)) };
  });
  action('run-now', async (id) => {
    const outcome = await scheduler.runNow(id);
    if (!outcome) throw new ScheduleInputError([`schedule ${id} is already firing at this instant`]);
    return {
      outcome: { ...outcome, at: outcome.at.toISOString() },
      schedule: view(scheduler, scheduler.get(id)!),
    };
  });
}
