import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, repoRoot, seedCount } from './__fixtures__/cli.ts';

const savedEnv = { ...process.env };
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-doctor-'));
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
});

afterEach(async () => {
  process.env = { ...savedEnv };
  await rm(work, { recursive: true, force: true });
});

async function place(root: string): Promise<void> {
  await writeFile(
    join(work, 'metnos.toml'),
    `[workspace]\nroot = "${root}"\nexecutors = "${join(repoRoot, 'executors')}"\ntrusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]\n`,
  );
}

describe('metnos doctor: integrity', () => {
  it("reports the helper's check, the audit tree and that every seed profile is accepted", async () => {
    await place('workspace');
    const { code, out } = await cli(['doctor']);
    expect(code).toBe(0);
    expect(out).toMatch(/^ {2}ok {2}helper +.*digest, owner, mode and parent folders check out/m);
    expect(out).toMatch(/^ {2}ok {2}audit +.*\.audit/m);
    const seeds = seedCount();
    expect(out).toMatch(
      new RegExp(`^ {2}ok {2}profiles ${seeds} of ${seeds} accepted by the current rules`, 'm'),
    );
  });

  it('names an audit folder that was made a symlink, and how to fix it', async () => {
    await place('workspace');
    await mkdir(join(work, 'workspace'), { recursive: true });
    await mkdir(join(work, 'elsewhere'));
    await symlink(join(work, 'elsewhere'), join(work, 'workspace', '.audit'));
    const { out } = await cli(['doctor']);
    expect(out).toMatch(
      /^ {2}no {2}audit +.*\.audit is a symlink: every call is refused \(AuditUnavailable\)/m,
    );
    expect(out).toMatch(/fix: move it aside/);
  });

  it('lists the seed profiles the rules refuse when the workspace holds the executors folder', async () => {
    // a workspace that contains the executors Metnos loads: writing executors would be refused there
    await writeFile(
      join(work, 'metnos.toml'),
      `[workspace]\nroot = "${repoRoot}"\nexecutors = "${join(repoRoot, 'executors')}"\n`,
    );
    const keys = join(work, 'config');
    await mkdir(keys, { recursive: true });
    await writeFile(
      join(keys, 'trusted_keys.json'),
      JSON.stringify({
        version: 1,
        keys: [
          await (await import('node:fs/promises')).readFile(
            join(repoRoot, 'keys', 'metnos-release.pub'),
            'utf8',
          ),
        ],
      }),
    );
    const { out } = await cli(['doctor', '--json']);
    const report = JSON.parse(out) as { integrity: { check: string; ok: boolean; detail: string }[] };
    const refused = report.integrity.filter((finding) => finding.check === 'profile' && !finding.ok);
    expect(refused.map((finding) => finding.detail.split('@')[0]).sort()).toEqual(
      expect.arrayContaining(['fs_move', 'fs_write']),
    );
    expect(refused[0]?.detail).toMatch(/profile-too-broad/);
  });
});
