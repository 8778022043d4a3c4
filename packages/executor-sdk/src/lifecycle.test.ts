import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { LifecycleError } from './errors.ts';
import {
  canTransition,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  type LifecycleState,
  openLifecycleStore,
} from './lifecycle.ts';

const temp = useTempDirs('metnos-lifecycle-');

describe('lifecycle transitions', () => {
  // The state machine of the executor design, plus quarantine from every state where a
  // version can be found broken (a loaded one, or one whose rehabilitation fails).
  const allowed: Record<LifecycleState, LifecycleState[]> = {
    seed: ['active', 'quarantined'],
    active: ['fused', 'quarantined', 'below_threshold', 'archived'],
    fused: ['archived', 'active', 'quarantined'],
    quarantined: ['active', 'archived'],
    below_threshold: ['active', 'archived', 'quarantined'],
    archived: ['active', 'quarantined'],
  };

  it('are data: exactly the allowed pairs pass canTransition', () => {
    expect(Object.keys(LIFECYCLE_TRANSITIONS).sort()).toEqual([...LIFECYCLE_STATES].sort());
    for (const from of LIFECYCLE_STATES) {
      expect([from, [...LIFECYCLE_TRANSITIONS[from]].sort()]).toEqual([from, [...allowed[from]].sort()]);
      for (const to of LIFECYCLE_STATES) {
        expect([from, to, canTransition(from, to)]).toEqual([from, to, allowed[from].includes(to)]);
      }
    }
  });

  it('never lead back to seed, and a quarantined version cannot be fused or aged', () => {
    for (const from of LIFECYCLE_STATES) expect(canTransition(from, 'seed')).toBe(false);
    expect(canTransition('quarantined', 'fused')).toBe(false);
    expect(canTransition('quarantined', 'below_threshold')).toBe(false);
    expect(canTransition('seed', 'archived')).toBe(false);
    expect(canTransition('archived', 'fused')).toBe(false);
  });
});

describe('lifecycle store', () => {
  it('records transitions with history and refuses forbidden ones, leaving the state as it was', async () => {
    const dir = await temp.make();
    let now = Date.parse('2026-04-25T08:00:00Z');
    const clock = () => {
      now += 60_000;
      return new Date(now);
    };
    const store = await openLifecycleStore(join(dir, 'lifecycle.json'), clock);
    store.introduce('fs_read@1.0.0', 'seed');
    store.introduce('fs_read@1.0.0', 'active'); // a second sighting changes nothing
    expect(store.get('fs_read@1.0.0')?.state).toBe('seed');
    store.transition('fs_read@1.0.0', 'active', 'signature verified');
    store.transition('fs_read@1.0.0', 'below_threshold', 'unused for 90 days');

    expect(() => store.transition('fs_read@1.0.0', 'fused', 'no')).toThrow(LifecycleError);
    expect(() => store.transition('fs_read@1.0.0', 'seed')).toThrow(/cannot go from below_threshold to seed/);
    expect(() => store.transition('ghost@1.0.0', 'active')).toThrow(/unknown executor version/);

    const record = store.get('fs_read@1.0.0')!;
    expect(record).toMatchObject({
      state: 'below_threshold',
      reason: 'unused for 90 days',
      since: '2026-04-25T08:03:00.000Z',
    });
    expect(record.history.map((entry) => [entry.from, entry.to])).toEqual([
      [null, 'seed'],
      ['seed', 'active'],
      ['active', 'below_threshold'],
    ]);

    await store.save();
    const reopened = await openLifecycleStore(join(dir, 'lifecycle.json'));
    expect(reopened.get('fs_read@1.0.0')).toEqual(record);
  });

  it('refuses a lifecycle file that is not one instead of starting empty', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, 'lifecycle.json'), '{"version":1,"executors":{"x@1.0.0":{"state":"zombie"}}}');
    await expect(openLifecycleStore(join(dir, 'lifecycle.json'))).rejects.toThrow(LifecycleError);
    await writeFile(join(dir, 'lifecycle.json'), '{"version":1,"execu');
    await expect(openLifecycleStore(join(dir, 'lifecycle.json'))).rejects.toThrow(/cannot read/);
  });

  it('survives kill -9 in the middle of saving: the file is always the old or the new one', async () => {
    const dir = await temp.make();
    const path = join(dir, 'lifecycle.json');
    const writer = spawn(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        join(import.meta.dirname, '__fixtures__', 'lifecycle-writer.ts'),
        path,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      writer.on('exit', (_code, signal) => resolve(signal)),
    );
    let saved = -1;
    for await (const line of createInterface({ input: writer.stdout! })) {
      saved = Number(line);
      if (saved >= 150) {
        writer.kill('SIGKILL');
        break;
      }
    }
    expect(await exited).toBe('SIGKILL');

    const store = await openLifecycleStore(path);
    const count = Object.keys(store.all()).length;
    expect(count).toBeGreaterThanOrEqual(saved + 1);
    for (let index = 0; index < count; index++) expect(store.get(`x${index}@1.0.0`)?.state).toBe('active');
    // Whatever temp file the kill left behind is not read and does not get in the way.
    const leftovers = (await readdir(dir)).filter((file) => file.endsWith('.tmp'));
    expect(leftovers.length).toBeLessThanOrEqual(1);
    store.transition('x0@1.0.0', 'archived', 'after the crash');
    await store.save();
    expect(JSON.parse(await readFile(path, 'utf8')).executors['x0@1.0.0'].state).toBe('archived');
  });

  it('stamps each transition with the clock of its moment, and saveNow writes what save would', async () => {
    const dir = await temp.make();
    let now = Date.parse('2026-11-28T08:00:00.000Z');
    const path = join(dir, 'lifecycle.json');
    // a clock that moves by half a millisecond a call: every other call is a new millisecond
    const store = await openLifecycleStore(path, () => {
      now += 0.5;
      return new Date(now);
    });
    store.introduce('a@1.0.0', 'seed');
    store.transition('a@1.0.0', 'active', 'signature verified');
    store.introduce('b@1.0.0', 'seed');
    store.transition('b@1.0.0', 'active', 'signature verified');
    const stamps = ['a@1.0.0', 'b@1.0.0'].flatMap((id) => store.get(id)!.history.map((step) => step.at));
    expect(stamps).toEqual([
      '2026-11-28T08:00:00.000Z',
      '2026-11-28T08:00:00.001Z',
      '2026-11-28T08:00:00.001Z',
      '2026-11-28T08:00:00.002Z',
    ]);
    store.saveNow();
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, executors: store.all() });
    expect(await readdir(dir)).toEqual(['lifecycle.json']);
  });
});
