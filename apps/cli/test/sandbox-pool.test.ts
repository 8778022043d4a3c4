import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findWorkspaceConfig } from '@metnos/executor-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AppConfig, readAppConfig, sandboxPool } from '../src/config.ts';
import { CliFailure } from '../src/output.ts';
import { writeWorkspaceConfig } from './__fixtures__/cli.ts';

// `[sandbox] pool` in metnos.toml: the warm pool of the sandbox runner the commands build.

let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-sandbox-pool-'));
  await writeWorkspaceConfig(work, 'http://127.0.0.1:11434');
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

async function configWith(sandboxTable: string): Promise<AppConfig> {
  await appendFile(join(work, 'metnos.toml'), `\n[sandbox]\n${sandboxTable}\n`);
  const config = await findWorkspaceConfig(work);
  return readAppConfig({ cwd: work, config, executors: work, workspace: work, configDir: undefined });
}

describe('[sandbox] pool', () => {
  it('is on for serve and off for the one-shot commands when metnos.toml says nothing', async () => {
    const config = await configWith('');
    expect(sandboxPool(config, true)).toBe(true);
    expect(sandboxPool(config, false)).toBe(false);
  });

  it('is what metnos.toml says: a switch, or the budgets', async () => {
    expect(sandboxPool(await configWith('pool = false'), true)).toBe(false);
    await rm(work, { recursive: true, force: true });
    work = await mkdtemp(join(tmpdir(), 'metnos-sandbox-pool-'));
    await writeWorkspaceConfig(work, 'http://127.0.0.1:11434');
    const budgets = await configWith('pool = { size = 2, max = 6, memory_mb = 512, idle_ms = 60000 }');
    expect(sandboxPool(budgets, false)).toEqual({
      size: 2,
      max: 6,
      memoryMb: 512,
      processes: undefined,
      idleMs: 60_000,
    });
  });

  it('stops the command with the field named when the table is wrong', async () => {
    const failure = await configWith('pool = { size = 2, sizes = 3 }').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliFailure);
    expect((failure as Error).message).toMatch(/field "sandbox\.pool"/);
  });
});
