import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode, type ProfileSpec } from './fixtures.ts';

/** Disk bytes of every file under `dir`, the host's audit tree (and its reserve) aside. */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.parentPath.startsWith(join(dir, '.audit'))) continue;
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).blocks * 512;
  }
  return total;
}

describe('the write quota (max_write_bytes)', () => {
  let lab: Lab;
  let runner: SandboxRunner;
  const MiB = 1024 * 1024;

  beforeAll(async () => {
    lab = await createLab('metnos-quota-');
    runner = createSandboxRunner();
  });

  async function writer(name: string, body: string, profile: ProfileSpec, quota?: number) {
    const harness = await lab.executor(
      name,
      { code: observingCode(body), profile: { write: ['$WORKSPACE'], durationMs: 15_000, ...profile } },
      runner,
    );
    if (quota !== undefined) {
      // the fixture's TOML has no max_write_bytes: re-sign with it
      const { readFile, writeFile } = await import('node:fs/promises');
      const { signExecutor, createBirthHarness } = await import('@metnos/executor-sdk');
      const dir = join(lab.root, name, name);
      const manifest = await readFile(join(dir, 'manifest.toml'), 'utf8');
      await writeFile(
        join(dir, 'manifest.toml'),
        manifest.replace('max_output_bytes =', `max_write_bytes = ${quota}\nmax_output_bytes =`),
      );
      await signExecutor(dir, lab.key);
      return createBirthHarness(dir, { runner, trustedKeys: [lab.key] });
    }
    return harness;
  }

  const cases: [string, string][] = [
    [
      'one big file',
      `const chunk = Buffer.alloc(1024 * 1024, 7); const fd = fs.openSync(ctx.workspace + '/big', 'w'); for (let i = 0; i < 200; i++) fs.writeSync(fd, chunk);`,
    ],
    [
      'many small files',
      `const chunk = Buffer.alloc(64 * 1024, 7); for (let i = 0; i < 3200; i++) fs.writeFileSync(ctx.workspace + '/f' + i, chunk);`,
    ],
    [
      'appends to one file',
      `const chunk = Buffer.alloc(256 * 1024, 7); for (let i = 0; i < 800; i++) fs.appendFileSync(ctx.workspace + '/log', chunk);`,
    ],
  ];
  for (const [what, body] of cases) {
    it(`stops a call that writes past its quota (${what}) with ResourceLimit`, async () => {
      const workspace = await mkdtemp(join(tmpdir(), 'metnos-quota-ws-'));
      const harness = await writer(`w${cases.findIndex(([name]) => name === what)}`, body, {}, 8 * MiB);
      const result = await harness.invoke({}, { workspace });
      expect(result).toMatchObject({ ok: false, error: { class: 'ResourceLimit' } });
      // the meter reads every 20 ms and the file-size limit caps each file: a bounded overshoot
      expect(await bytesUnder(workspace)).toBeLessThan(8 * MiB + 64 * MiB);
    }, 30_000);
  }

  it('applies the 32 MiB default when the profile sets no quota', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'metnos-quota-ws-'));
    const harness = await writer(
      'default_quota',
      `const chunk = Buffer.alloc(1024 * 1024, 7); for (let i = 0; i < 24; i++) fs.writeFileSync(ctx.workspace + '/ok' + i, chunk);
       out.small = true;
       for (let i = 0; i < 400; i++) fs.writeFileSync(ctx.workspace + '/more' + i, chunk);`,
      {},
    );
    const result = await harness.invoke({}, { workspace });
    expect(result).toMatchObject({ ok: false, error: { class: 'ResourceLimit' } });
    expect(!result.ok && result.error.message).toMatch(/33554432 bytes/);
  }, 30_000);

  it('lets a call write what it declared', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'metnos-quota-ws-'));
    const harness = await writer(
      'within_quota',
      `fs.writeFileSync(ctx.workspace + '/four', Buffer.alloc(4 * 1024 * 1024, 1)); out.done = await attempt(() => fs.statSync(ctx.workspace + '/four').size);`,
      {},
      16 * MiB,
    );
    const result = await harness.invoke({}, { workspace });
    expect(result).toMatchObject({ ok: true, content: { done: { ok: true, value: 4 * MiB } } });
  }, 30_000);

  it('cannot reserve disk space with fallocate, which writes no byte the meter could count', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'metnos-quota-ws-'));
    const harness = await writer(
      'fallocate',
      `const r = cp.spawnSync('fallocate', ['-l', '512M', ctx.workspace + '/reserved'], { encoding: 'utf8' });
       out.status = r.status; out.stderr = r.stderr;`,
      { exec: ['fallocate'] },
      1024 * MiB,
    );
    const result = await harness.invoke({}, { workspace });
    expect(result).toMatchObject({ ok: true });
    const observed = (result.ok ? result.content : {}) as { status: number; stderr: string };
    expect(observed.status).not.toBe(0);
    expect(observed.stderr).toMatch(/not supported/i);
    expect(await bytesUnder(workspace)).toBeLessThan(MiB);
  }, 30_000);
});
