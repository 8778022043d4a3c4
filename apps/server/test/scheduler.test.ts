import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CadenceError,
  type FireResult,
  parseNaturalCadence,
  type Schedule,
  ScheduleInputError,
  Scheduler,
  type Slot,
} from '../src/scheduler/index.ts';

const T0 = Date.parse('2026-05-04T07:00:00Z'); // a Monday
const minute = 60_000;
const at = (offset: number) => new Date(T0 + offset);

function scheduler(results: FireResult[] = [], notify?: (s: Schedule, slot: Slot, error: string) => void) {
  const fired: Slot[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'metnos-scheduler-'));
  const instance = new Scheduler({
    store: join(dir, 'scheduler.sqlite'),
    holder: 'test',
    fire: async (_schedule, slot) => {
      fired.push(slot);
      return results.shift() ?? { ok: true };
    },
    notify,
  });
  return { instance, fired };
}

const request = { kind: 'request', text: 'summarise my mail' } as const;

describe('exactly once per slot', () => {
  it('fires a slot once however many ticks fall in it, together or one after another', async () => {
    const { instance, fired } = scheduler();
    const { schedule } = instance.create({ target: request, cadence: 'every_15_minutes' }, at(0));
    await Promise.all([instance.tick(at(0)), instance.tick(at(0)), instance.tick(at(minute))]);
    await instance.tick(at(14 * minute));
    expect(fired.map((slot) => slot.at.getTime())).toEqual([T0]);
    await instance.tick(at(15 * minute));
    await instance.tick(at(16 * minute));
    expect(fired.map((slot) => slot.at.getTime())).toEqual([T0, T0 + 15 * minute]);
    expect(instance.store.slots(schedule.id).map((slot) => slot.status)).toEqual(['ok', 'ok']);
  });

  it('fires only the most recent slot missed while down, once', async () => {
    const { instance, fired } = scheduler();
    instance.create({ target: request, cadence: 'every_10_minutes' }, at(0));
    await instance.tick(at(0));
    await instance.tick(at(55 * minute));
    await instance.tick(at(56 * minute));
    expect(fired.map((slot) => (slot.at.getTime() - T0) / minute)).toEqual([0, 50]);
  });

  it('keeps the runs table append-only', () => {
    const { instance } = scheduler();
    const { schedule } = instance.create({ target: request, cadence: 'manual' }, at(0));
    expect(() => instance.store.db.prepare("UPDATE scheduler_runs SET event = 'x'").run()).toThrow(
      /append-only/,
    );
    expect(() => instance.store.db.prepare('DELETE FROM scheduler_runs').run()).toThrow(/append-only/);
    expect(instance.history(schedule.id).map((event) => event.event)).toEqual(['created']);
  });
});

describe('lifecycle', () => {
  it('completes after count firings', async () => {
    const { instance, fired } = scheduler();
    const { schedule } = instance.create({ target: request, cadence: 'every_1_minutes', count: 2 }, at(0));
    for (let m = 0; m < 5; m++) await instance.tick(at(m * minute));
    expect(fired).toHaveLength(2);
    expect(instance.get(schedule.id)).toMatchObject({ state: 'completed', closed_reason: 'count 2 reached' });
    expect(instance.nextFire(instance.get(schedule.id)!)).toBeNull();
  });

  it('completes at its expiry without firing past it', async () => {
    const { instance, fired } = scheduler();
    const { schedule } = instance.create(
      { target: request, cadence: 'every_1_minutes', expiry: new Date(T0 + 90_000).toISOString() },
      at(0),
    );
    for (let m = 0; m < 4; m++) await instance.tick(at(m * minute));
    expect(fired).toHaveLength(2);
    expect(instance.get(schedule.id)).toMatchObject({ state: 'completed', closed_reason: 'expiry reached' });
  });

  it('pauses, resumes without firing what was missed, cancels; manual fires only by hand', async () => {
    const { instance, fired } = scheduler();
    const { schedule } = instance.create({ target: request, cadence: 'every_5_minutes' }, at(0));
    const manual = instance.create({ target: request, cadence: 'manual' }, at(0)).schedule;
    await instance.tick(at(0));
    instance.pause(schedule.id, at(1 * minute));
    await instance.tick(at(5 * minute));
    instance.resume(schedule.id, at(12 * minute));
    await instance.tick(at(12 * minute));
    expect(fired.map((slot) => (slot.at.getTime() - T0) / minute)).toEqual([0, 12]);
    await instance.runNow(manual.id, at(13 * minute));
    expect(fired).toHaveLength(3);
    instance.cancel(schedule.id, undefined, at(14 * minute));
    await instance.tick(at(30 * minute));
    expect(fired).toHaveLength(3);
    expect(instance.list().map((s) => s.id)).toEqual([manual.id]);
  });

  it('says whether a change touches cadence or target', () => {
    const { instance } = scheduler();
    const { schedule } = instance.create({ target: request, cadence: 'every day at 8' }, at(0));
    expect(instance.modify(schedule.id, { channel: 'telegram', count: 3 }, at(1)).needsApproval).toBe(false);
    expect(instance.wouldNeedApproval(schedule.id, { cadence: '0 8 * * *' })).toBe(false);
    expect(instance.modify(schedule.id, { cadence: 'every day at 9' }, at(2))).toMatchObject({
      needsApproval: true,
      schedule: { cadence: '0 9 * * *' },
    });
    expect(
      instance.modify(schedule.id, { target: { kind: 'request', text: 'other' } }, at(3)).needsApproval,
    ).toBe(true);
  });

  it('registers a built-in task once and fires it at its time', async () => {
    const { instance, fired } = scheduler();
    const runs: Slot[] = [];
    const task = {
      name: 'memory_aging',
      cadence: 'daily@04:00',
      run: async (slot: Slot) => {
        runs.push(slot);
        return { ok: true };
      },
    };
    instance.registerBuiltin(task, at(0));
    instance.registerBuiltin(task, at(0));
    expect(instance.list()).toHaveLength(1);
    await instance.tick(new Date('2026-05-05T04:00:30Z'));
    expect(runs.map((slot) => slot.at.toISOString())).toEqual(['2026-05-05T04:00:00.000Z']);
    expect(fired).toEqual([]);
  });
});

