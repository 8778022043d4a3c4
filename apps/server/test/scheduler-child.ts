// A process on a scheduler store, for the kill -9 and two-process tests.
// node --conditions=metnos-source test/scheduler-child.ts <hang|loop> <store> <log> <holder> [ms]
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Scheduler } from '../src/scheduler/index.ts';

const [mode, store, log, holder, duration] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
];

if (mode === 'hang') {
  const scheduler = new Scheduler({
    store,
    holder,
    leaseMs: 1000,
    fire: async (_schedule, slot) => {
      appendFileSync(log, `${holder} ${slot.at.toISOString()}\n`);
      return new Promise(() => {});
    },
  });
  void scheduler.tick();
} else {
  const scheduler = new Scheduler({
    store,
    holder,
    leaseMs: 800,
    fire: async (_schedule, slot) => {
      appendFileSync(log, `${holder} ${slot.at.toISOString()}\n`);
      await sleep(30);
      return { ok: true };
    },
  });
  const end = Date.now() + Number(duration ?? 3000);
  while (Date.now() < end) {
    void scheduler.tick();
    await sleep(50);
  }
  await scheduler.stop();
}
