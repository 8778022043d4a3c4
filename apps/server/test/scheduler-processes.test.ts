import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../src/scheduler/index.ts';

const child = join(import.meta.dirname, 'scheduler-child.ts');

function start(...args: string[]): ChildProcess {
  return spawn(process.execPath, ['--conditions=metnos-source', child, ...args], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function exited(process: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (process.exitCode !== null || process.signalCode !== null) resolve(process.exitCode);
    else process.once('exit', (code) => resolve(code));
  });
}

async function waitFor(file: string, timeout = 20_000): Promise<string> {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (existsSync(file) && readFileSync(file, 'utf8').length > 0) return readFileSync(file, 'utf8');
    await sleep(25);
  }
  throw new Error(`${file} stayed empty`);
}

describe('the scheduler across processes', () => {
  it('marks a slot whose process was killed with -9 mid-firing interrupted and never fires it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metnos-scheduler-'));
    const store = join(dir, '.runtime', 'scheduler.sqlite');
    const log = join(dir, 'fired.log');
    const setup = new Scheduler({ store, fire: async () => ({ ok: true }) });
    const created = Date.now() - 10_000;
    const { schedule } = setup.create(
      { target: { kind: 'request', text: 'check the mail' }, cadence: 'every_1_minutes' },
      new Date(created),
    );
    setup.store.close();

    const doomed = start('hang', store, log, 'doomed');
    expect((await waitFor(log)).trim()).toBe(`doomed ${new Date(created).toISOString()}`);
    doomed.kill('SIGKILL');
    await exited(doomed);

    const fired: string[] = [];
    const heir = new Scheduler({
      store,
      holder: 'heir',
      leaseMs: 1000,
      fire: async (_schedule, slot) => {
        fired.push(slot.at.toISOString());
        return { ok: true };
      },
    });
    const now = Date.now();
    // the dead process's lease has not expired yet: nobody else ticks
    expect((await heir.tick(new Date(now))).leader).toBe(false);
    expect(heir.store.slot(schedule.id, created)?.status).toBe('running');
    // once it has, the heir takes over, marks the slot and does not fire it
    expect((await heir.tick(new Date(now + 2000))).leader).toBe(true);
    expect(heir.store.slot(schedule.id, created)?.status).toBe('interrupted');
    expect(fired).toEqual([]);
    expect(heir.history(schedule.id).map((event) => event.event)).toContain('interrupted');
    expect((await heir.tick(new Date(now + 3000))).fired).toEqual([]);
    // the next slot fires as usual
    await heir.tick(new Date(created + 60_000));
    expect(fired).toEqual([new Date(created + 60_000).toISOString()]);
    expect(heir.get(schedule.id)?.fired).toBe(2);
    await heir.stop();
  });

  it('lets only the lease holder fire when two processes tick one store, each slot once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metnos-scheduler-'));
    const store = join(dir, 'scheduler.sqlite');
    const log = join(dir, 'fired.log');
    const setup = new Scheduler({ store, fire: async () => ({ ok: true }) });
    setup.create({ target: { kind: 'request', text: 'ping' }, cadence: '* * * * * *' });
    setup.store.close();

    const first = start('loop', store, log, 'first', '3000');
    const second = start('loop', store, log, 'second', '3000');
    expect(await exited(first)).toBe(0);
    expect(await exited(second)).toBe(0);

    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const slots = lines.map((line) => line.split(' ')[1]);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(new Set(slots).size).toBe(slots.length);
    // one leader at a time: in slot order the firing holder changes at most once (when the
    // first process stops and gives the lease up), never back and forth
    const holders = lines
      .sort((a, b) => a.split(' ')[1]!.localeCompare(b.split(' ')[1]!))
      .map((l) => l.split(' ')[0]);
    const changes = holders.filter((holder, index) => index > 0 && holder !== holders[index - 1]).length;
    expect(changes).toBeLessThanOrEqual(1);
    const check = new Scheduler({ store, fire: async () => ({ ok: true }) });
    expect(check.store.slots().filter((slot) => slot.status !== 'ok')).toEqual([]);
    check.store.close();
  });
});
