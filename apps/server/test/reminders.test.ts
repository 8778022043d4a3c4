import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostServiceCall } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import { createRemindersService, Scheduler } from '../src/scheduler/index.ts';
import { createScheduledFire } from '../src/scheduler/wiring.ts';

// The reminders host service over a real scheduler store: one one-shot schedule per
// reminder, delivered once on its channel, and no way to make it run anything.

const T0 = Date.parse('2026-05-04T07:00:00Z');
const minute = 60_000;
const at = (offset: number) => new Date(T0 + offset);

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'metnos-reminders-'));
  const delivered: Array<{ channel: string; text: string }> = [];
  const ran: string[] = [];
  const fire = createScheduledFire({
    engine: {
      runTurn: async (request) => {
        ran.push(`turn ${request}`);
        throw new Error('a reminder never runs a turn');
      },
    },
    invoker: {
      invoke: async (name) => {
        ran.push(`executor ${name}`);
        throw new Error('a reminder never invokes an executor');
      },
    },
    workspace: dir,
    deliver: async (channel, text) => {
      delivered.push({ channel, text });
    },
  });
  const scheduler = new Scheduler({
    store: join(dir, 'scheduler.sqlite'),
    holder: 'test',
    fire,
    clock: () => at(0),
  });
  const reminders = createRemindersService({ scheduler, defaultChannel: 'telegram', clock: () => at(0) });
  const ask = (body: unknown) =>
    reminders({
      service: 'reminders',
      body,
      executor: { name: 'reminder_set', version: '1.0.0' },
      traceId: 'turn-1:1',
      turnId: 'turn-1',
      caller: { kind: 'planner', turnId: 'turn-1' },
      signal: new AbortController().signal,
    } satisfies HostServiceCall);
  return { scheduler, ask, delivered, ran };
}

describe('the reminders host service', () => {
  it('creates exactly one one-shot schedule that fires once, delivers the text and runs nothing', async () => {
    const { scheduler, ask, delivered, ran } = setup();
    const answer = await ask({ text: 'call the plumber', in_minutes: 30 });
    expect(answer).toEqual({
      ok: true,
      value: {
        schedule_id: expect.any(String),
        next_fire: at(30 * minute).toISOString(),
        channel: 'telegram',
      },
    });
    const schedules = scheduler.list({ all: true });
    expect(schedules).toHaveLength(1);
    expect(schedules[0]).toMatchObject({
      target: { kind: 'reminder', text: 'call the plumber' },
      count: 1,
      channel: 'telegram',
      timezone: 'UTC',
      state: 'active',
    });
    // audited with the executor that asked, in the scheduler's append-only history
    expect(scheduler.history(schedules[0]!.id)[0]).toMatchObject({
      event: 'created',
      detail: expect.stringContaining('"executor":"reminder_set"'),
    });

    await scheduler.tick(at(29 * minute));
    expect(delivered).toEqual([]);
    await scheduler.tick(at(30 * minute));
    await scheduler.tick(at(31 * minute));
    for (const later of [60 * minute, 24 * 60 * minute, 366 * 24 * 60 * minute + 30 * minute])
      await scheduler.tick(at(later));
    expect(delivered).toEqual([{ channel: 'telegram', text: 'Reminder: call the plumber' }]);
    expect(ran).toEqual([]);
    expect(scheduler.get(schedules[0]!.id)).toMatchObject({ state: 'completed', fired: 1 });
    await scheduler.stop();
  });

  it('takes an ISO instant, to the second', async () => {
    const { scheduler, ask } = setup();
    const answer = await ask({ text: 'stand up', at: '2026-05-04T09:15:30+02:00' });
    expect(answer).toMatchObject({ ok: true, value: { next_fire: '2026-05-04T07:15:30.000Z' } });
    await scheduler.stop();
  });

  it('cannot carry an executor or request target, nor a cadence, and refuses bad input as data', async () => {
    const { scheduler, ask } = setup();
    const refused = [
      { text: 'x', in_minutes: 5, target: { kind: 'executor', executor: 'fs_write', args: {} } },
      { text: 'x', in_minutes: 5, executor: 'fs_write' },
      { text: 'x', in_minutes: 5, request: 'delete my notes' },
      { text: 'x', in_minutes: 5, cadence: 'every_1_minutes' },
      { text: 'x', in_minutes: 5, count: 100 },
      { text: 'x' },
      { text: 'x', in_minutes: 5, at: '2026-05-04T09:00:00Z' },
      { text: 'x', at: '2026-05-04T06:00:00Z' },
      { text: 'x', at: '2026-05-04T09:00:00' },
      { text: 'x', in_minutes: 600_000 },
      { text: '', in_minutes: 5 },
      { text: 'x', in_minutes: 5, channel: 'telegram:12345' },
      JSON.parse('{"text":"x","in_minutes":5,"__proto__":{"polluted":true}}'),
      [],
      null,
    ];
    for (const body of refused)
      expect(await ask(body), JSON.stringify(body)).toMatchObject({
        ok: false,
        error: { class: 'InvalidInput' },
      });
    expect(scheduler.list({ all: true })).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await scheduler.stop();
  });
});
