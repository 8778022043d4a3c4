import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode } from './fixtures.ts';

// The same executor at each tier: what it can reach, and what the result says was applied.
const CODE = observingCode(`out.hostname = await attempt(() => fs.readFileSync('/etc/hostname', 'utf8'));
out.root = await attempt(() => fs.readdirSync('/'));`);

describe('honest tiers', () => {
  let lab: Lab;
  let workspace: string;
  beforeAll(async () => {
    lab = await createLab('metnos-sandbox-tiers-');
    workspace = join(lab.root, 'workspace');
  });
  afterAll(() => rm(lab.root, { recursive: true, force: true }));

  async function runAt(tier: 'none' | 'basic' | 'standard' | 'full') {
    const runner = createSandboxRunner({ tier, audit: false, home: join(lab.root, 'home') });
    expect(runner.tier).toBe(tier);
    const harness = await lab.executor(
      `at_${tier}`,
      { code: CODE, profile: { tier: 'none', read: ['$WORKSPACE'] } },
      runner,
    );
    const result = await harness.invoke({}, { workspace });
    if (!result.ok) throw new Error(`${result.error.class}: ${result.error.message}`);
    return { result, observed: result.content as Record<string, { ok: boolean }> };
  }

  it('none: a plain process that sees the host, and says so', async () => {
    const { result, observed } = await runAt('none');
    expect(observed.hostname?.ok).toBe(true);
    expect(result.isolation).toMatchObject({ tier: 'none', layers: ['process', 'timeout', 'output-caps'] });
  });

  it('basic: rlimits and the Node permission model; the notes name what is not isolated', async () => {
    const { result, observed } = await runAt('basic');
    expect(observed.hostname?.ok).toBe(false);
    expect(result.isolation?.layers).toEqual(
      expect.arrayContaining(['rlimits', 'node-permission', 'heap-limit']),
    );
    expect(result.isolation?.layers).not.toContain('bubblewrap');
    expect(result.isolation?.notes?.join(' ')).toMatch(/network is not isolated/);
  });

  it('standard: namespaces and seccomp, no Landlock', async () => {
    const { result, observed } = await runAt('standard');
    expect(observed.hostname?.ok).toBe(false);
    expect(result.isolation?.layers).toEqual(
      expect.arrayContaining(['bubblewrap', 'net-ns', 'cap-drop-all', 'seccomp']),
    );
    expect(result.isolation?.layers).not.toContain('landlock');
  });

  it('full: every layer the host has, memory named as cgroup or heap-only', async () => {
    const { result, observed } = await runAt('full');
    expect(observed.hostname?.ok).toBe(false);
    expect(result.isolation?.layers).toEqual(expect.arrayContaining(['bubblewrap', 'seccomp', 'landlock']));
    expect(result.isolation?.notes?.join(' ')).toMatch(/memory: (cgroup|V8 heap)/);
  });
});