describe('failures', () => {
  const failing = (n: number): FireResult[] =>
    Array.from({ length: n }, () => ({ ok: false, error: 'boom' }));

  it.each([
    ['skip', 1, 'active'],
    ['retry', 2, 'active'],
    ['notify', 2, 'active'],
    ['cancel', 1, 'cancelled'],
  ] as const)('on_failure %s: %i attempts, schedule %s', async (policy, attempts, state) => {
    const notified: string[] = [];
    const { instance, fired } = scheduler(failing(5), (_s, _slot, error) => notified.push(error));
    instance.create({ target: request, cadence: 'every_1_minutes', on_failure: policy }, at(0));
    const { fired: outcomes } = await instance.tick(at(0));
    expect(fired).toHaveLength(attempts);
    expect(outcomes[0]).toMatchObject({ ok: false, attempts, state });
    expect(notified).toEqual(policy === 'notify' ? ['boom'] : []);
  });

  it('a retry that succeeds counts as a success', async () => {
    const { instance } = scheduler([
      { ok: false, error: 'flaky' },
      { ok: true, summary: 'done' },
    ]);
    const { schedule } = instance.create(
      { target: request, cadence: 'every_1_minutes', on_failure: 'retry' },
      at(0),
    );
    expect((await instance.tick(at(0))).fired[0]).toMatchObject({ ok: true, attempts: 2, summary: 'done' });
    expect(instance.get(schedule.id)?.consecutive_failures).toBe(0);
  });

  it('cancels after max_consecutive_failures in a row; a success resets the count; a throw is a failure', async () => {
    const { instance } = scheduler([
      { ok: false },
      { ok: true },
      { ok: false },
      { ok: false },
      { ok: false },
    ]);
    const { schedule } = instance.create(
      { target: request, cadence: 'every_1_minutes', on_failure: 'skip', max_consecutive_failures: 3 },
      at(0),
    );
    for (let m = 0; m < 4; m++) await instance.tick(at(m * minute));
    expect(instance.get(schedule.id)).toMatchObject({ state: 'active', consecutive_failures: 2 });
    await instance.tick(at(4 * minute));
    expect(instance.get(schedule.id)).toMatchObject({
      state: 'cancelled',
      closed_reason: '3 consecutive failures',
    });
    await instance.tick(at(5 * minute));
    expect(instance.get(schedule.id)?.fired).toBe(5);

    const thrower = new Scheduler({
      store: instance.store,
      holder: 'test',
      fire: async () => {
        throw new Error('exploded');
      },
    });
    const other = thrower.create({ target: request, cadence: 'every_1_minutes', on_failure: 'skip' }, at(0));
    expect((await thrower.tick(at(6 * minute))).fired[0]).toMatchObject({ ok: false, error: 'exploded' });
    expect(thrower.get(other.schedule.id)?.consecutive_failures).toBe(1);
  });
});

