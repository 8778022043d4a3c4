import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../src/scheduler/index.ts';
import {
  BUILTIN_TASKS,
  createScheduledFire,
  type Deliver,
  startSchedulerService,
  telegramDelivery,
} from '../src/scheduler/wiring.ts';
import { createTelegramChannel, createTelegramClient } from '../src/telegram/index.ts';
import { DIARY_REQUEST, type SchedulesFixture, setupSchedules } from './schedules-fixture.ts';
import { type FakeTelegram, startFakeTelegram } from './telegram-server.ts';

const TOKEN = '123456:schedules-test-token';
const CHAT = 4242;
const T0 = Date.parse('2026-05-04T07:00:00Z');
const minute = 60_000;
const at = (offset: number) => new Date(T0 + offset);

let fx: SchedulesFixture;
let fake: FakeTelegram;
let deliver: Deliver;

beforeAll(async () => {
  fx = await setupSchedules();
  fake = await startFakeTelegram(TOKEN);
  const channel = createTelegramChannel({
    client: createTelegramClient({ token: TOKEN, baseUrl: fake.baseUrl, requestTimeoutMs: 2000 }),
    allowedChatIds: [CHAT],
    handleTurn: async () => ({ text: 'unused' }),
    resolveApproval: async () => undefined,
    logger: { info: () => {}, warn: () => {} },
  });
  deliver = telegramDelivery(channel, CHAT);
});

afterAll(async () => {
  await fake?.close();
  await fx?.close();
});

function scheduler(name: string, settings: { deliver?: Deliver } = { deliver }) {
  const path = fx.storePath.replace('scheduler.sqlite', `${name}.sqlite`);
  mkdirSync(dirname(path), { recursive: true });
  const fire = createScheduledFire({
    engine: fx.engine,
    invoker: fx.invoker,
    workspace: fx.workspace,
    ...settings,
  });
  return new Scheduler({ store: path, holder: name, fire, notify: fire.notify });
}

describe('a scheduled executor', () => {
  it('runs once per slot through the invoker, its audit line naming the scheduler and the schedule', async () => {
    const instance = scheduler('executor');
    const { schedule } = instance.create(
      {
        target: { kind: 'executor', executor: 'note_count', args: { folder: 'secret-folder-name' } },
        cadence: 'every_15_minutes',
      },
      at(0),
    );
    const ticks = await Promise.all([instance.tick(at(0)), instance.tick(at(0)), instance.tick(at(minute))]);
    await instance.tick(at(14 * minute));
    await instance.tick(at(15 * minute));
    const lines = (await fx.auditLines()).filter((line) => line.executor === 'note_count');
    expect(lines).toHaveLength(2);
    expect(lines.map((line) => line.caller)).toEqual([
      { kind: 'scheduler', scheduleId: schedule.id },
      { kind: 'scheduler', scheduleId: schedule.id },
    ]);
    expect(lines.map((line) => line.trace_id)).toEqual([
      `sched:${schedule.id}:${at(0).toISOString()}`,
      `sched:${schedule.id}:${at(15 * minute).toISOString()}`,
    ]);
    expect(lines.every((line) => line.exit === 'ok')).toBe(true);
    // the summary the scheduler keeps names the executor and its result, not the arguments
    const fired = ticks.flatMap((tick) => tick.fired);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ ok: true, summary: 'note_count: 3 notes' });
    const slots = instance.store.slots(schedule.id);
    expect(slots.map((slot) => slot.status)).toEqual(['ok', 'ok']);
    expect(JSON.stringify(slots)).not.toContain('secret-folder-name');
    await instance.stop();
  });

  it('tells the schedule’s channel of a failure under on_failure notify, after its retry', async () => {
    const before = fake.sent.length;
    const instance = scheduler('failing');
    const { schedule } = instance.create(
      {
        target: { kind: 'executor', executor: 'always_fails', args: {} },
        cadence: 'manual',
        channel: 'telegram',
        on_failure: 'notify',
      },
      at(0),
    );
    const outcome = await instance.runNow(schedule.id);
    expect(outcome).toMatchObject({ ok: false, attempts: 2 });
    const lines = (await fx.auditLines()).filter((line) => line.executor === 'always_fails');
    expect(lines).toHaveLength(2);
    expect(lines.every((line) => line.caller.kind === 'scheduler')).toBe(true);
    const sent = fake.sent.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ chat_id: CHAT });
    expect(sent[0]!.text).toContain(`Schedule ${schedule.id} (always_fails) failed`);
    expect(sent[0]!.text).toContain('the mailbox is locked');
    await instance.stop();
  });
});

