import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '@metnos/autopath/stores';
import { describe, expect, it } from 'vitest';
import { createGapLog } from './engine/terminator.ts';
import { createScratchpad, summarize } from './scratchpad.ts';

describe('scratchpad', () => {
  it('summarises with the first 500, the count omitted, and the last 500 characters', () => {
    const text = `${'a'.repeat(500)}${'b'.repeat(1000)}${'c'.repeat(500)}`;
    const summary = summarize(text);
    expect(summary.startsWith('a'.repeat(500))).toBe(true);
    expect(summary).toContain('[... 1000 characters omitted ...]');
    expect(summary.endsWith('c'.repeat(500))).toBe(true);
    expect(summarize('short')).toBe('short');
  });

  it('stores entries in a real SQLite file and reads them back by mode, per turn', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-scratch-'));
    const path = join(dir, 'scratchpad.db');
    const scratchpad = createScratchpad({ path });
    const text = `HEAD${'x'.repeat(10_000)}TAIL`;
    const observation = scratchpad.put('turn-a', text, { path: '/tmp/big.log' });
    expect(observation).toMatchObject({
      ok: true,
      kind: 'text',
      size_bytes: text.length,
      metadata: { path: '/tmp/big.log' },
    });
    scratchpad.close();

    const reopened = createScratchpad({ path });
    expect(reopened.count('turn-a')).toBe(1);
    expect(reopened.count('turn-b')).toBe(0);
    const id = observation.scratchpad_id;
    expect(reopened.read('turn-a', id, { mode: 'head', chars: 4 })?.content).toBe('HEAD');
    expect(reopened.read('turn-a', id, { mode: 'tail', chars: 4 })?.content).toBe('TAIL');
    expect(reopened.read('turn-a', id, { mode: 'range', start: 2, end: 6 })?.content).toBe('ADxx');
    expect(reopened.read('turn-a', id, { mode: 'full' })?.content).toBe(text);
    expect(reopened.read('turn-b', id, { mode: 'full' })).toBeUndefined();
    reopened.close();
  });

  it('stores JSON content as JSON', () => {
    const scratchpad = createScratchpad({ path: ':memory:' });
    const observation = scratchpad.put('t', { rows: Array.from({ length: 10 }, (_, index) => index) });
    expect(observation.kind).toBe('json');
    scratchpad.close();
  });

  it('refuses a scratchpad or gap log file that is garbage or a folder with a StoreError naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-scratch-bad-'));
    const garbage = join(dir, 'scratchpad.db');
    await writeFile(garbage, 'garbage bytes, not a database '.repeat(100));
    const folder = join(dir, 'terminator.sqlite');
    await mkdir(folder);
    for (const [open, file, reason] of [
      [() => createScratchpad({ path: garbage }), garbage, 'not_a_database'],
      [() => createGapLog({ path: folder }), folder, 'not_a_file'],
    ] as const) {
      let thrown: unknown;
      try {
        open();
      } catch (error) {
        thrown = error;
      }
      expect(StoreError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ file, reason });
    }
  });
});
