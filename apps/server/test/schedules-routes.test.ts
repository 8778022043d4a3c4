import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { Scheduler } from '../src/scheduler/index.ts';
import { createScheduledFire } from '../src/scheduler/wiring.ts';
import { type SchedulesFixture, setupSchedules } from './schedules-fixture.ts';

const TOKEN = 's'.repeat(43);
let fx: SchedulesFixture;
let scheduler: Scheduler;
let api: ReturnType<typeof createApp>;

beforeAll(async () => {
  fx = await setupSchedules();
  mkdirSync(dirname(fx.storePath), { recursive: true });
  const fire = createScheduledFire({ engine: fx.engine, invoker: fx.invoker, workspace: fx.workspace });
  scheduler = new Scheduler({ store: fx.storePath, holder: 'routes', fire, notify: fire.notify });
  api = createApp({ token: TOKEN, engine: fx.engine, scheduler });
});

afterAll(async () => {
  await scheduler?.stop();
  await fx?.close();
});

async function call(method: string, path: string, body?: unknown, token = TOKEN) {
  const response = await api.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    }),
  );
  // biome-ignore lint/suspicious/noExplicitAny: response bodies, read field by field
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const noteCount = { kind: 'executor', executor: 'note_count', args: {} } as const;

async function created(body: Record<string, unknown>): Promise<string> {
  const response = await call('POST', '/api/schedules', { ...body, confirm: true });
  expect(response.status).toBe(201);
  return response.body.schedule.id as string;
}

