import { join } from 'node:path';
import { createMnestome } from '@metnos/mnestome';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAger, mnestomeAgerTask } from '../src/scheduler/mnestome-task.ts';
import { BUILTIN_TASKS, startSchedulerService } from '../src/scheduler/wiring.ts';
import { type SchedulesFixture, setupSchedules } from './schedules-fixture.ts';

let fx: SchedulesFixture;
beforeAll(async () => {
  fx = await setupSchedules();
});
afterAll(async () => {
  await fx?.close();
});

const DAY = 86_400_000;

describe('the nightly mnestome_synt task', () => {
  it('runs the ager at 04:30: decay, proto purge, and below_threshold proposals in the summary', async () => {
    let recordedAt = new Date(Date.now() - 90 * DAY);
    const mnestome = createMnestome({
      path: join(fx.workspace, '..', 'mnestome.sqlite'),
      clock: () => recordedAt,
    });
    mnestome.recordPassing('fs_read', 'note_count', true);
    mnestome.recordPassing('fs_read', 'csv_sum', false, {
      name: 'csv_sum',
      args: ['text'],
      piped: [{ arg: 'text', from: 'fs_read', field: 'content' }],
      sourceOutput: [],
      purpose: ['sum'],
    });
    mnestome.recordUse('fs_read');
    recordedAt = new Date();
    const service = startSchedulerService({
      path: fx.storePath.replace('scheduler.sqlite', 'mnestome-task.sqlite'),
      engine: fx.engine,
      invoker: fx.invoker,
      workspace: fx.workspace,
      timezone: 'UTC',
      tickMs: 3_600_000,
      synt: mnestomeAgerTask({ mnestome, executors: () => ['fs_read', 'note_count'] }),
    });
    expect(service.builtins.synt).toMatchObject({ name: BUILTIN_TASKS.synt.name, cadence: 'daily@04:30' });
    const dueAt = Date.parse(service.scheduler.nextFire(service.builtins.synt)!);
    expect(new Date(dueAt).toISOString().slice(11, 16)).toBe('04:30');
    const { fired } = await service.scheduler.tick(new Date(dueAt + 1000));
    const run = fired.find((outcome) => outcome.scheduleId === service.builtins.synt.id);
    expect(run).toMatchObject({ ok: true });
    expect(run?.summary).toMatch(
      /^mnestome: 1 weight decayed, 1 mnest demoted, 1 proto-mnest purged; proposed below_threshold, archive on your confirmation: fs_read \(\d+ days unused\)$/,
    );
    expect(mnestome.protoMnests()).toEqual([]);
    expect(mnestome.mnests()).toEqual([expect.objectContaining({ dst: 'note_count', state: 'dormant' })]);
    await service.stop();
    mnestome.close();
  });

  it('describes a quiet night', () => {
    expect(describeAger({ decayed: 0, demoted: [], purged: [], belowThreshold: [] })).toBe(
      'mnestome: 0 weights decayed, 0 mnests demoted, 0 proto-mnests purged; no executor below threshold',
    );
  });
});
