import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimStores, StoresOwnedError } from '../src/owner.ts';

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metnos-owner-'));
  dirs.push(dir);
  return join(dir, 'data');
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('claimStores', () => {
  it('refuses a second claim on a held data folder, naming the owner, and grants it once released', () => {
    const data = dataDir();
    const first = claimStores(data, 4242);
    let refused: unknown;
    try {
      claimStores(data, 4343);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(StoresOwnedError);
    expect((refused as StoresOwnedError).pid).toBe(4242);
    expect((refused as Error).message).toBe(
      `another metnos serve (pid 4242) owns the stores in ${data}; stop it first, or serve another workspace`,
    );
    first.release();
    first.release();
    const second = claimStores(data, 4343);
    second.release();
  });

  it('is free again at once when its owner is killed with -9', async () => {
    const data = dataDir();
    const owner = spawn(
      process.execPath,
      [
        '--conditions=metnos-source',
        '--input-type=module',
        '-e',
        `import { claimStores } from ${JSON.stringify(join(import.meta.dirname, '..', 'src', 'owner.ts'))};
         claimStores(${JSON.stringify(data)}); console.log('held'); setInterval(() => {}, 1000);`,
      ],
      { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      owner.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolve());
      owner.once('exit', (code) => reject(new Error(`the owner exited ${code}`)));
    });
    expect(() => claimStores(data)).toThrow(`another metnos serve (pid ${owner.pid}) owns the stores`);
    const gone = new Promise((resolve) => owner.once('exit', resolve));
    owner.kill('SIGKILL');
    await gone;
    claimStores(data).release();
  });
});