describe('the schedule routes', () => {
  it('are behind the bearer token', async () => {
    for (const [method, path] of [
      ['GET', '/api/schedules'],
      ['POST', '/api/schedules'],
      ['PATCH', '/api/schedules/sch_x'],
      ['POST', '/api/schedules/sch_x/run-now'],
      ['GET', '/api/schedules/sch_x/runs'],
    ] as const) {
      const response = await call(method, path, method === 'GET' ? undefined : {}, 'x'.repeat(43));
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ error: 'unauthorized' });
    }
  });

  it('create nothing without confirmation: they return the parsed cron and its description', async () => {
    const preview = await call('POST', '/api/schedules', {
      target: { kind: 'request', text: 'summarise my unread mail' },
      text: 'every monday at 9',
      timezone: 'Europe/Rome',
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ confirmed: false, cadence: '0 9 * * 1' });
    expect(preview.body.description).toContain('09:00');
    expect(
      new Date(preview.body.next_fire).toLocaleString('en-GB', { timeZone: 'Europe/Rome', weekday: 'long' }),
    ).toContain('Monday');
    expect((await call('GET', '/api/schedules')).body.schedules).toEqual([]);

    const confirmed = await call('POST', '/api/schedules', {
      target: { kind: 'request', text: 'summarise my unread mail' },
      text: 'every monday at 9',
      timezone: 'Europe/Rome',
      confirm: true,
    });
    expect(confirmed.status).toBe(201);
    expect(confirmed.body).toMatchObject({ confirmed: true, cadence: '0 9 * * 1' });
    const listed = (await call('GET', '/api/schedules')).body.schedules;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: confirmed.body.schedule.id,
      state: 'active',
      cadence: '0 9 * * 1',
      next_fire: confirmed.body.next_fire,
    });
    expect(Date.parse(listed[0].next_fire)).toBeGreaterThan(Date.now());
    await call('POST', `/api/schedules/${confirmed.body.schedule.id}/cancel`);
  });

  it('refuse hostile or wrong input with { error, message }', async () => {
    const refusals: Array<[Record<string, unknown>, string]> = [
      // the cadence twice, or not at all
      [{ target: noteCount, cadence: 'manual', text: 'every day at 8' }, 'one of them'],
      [{ target: noteCount }, 'one of them'],
      // words the grammar does not know
      [{ target: noteCount, text: 'whenever the moon is full' }, 'cannot read the cadence'],
      // unknown fields, a forbidden key, deep nesting, a huge string, a wrong executor name
      [{ target: noteCount, cadence: 'manual', shell: 'rm -rf ~' }, 'shell'],
      [
        JSON.parse(
          '{"target":{"kind":"executor","executor":"note_count","args":{"__proto__":{"x":1}}},"cadence":"manual"}',
        ),
        'forbidden key',
      ],
      [
        {
          target: { ...noteCount, args: { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } } },
          cadence: 'manual',
        },
        'nested deeper',
      ],
      [{ target: { kind: 'request', text: 'x'.repeat(5000) }, cadence: 'manual' }, 'longer than'],
      [{ target: { kind: 'executor', executor: '../../bin/sh', args: {} }, cadence: 'manual' }, 'executor'],
      [{ target: { kind: 'builtin', task: 'memory_aging' }, cadence: 'manual' }, 'target'],
      [{ target: noteCount, cadence: 'manual', timezone: 'Mars/Olympus' }, 'time zone'],
      [{ target: noteCount, cadence: 'manual', confirm: 'yes' }, 'confirm'],
    ];
    for (const [body, why] of refusals) {
      const response = await call('POST', '/api/schedules', { confirm: true, ...body });
      expect(response.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(Object.keys(response.body)).toEqual(expect.arrayContaining(['error', 'message']));
      expect(response.body.message).toContain(why);
    }
    expect((await call('POST', '/api/schedules', '{not json')).body).toMatchObject({ error: 'invalid' });
    expect((await call('POST', '/api/schedules', '[1,2]')).status).toBe(400);
    expect((await call('POST', '/api/schedules', 'x'.repeat(70_000))).status).toBe(413);
    expect((await call('GET', '/api/schedules/..%2F..%2Fetc/runs')).status).toBe(400);
    expect((await call('GET', '/api/schedules/sch_nothere/runs')).status).toBe(404);
    expect((await call('POST', '/api/schedules/sch_nothere/pause')).body).toMatchObject({
      error: 'not_found',
    });
    expect((await call('GET', '/api/schedules?all=maybe')).status).toBe(400);
    expect((await call('GET', '/api/schedules')).body.schedules).toEqual([]);
  });

  it('modify a cadence or a target only once approved; other fields freely', async () => {
    const id = await created({ target: noteCount, cadence: 'every day at 18:30' });
    for (const patch of [
      { cadence: 'every 15 minutes' },
      { timezone: 'Asia/Tokyo' },
      { target: { kind: 'executor', executor: 'always_fails', args: {} } },
      { target: { kind: 'request', text: 'delete everything' }, approved: false },
    ]) {
      const refused = await call('PATCH', `/api/schedules/${id}`, patch);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe('approval_required');
      expect(refused.body.message).toContain('needs approval');
    }
    expect((await call('GET', `/api/schedules/${id}/runs`)).body.schedule).toMatchObject({
      cadence: '30 18 * * *',
      timezone: 'UTC',
      target: noteCount,
    });
    // the same cadence written another way is no change
    const same = await call('PATCH', `/api/schedules/${id}`, { cadence: '30 18 * * *', channel: 'telegram' });
    expect(same.status).toBe(200);
    expect(same.body.schedule).toMatchObject({ channel: 'telegram', cadence: '30 18 * * *' });
    const approved = await call('PATCH', `/api/schedules/${id}`, {
      cadence: 'every 15 minutes',
      approved: true,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ approvalNeeded: true, schedule: { cadence: 'every_15_minutes' } });
    expect((await call('PATCH', `/api/schedules/${id}`, { state: 'cancelled' })).status).toBe(400);
    const builtin = scheduler.registerBuiltin({
      name: 'routes_builtin',
      cadence: 'daily@04:00',
      run: async () => ({ ok: true }),
    });
    expect((await call('PATCH', `/api/schedules/${builtin.id}`, { channel: 'telegram' })).body).toMatchObject(
      {
        error: 'builtin',
      },
    );
    expect((await call('POST', `/api/schedules/${builtin.id}/cancel`)).status).toBe(409);
    await call('POST', `/api/schedules/${id}/cancel`);
  });

  it('pause, resume, run now, cancel, and show the history', async () => {
    const id = await created({ target: noteCount, cadence: 'manual' });
    const paused = await call('POST', `/api/schedules/${id}/pause`);
    expect(paused.body.schedule.state).toBe('paused');
    expect((await call('POST', `/api/schedules/${id}/pause`)).status).toBe(409);
    expect((await call('POST', `/api/schedules/${id}/run-now`)).body).toMatchObject({ error: 'conflict' });
    expect((await call('POST', `/api/schedules/${id}/resume`)).body.schedule.state).toBe('active');

    const ran = await call('POST', `/api/schedules/${id}/run-now`);
    expect(ran.status).toBe(200);
    expect(ran.body.outcome).toMatchObject({ ok: true, summary: 'note_count: 3 notes', attempts: 1 });
    const audit = (await fx.auditLines()).filter((line) => line.caller.kind === 'scheduler');
    expect(audit.at(-1)).toMatchObject({
      executor: 'note_count',
      caller: { kind: 'scheduler', scheduleId: id },
    });

    const cancelled = await call('POST', `/api/schedules/${id}/cancel`);
    expect(cancelled.body.schedule).toMatchObject({ state: 'cancelled', next_fire: null });
    expect((await call('POST', `/api/schedules/${id}/run-now`)).status).toBe(409);
    expect((await call('POST', `/api/schedules/${id}/resume`)).status).toBe(409);
    expect(
      (await call('GET', '/api/schedules')).body.schedules.map((s: { id: string }) => s.id),
    ).not.toContain(id);
    expect(
      (await call('GET', '/api/schedules?all=true')).body.schedules.map((s: { id: string }) => s.id),
    ).toContain(id);

    const history = await call('GET', `/api/schedules/${id}/runs`);
    expect(history.body.runs.map((run: { event: string }) => run.event)).toEqual([
      'created',
      'paused',
      'resumed',
      'claimed',
      'running',
      'ok',
      'cancelled',
    ]);
    expect(history.body.slots).toEqual([
      expect.objectContaining({ status: 'ok', summary: 'note_count: 3 notes' }),
    ]);
    expect(history.body.runs[0].at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});
