import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { writeFileAtomicSync } from './sign.ts';

const temp = useTempDirs('metnos-write-');

describe('writeFileAtomicSync', () => {
  it('replaces the file whole with the mode asked for, leaving nothing beside it', async () => {
    const dir = await temp.make();
    const path = join(dir, 'ledger.json');
    await writeFile(path, 'old\n');
    writeFileAtomicSync(path, 'new\n', 0o600);
    expect(await readFile(path, 'utf8')).toBe('new\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['ledger.json']);
  });

  it('throws when the file cannot be put in place, and removes its temp file', async () => {
    const dir = await temp.make();
    // a directory where the file belongs: the write succeeds, the rename cannot
    const path = join(dir, 'lifecycle.json');
    await mkdir(path);
    expect(() => writeFileAtomicSync(path, 'new\n')).toThrow();
    expect(await readdir(dir)).toEqual(['lifecycle.json']);
    expect((await stat(path)).isDirectory()).toBe(true);
  });
});
