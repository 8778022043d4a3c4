import { existsSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { threadId, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { withFileLock } from './lock.ts';

const temp = useTempDirs('metnos-lock-');

describe('the receipt lock', () => {
  it('is never seen empty: while work runs, the lock file already names this process', async () => {
    const dir = await temp.make();
    const path = join(dir, '.lock');
    const seen = await withFileLock(path, async () => readFile(path, 'utf8'));
    expect(seen).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}$`));
    expect(existsSync(path)).toBe(false);
  });

  it('is taken over a draft that a killed run with this process id left, and never written through a link planted as the draft', async () => {
    const dir = await temp.make();
    const path = join(dir, '.lock');
    const draft = `${path}.${process.pid}.${threadId}.draft`;
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'untouched');
    await symlink(target, draft);
    expect(await withFileLock(path, async () => 'done', { timeoutMs: 500 })).toBe('done');
    expect(await readFile(target, 'utf8')).toBe('untouched');
    expect(existsSync(draft)).toBe(false);
  });

  it('is shared by threads of one process, which take turns without tripping over each other', async () => {
    const dir = await temp.make();
    const path = join(dir, '.lock');
    const counter = join(dir, 'counter');
    await writeFile(counter, '0');
    const lock = new URL('./lock.ts', import.meta.url).href;
    // each thread adds one to the counter 100 times, reading and writing it under the lock
    const program = `
      const { workerData, parentPort } = require('node:worker_threads');
      const { readFileSync, writeFileSync } = require('node:fs');
      import(workerData.lock).then(async ({ withFileLock }) => {
        for (let i = 0; i < 100; i++)
          await withFileLock(workerData.path, async () => {
            writeFileSync(workerData.counter, String(Number(readFileSync(workerData.counter, 'utf8')) + 1));
          });
        parentPort.postMessage('done');
      }, (error) => parentPort.postMessage(String(error)));`;
    const run = () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(program, { eval: true, workerData: { lock, path, counter } });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    expect(await Promise.all([run(), run()])).toEqual(['done', 'done']);
    expect(await readFile(counter, 'utf8')).toBe('200');
  });

  it('waits for a live holder and gives up with a typed error', async () => {
    const dir = await temp.make();
    const path = join(dir, '.lock');
    await writeFile(path, `${process.pid} 0000000000000000`);
    await expect(withFileLock(path, async () => 'never', { timeoutMs: 100 })).rejects.toMatchObject({
      reason: 'lock_timeout',
    });
  });
});