describe('a scheduled request', () => {
  it('runs a turn and delivers its answer through the Telegram channel', async () => {
    const before = fake.sent.length;
    const instance = scheduler('request');
    const { schedule } = instance.create(
      {
        target: { kind: 'request', text: DIARY_REQUEST },
        cadence: 'every morning at 8',
        channel: 'telegram',
      },
      at(0),
    );
    const { fired } = await instance.tick(new Date(Date.parse('2026-05-04T08:00:30Z')));
    expect(fired).toEqual([
      expect.objectContaining({ scheduleId: schedule.id, ok: true, summary: 'dear diary\n' }),
    ]);
    expect(fake.sent.slice(before)).toEqual([{ chat_id: CHAT, text: 'dear diary\n' }]);
    // the turn's own call went through the planner, under the schedule's turn id
    const read = (await fx.auditLines()).filter((line) => line.executor === 'fs_read');
    expect(read.at(-1)?.turn_id).toBe(`sched:${schedule.id}:2026-05-04T08:00:00.000Z:1`);
    await instance.stop();
  });

  it('keeps a result it could not deliver, and does not fire again for it', async () => {
    let calls = 0;
    const instance = scheduler('undelivered', {
      deliver: async () => {
        calls++;
        throw new Error('the chat is gone');
      },
    });
    const { schedule } = instance.create(
      {
        target: { kind: 'executor', executor: 'note_count', args: {} },
        cadence: 'manual',
        channel: 'telegram',
      },
      at(0),
    );
    const outcome = await instance.runNow(schedule.id);
    expect(outcome).toMatchObject({ ok: true, attempts: 1 });
    expect(outcome?.summary).toContain('not delivered to telegram: the chat is gone');
    expect(calls).toBe(1);
    await instance.stop();
  });
});

describe('the scheduler service', () => {
  it('registers memory aging and the synt hook once across restarts, ages memory at 04:00 and stops cleanly', async () => {
    let maintained = 0;
    const engine = {
      runTurn: fx.engine.runTurn,
      maintain: async () => {
        maintained++;
        return fx.engine.maintain();
      },
    };
    const settings = {
      path: fx.storePath,
      engine,
      invoker: fx.invoker,
      workspace: fx.workspace,
      timezone: 'Europe/Rome',
      tickMs: 3_600_000,
    };
    const first = startSchedulerService(settings);
    const names = () => first.scheduler.list().map((schedule) => schedule.name);
    expect(names().sort()).toEqual([BUILTIN_TASKS.memoryAging.name, BUILTIN_TASKS.synt.name]);
    expect(first.builtins.memoryAging).toMatchObject({ cadence: 'daily@04:00', timezone: 'Europe/Rome' });
    const id = first.builtins.memoryAging.id;
    const created = Date.parse(first.builtins.memoryAging.anchor);
    // the next 04:00 in Rome after creation
    const dueAt = Date.parse(first.scheduler.nextFire(first.builtins.memoryAging)!);
    expect(new Date(dueAt).toLocaleTimeString('en-GB', { timeZone: 'Europe/Rome' })).toBe('04:00:00');
    expect(dueAt).toBeGreaterThan(created);
    const { fired } = await first.scheduler.tick(new Date(dueAt + 1000));
    expect(fired.find((outcome) => outcome.scheduleId === id)).toMatchObject({ ok: true });
    expect(fired.find((outcome) => outcome.scheduleId === first.builtins.synt.id)).toBeUndefined();
    expect(maintained).toBe(1);
    await first.stop();
    await first.stop();
    expect(first.scheduler.store.db.open).toBe(false);

    const second = startSchedulerService(settings);
    const third = startSchedulerService({ ...settings, holder: 'another' });
    for (const service of [second, third]) {
      const schedules = service.scheduler.list();
      expect(schedules.filter((schedule) => schedule.name === 'memory_aging')).toHaveLength(1);
      expect(schedules.filter((schedule) => schedule.name === 'mnestome_synt')).toHaveLength(1);
      expect(service.builtins.memoryAging.id).toBe(id);
    }
    expect(second.scheduler.history(id).filter((run) => run.event === 'created')).toHaveLength(1);
    // the synt hook fires and does nothing yet
    const syntAt = Date.parse(second.scheduler.nextFire(second.builtins.synt, new Date(dueAt))!);
    const synt = await second.scheduler.tick(new Date(syntAt + 1000));
    expect(synt.fired).toEqual([
      expect.objectContaining({
        scheduleId: second.builtins.synt.id,
        ok: true,
        summary: 'nothing to do yet',
      }),
    ]);
    expect(maintained).toBe(1);
    await Promise.all([second.stop(), third.stop()]);
  });
});