describe('natural language', () => {
  it.each([
    ['every morning at 8', '0 8 * * *', 'every day at 08:00 (Europe/Rome)'],
    ['every day at 18:30', '30 18 * * *', 'every day at 18:30 (Europe/Rome)'],
    ['Every evening at 7', '0 19 * * *', 'every day at 19:00 (Europe/Rome)'],
    ['daily at 6pm', '0 18 * * *', 'every day at 18:00 (Europe/Rome)'],
    ['every 15 minutes', 'every_15_minutes', 'every 15 minutes'],
    ['every minute', 'every_1_minutes', 'every minute'],
    ['every hour', '0 * * * *', 'every hour, on the hour'],
    ['every 2 hours', '0 */2 * * *', 'every 2 hours, on the hour (Europe/Rome)'],
    ['every monday at 9', '0 9 * * 1', 'every Monday at 09:00 (Europe/Rome)'],
    ['every weekday at 7:15am', '15 7 * * 1-5', 'every weekday at 07:15 (Europe/Rome)'],
    ['every day at noon', '0 12 * * *', 'every day at 12:00 (Europe/Rome)'],
    ['ogni mattina alle 8', '0 8 * * *', 'every day at 08:00 (Europe/Rome)'],
    ['ogni giorno alle 18:30', '30 18 * * *', 'every day at 18:30 (Europe/Rome)'],
    ['tutti i giorni alle 7.45', '45 7 * * *', 'every day at 07:45 (Europe/Rome)'],
    ['ogni sera alle 9', '0 21 * * *', 'every day at 21:00 (Europe/Rome)'],
    ['ogni 15 minuti', 'every_15_minutes', 'every 15 minutes'],
    ['ogni lunedì alle 9', '0 9 * * 1', 'every Monday at 09:00 (Europe/Rome)'],
    ['ogni venerdi a mezzogiorno', '0 12 * * 5', 'every Friday at 12:00 (Europe/Rome)'],
  ])('%s → %s', (text, cadence, description) => {
    expect(parseNaturalCadence(text, 'Europe/Rome')).toEqual({ cadence, description });
  });

  it.each([
    ['now and then', 'now and then'],
    ['every fortnight at 8', 'fortnight at 8'],
    ['every day at 25', '25'],
    ['every morning at 15', '15'],
    ['every day at 8 please', 'please'],
    ['every day', ''],
  ])('%s is refused, naming "%s"', (text, unparsed) => {
    const error = (() => {
      try {
        parseNaturalCadence(text);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(CadenceError);
    expect((error as CadenceError).unparsed).toBe(unparsed);
  });

  it('translates at creation and fires in the schedule time zone', async () => {
    const { instance, fired } = scheduler();
    const created = instance.create(
      { target: request, cadence: 'every morning at 8', timezone: 'Europe/Rome' },
      new Date('2026-05-04T05:00:00Z'),
    );
    expect(created.schedule.cadence).toBe('0 8 * * *');
    expect(created.description).toBe('every day at 08:00 (Europe/Rome)');
    expect(created.next_fire).toBe('2026-05-04T06:00:00.000Z');
    await instance.tick(new Date('2026-05-04T06:00:10Z'));
    expect(fired.map((slot) => slot.at.toISOString())).toEqual(['2026-05-04T06:00:00.000Z']);
  });
});

describe('hostile input', () => {
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) deep = { nested: deep };
  it.each([
    [
      'deep nesting',
      { target: { kind: 'executor', executor: 'fs_read', args: deep }, cadence: 'manual' },
      /deeper/,
    ],
    [
      '__proto__',
      JSON.parse(
        '{"target": {"kind": "executor", "executor": "fs_read", "args": {"__proto__": {"x": 1}}}, "cadence": "manual"}',
      ),
      /forbidden key/,
    ],
    [
      'a huge string',
      { target: { kind: 'request', text: 'x'.repeat(100_000) }, cadence: 'manual' },
      /longer/,
    ],
    ['an unknown field', { target: request, cadence: 'manual', admin: true }, /admin/],
    [
      'a bad executor name',
      { target: { kind: 'executor', executor: '../rm', args: {} }, cadence: 'manual' },
      /executor/,
    ],
    ['a built-in target', { target: { kind: 'builtin', task: 'memory_aging' }, cadence: 'manual' }, /kind/],
    ['a bad time zone', { target: request, cadence: 'manual', timezone: 'Mars/Olympus' }, /time zone/],
    ['a negative count', { target: request, cadence: 'manual', count: -1 }, /count/],
    ['not an object', 'drop table', /input/],
  ])('refuses %s', (_name, input, message) => {
    const { instance } = scheduler();
    expect(() => instance.create(input)).toThrow(ScheduleInputError);
    expect(() => instance.create(input)).toThrow(message);
    expect(instance.list({ all: true })).toEqual([]);
  });

  it('refuses a cadence it cannot read with a CadenceError', () => {
    const { instance } = scheduler();
    expect(() => instance.create({ target: request, cadence: '61 * * * *' })).toThrow(CadenceError);
    expect(() => instance.create({ target: request, cadence: 'whenever you like' })).toThrow(
      /whenever you like/,
    );
  });
});
