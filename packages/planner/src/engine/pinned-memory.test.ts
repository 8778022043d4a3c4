import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPinnedMemory, PinnedMemoryError } from './pinned-memory.ts';
import { createRunMemory } from './run-memory.ts';

const properties = { trash_folder: z.string().min(1), quiet_hours: z.array(z.number().int()).length(2) };

describe('object-pinned memory', () => {
  it('keeps typed properties of a subject across opens, and run memory reads them by $ref', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'metnos-pinned-')), 'pinned.sqlite');
    const first = createPinnedMemory({ path, properties });
    first.set('mail:work', 'trash_folder', 'Junk');
    first.set('user:me', 'quiet_hours', [22, 7]);
    first.close();
    const again = createPinnedMemory({ path, properties });
    expect(again.get('mail:work', 'trash_folder')).toBe('Junk');
    expect(again.list('user:me')).toMatchObject([{ property: 'quiet_hours', value: [22, 7] }]);
    const run = createRunMemory({ request: 'r', runtime: {}, pinned: again });
    expect(run.read('pinned/user:me/quiet_hours[0]', '$ref')).toBe(22);
    expect(() => run.read('pinned/user:you/quiet_hours', '$ref')).toThrow(/has no "quiet_hours" pinned/);
    expect(again.forget('mail:work', 'trash_folder')).toBe(true);
    expect(again.get('mail:work', 'trash_folder')).toBeUndefined();
    again.close();
  });

  it('refuses undeclared properties, wrong types and malformed subjects; a row edited into the wrong type reads as absent', async () => {
    const db = new Database(':memory:');
    const pinned = createPinnedMemory({ db, properties });
    expect(() => pinned.set('mail:work', 'password', 'x')).toThrow(PinnedMemoryError);
    expect(() => pinned.set('mail:work', 'trash_folder', 42)).toThrow(/trash_folder/);
    expect(() => pinned.set('no subject', 'trash_folder', 'Junk')).toThrow(/not a subject/);
    expect(() => pinned.set('mail:work', '__proto__', 'x')).toThrow(PinnedMemoryError);
    pinned.set('mail:work', 'trash_folder', 'Junk');
    db.prepare(`update pinned_properties set value = '{"opaque":true}'`).run();
    expect(pinned.get('mail:work', 'trash_folder')).toBeUndefined();
    db.prepare(`update pinned_properties set value = 'not json'`).run();
    expect(pinned.get('mail:work', 'trash_folder')).toBeUndefined();
    expect(pinned.list('mail:work')).toEqual([]);
  });
});
