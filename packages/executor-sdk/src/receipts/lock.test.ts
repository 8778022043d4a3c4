import { existsSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
    const draft = `${path}.${process.pid}.draft`;
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'untouched');
    await symlink(target, draft);
    expect(await withFileLock(path, async () => 'done', { timeoutMs: 500 })).toBe('done');
    expect(await readFile(target, 'utf8')).toBe('untouched');
    expect(existsSync(draft)).toBe(false);
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
