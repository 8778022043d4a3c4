import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostService } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import { createRemindersService, createScheduledFire, Scheduler } from '@metnos/server';
import { afterAll, describe, expect, it } from 'vitest';

// reminder_set through the real sandbox, against the reminders host service over a real
// scheduler store (SQLite in a temp folder), as `metnos serve` and `metnos ask` wire it.

const executor = birth(join(import.meta.dirname, '..'));

const delivered: Array<{ channel: string; text: string }> = [];
const ran: string[] = [];
const scheduler = new Scheduler({
  store: join(mkdtempSync(join(tmpdir(), 'metnos-reminder-set-')), 'scheduler.sqlite'),
  holder: 'birth',
  fire: createScheduledFire({
    engine: {
      runTurn: async (request) => {
        ran.push(request);
        throw new Error('a reminder runs no turn');
      },
    },
    invoker: {
      invoke: async (name) => {
        ran.push(name);
        throw new Error('a reminder invokes no executor');
      },
    },
    workspace: tmpdir(),
    deliver: async (channel, text) => {
      delivered.push({ channel, text });
    },
  }),
});
const reminders = createRemindersService({
  scheduler,
  defaultChannel: 'telegram',
  allowChannel: (name) => /^telegram(:\d+)?$/.test(name),
});

afterAll(() => scheduler.stop());

describe('reminder_set birth', () => {
  it('creates exactly one one-shot reminder in the scheduler store, which fires once and runs nothing', async () => {
    const before = Date.now();
    const result = await executor.invoke(
      { text: 'call the plumber', in_minutes: 30 },
      { hostServices: { reminders } },
    );
    expect(result).toMatchObject({
      ok: true,
      content: { schedule_id: expect.any(String), channel: 'telegram', text: 'call the plumber' },
    });
    const content = (result.ok ? result.content : {}) as { schedule_id: string; next_fire: string };
    const due = Date.parse(content.next_fire);
    expect(due - before).toBeGreaterThanOrEqual(29 * 60_000);
    expect(due - before).toBeLessThanOrEqual(31 * 60_000);
    const schedule = scheduler.get(content.schedule_id);
    expect(schedule).toMatchObject({
      target: { kind: 'reminder', text: 'call the plumber' },
      count: 1,
      state: 'active',
    });
    expect(scheduler.history(content.schedule_id)[0]?.detail).toContain('"executor":"reminder_set"');

    await scheduler.tick(new Date(due - 1000));
    await scheduler.tick(new Date(due));
    await scheduler.tick(new Date(due + 60_000));
    await scheduler.tick(new Date(due + 2 * 24 * 60 * 60_000));
    expect(delivered.filter((item) => item.text.includes('plumber'))).toEqual([
      { channel: 'telegram', text: 'Reminder: call the plumber' },
    ]);
    expect(ran).toEqual([]);
    expect(scheduler.get(content.schedule_id)?.state).toBe('completed');
  });

  it('takes an instant and a channel the host allows', async () => {
    const at = new Date(Date.now() + 3 * 60 * 60_000);
    at.setUTCMilliseconds(0);
    const result = await executor.invoke(
      { text: 'stand up', at: at.toISOString().replace('.000Z', 'Z'), channel: 'telegram:42' },
      { hostServices: { reminders } },
    );
    expect(result).toMatchObject({
      ok: true,
      content: { next_fire: at.toISOString(), channel: 'telegram:42' },
    });
  });

  it('refuses bad times and channels, and fails typed without the service', async () => {
    const cases: Array<[unknown, string]> = [
      [{ text: 'x' }, 'BadTime'],
      [{ text: 'x', in_minutes: 5, at: '2030-01-01T00:00:00Z' }, 'BadTime'],
      [{ text: 'x', at: 'tomorrow at 9' }, 'BadTime'],
      [{ text: 'x', at: '2030-01-01T09:00:00' }, 'BadTime'],
      [{ text: 'x', at: '2001-01-01T09:00:00Z' }, 'Refused'],
      [{ text: 'x', in_minutes: 5, channel: 'mail' }, 'Refused'],
      [{ text: 'x', in_minutes: 5, executor: 'fs_write' }, 'InvalidInput'],
    ];
    const count = scheduler.list({ all: true }).length;
    for (const [args, errorClass] of cases)
      expect(
        await executor.invoke(args, { hostServices: { reminders } }),
        JSON.stringify(args),
      ).toMatchObject({
        ok: false,
        error: { class: errorClass },
      });
    expect(scheduler.list({ all: true })).toHaveLength(count);
    expect(await executor.invoke({ text: 'x', in_minutes: 5 })).toMatchObject({
      ok: false,
      error: { class: 'NotOffered' },
    });
    const down: HostService = () => {
      throw new Error('the store is locked');
    };
    expect(
      await executor.invoke({ text: 'x', in_minutes: 5 }, { hostServices: { reminders: down } }),
    ).toMatchObject({
      ok: false,
      error: { class: 'Unavailable', message: expect.not.stringContaining('locked') },
    });
  });
});
