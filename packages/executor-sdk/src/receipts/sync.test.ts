import { readlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { generateSigningKey } from '../keys.ts';
import { createReceiptChain } from './chain.ts';

const temp = useTempDirs('metnos-receipts-sync-');
const DAY = Date.UTC(2026, 4, 2, 10);
const entry = (index: number) => ({ kind: 'executor', data: { executor: 'fs_read', index } });

/** Every path `FileHandle.sync` is called on, in order (the handles of node:fs/promises share one prototype). */
async function watchSyncs(probe: string): Promise<string[]> {
  const handle = await open(probe, 'w');
  const prototype = Object.getPrototypeOf(handle) as { sync(): Promise<void> };
  await handle.close();
  const synced: string[] = [];
  const original = prototype.sync;
  vi.spyOn(prototype, 'sync').mockImplementation(function (this: { fd: number }) {
    synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
    return original.call(this);
  });
  return synced;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('when receipts reach the disk', () => {
  it('deferred (the default): append answers before any fsync; drain waits for the day file, then the head, then the folder', async () => {
    const dir = await temp.make('chain-');
    const synced = await watchSyncs(join(dir, 'probe'));
    let tick = 0;
    const chain = createReceiptChain({ dir, key: await generateSigningKey(), now: () => DAY + tick++ });
    await chain.append(entry(0));
    expect(synced).toEqual([]);
    await chain.drain();
    expect(synced).toEqual([join(dir, '2026-05-02.jsonl'), join(dir, 'head.json'), dir]);
  });

  it('each: every append resolves after its own fsync of the day file and the head', async () => {
    const dir = await temp.make('chain-');
    const synced = await watchSyncs(join(dir, 'probe'));
    let tick = 0;
    const chain = createReceiptChain({
      dir,
      key: await generateSigningKey(),
      now: () => DAY + tick++,
      sync: 'each',
    });
    for (let index = 0; index < 2; index++) {
      synced.length = 0;
      await chain.append(entry(index));
      expect(synced).toContain(join(dir, '2026-05-02.jsonl'));
      expect(synced.some((path) => path.startsWith(join(dir, 'head.json')))).toBe(true);
    }
  });
});
