import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executorCode, useTempDirs } from './__fixtures__/index.ts';
import { appendAuditLine, appendToAuditTree, createAuditLog, ensureAuditTree } from './audit.ts';
import { createCatalog, defaultStateDir } from './catalog.ts';
import { KeyError, ManifestError } from './errors.ts';
import { createInvoker } from './invoke.ts';
import { generateSigningKey, serializePublicKey } from './keys.ts';
import { parseManifest } from './manifest.ts';
import { createProcessRunner, type ExecutorRunner } from './runner.ts';
import { scaffoldManifest } from './scaffold.ts';
import { writeSignedExecutor } from './test/index.ts';
import { assertTrustOutsideWorkspace, findWorkspaceConfig, loadTrustedKeys } from './trust.ts';

const temp = useTempDirs('metnos-integrity-');

async function catalogWith(
  code: string,
  options: { errorClasses?: string[] } = {},
): Promise<{ root: string; dir: string; catalog: ReturnType<typeof createCatalog> }> {
  const root = await temp.make('executors-');
  const key = await generateSigningKey();
  const { dir } = await writeSignedExecutor({ root, name: 'probe', key, code, ...options });
  const catalog = createCatalog({ root, trustedKeys: [key], stateDir: await temp.make('state-') });
  await catalog.load();
  return { root, dir, catalog };
}

describe('the process runs exactly the verified bytes', () => {
  it('runs the signed code even when main.ts is rewritten between verification and spawn', async () => {
    const { dir, catalog } = await catalogWith(executorCode(`return ok({ who: 'signed' });`));
    const inner = createProcessRunner();
    // A runner that rewrites the code file after the invoker's re-verification, right before the process starts.
    const racing: ExecutorRunner = {
      tier: inner.tier,
      async run(request) {
        await writeFile(join(dir, 'main.ts'), executorCode(`return ok({ who: 'attacker' });`));
        return inner.run(request);
      },
    };
    const invoker = createInvoker({ catalog, runner: racing });
    const workspace = await temp.make('ws-');
    const result = await invoker.invoke('probe', {}, { workspace, caller: { kind: 'test' } });
    expect(result).toMatchObject({ ok: true, content: { who: 'signed' } });
    // the next call re-verifies, sees the changed file and quarantines the version
    const again = await invoker.invoke('probe', {}, { workspace, caller: { kind: 'test' } });
    expect(again).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });
  });
});

describe('only the host emits host classes', () => {
  it('turns an executor that returns PolicyViolation into InvalidOutput', async () => {
    const { catalog } = await catalogWith(
      executorCode(
        `writeSync(1, JSON.stringify({ ok: false, error: { class: 'PolicyViolation', message: 'refused by the host (not really)' } }) + '\\n'); process.exit(0);`,
        `import { writeSync } from 'node:fs';`,
      ),
    );
    const invoker = createInvoker({ catalog, runner: createProcessRunner() });
    const result = await invoker.invoke(
      'probe',
      {},
      { workspace: await temp.make('ws-'), caller: { kind: 'test' } },
    );
    expect(result).toMatchObject({ ok: false, error: { class: 'InvalidOutput' } });
    expect(!result.ok && result.error.message).toMatch(/only the host may emit/);
  });

  it('refuses a manifest that declares a host class, and signing it', async () => {
    const text = scaffoldManifest('liar', 'Claims host refusals.', '2026-01-01T00:00:00Z').replace(
      'error_classes = ["BadName"]',
      'error_classes = ["IsolationUnavailable"]',
    );
    expect(() => parseManifest(text, 'manifest.toml')).toThrow(/host alone emits/);
    const root = await temp.make('executors-');
    await expect(
      writeSignedExecutor({ root, name: 'liar', errorClasses: ['PolicyViolation'] }),
    ).rejects.toThrow(ManifestError);
  });
});

describe('the audit log cannot be redirected or blinded', () => {
  it('creates the whole audit tree before any call, with a space reserve', async () => {
    const workspace = join(await temp.make('ws-'), 'fresh');
    await ensureAuditTree(workspace);
    for (const path of ['.audit/executors', '.audit/sandbox', '.audit/.reserve'])
      expect(existsSync(join(workspace, path))).toBe(true);
  });

  it('refuses to follow a symlink planted as the day file, and the call does not run', async () => {
    const { catalog } = await catalogWith(executorCode(`return ok({});`));
    const workspace = await temp.make('ws-');
    const outside = join(await temp.make('outside-'), 'target.txt');
    await writeFile(outside, 'untouched\n');
    const ts = new Date().toISOString();
    await mkdir(join(workspace, '.audit', 'executors'), { recursive: true });
    await symlink(outside, join(workspace, '.audit', 'executors', `${ts.slice(0, 10)}.jsonl`));
    const invoker = createInvoker({
      catalog,
      runner: createProcessRunner(),
      audit: createAuditLog({ workspace }),
    });
    const result = await invoker.invoke('probe', {}, { workspace, caller: { kind: 'test' } });
    expect(result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
    expect(await readFile(outside, 'utf8')).toBe('untouched\n');
  });

  it('refuses when the day file was made a folder, instead of switching auditing off', async () => {
    const { catalog } = await catalogWith(executorCode(`return ok({});`));
    const workspace = await temp.make('ws-');
    const ts = new Date().toISOString();
    await mkdir(join(workspace, '.audit', 'executors', `${ts.slice(0, 10)}.jsonl`), { recursive: true });
    const invoker = createInvoker({
      catalog,
      runner: createProcessRunner(),
      audit: createAuditLog({ workspace }),
    });
    const result = await invoker.invoke('probe', {}, { workspace, caller: { kind: 'test' } });
    expect(result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
  });

  it('refuses an audit folder that is a symlink', async () => {
    const workspace = await temp.make('ws-');
    const elsewhere = await temp.make('elsewhere-');
    await symlink(elsewhere, join(workspace, '.audit'));
    await expect(ensureAuditTree(workspace)).rejects.toThrow(/is a symlink/);
  });

  it('starts every line on a fresh line after a partial one', async () => {
    const dir = await temp.make('audit-');
    const file = join(dir, 'day.jsonl');
    await writeFile(file, '{"partial":');
    await appendAuditLine(file, '{"n":1}');
    await appendAuditLine(file, '{"n":2}');
    expect(await readFile(file, 'utf8')).toBe('{"partial":\n{"n":1}\n{"n":2}\n');
  });
});

describe('rollback protection survives its files', () => {
  it('keeps the ledger out of the executors folder by default', async () => {
    const root = await temp.make('executors-');
    const key = await generateSigningKey();
    await writeSignedExecutor({ root, name: 'tool', key, version: '2.0.0' });
    await createCatalog({ root, trustedKeys: [key] }).load();
    expect(existsSync(join(root, '.state'))).toBe(false);
    expect(existsSync(join(defaultStateDir(root), 'ledger.json'))).toBe(true);
    await rm(defaultStateDir(root), { recursive: true, force: true });
  });

  it('refuses a lower version when the ledger is gone but the lifecycle remembers a higher one', async () => {
    const root = await temp.make('executors-');
    const stateDir = await temp.make('state-');
    const key = await generateSigningKey();
    await writeSignedExecutor({ root, name: 'tool', key, version: '2.0.0', versioned: true });
    expect((await createCatalog({ root, trustedKeys: [key], stateDir }).load()).loaded).toHaveLength(1);
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await writeSignedExecutor({ root, name: 'tool', key, version: '1.0.0', versioned: true });
    await writeFile(join(root, 'tool', 'CURRENT'), '1.0.0\n');
    const report = await createCatalog({ root, trustedKeys: [key], stateDir }).load();
    expect(report.loaded).toHaveLength(0);
    expect(report.quarantined[0]).toMatchObject({ reason: 'rollback' });
    expect(report.quarantined[0]?.message).toMatch(/ledger .* is missing/);
  });
});

describe('trust comes only from places executors cannot write', () => {
  it('refuses trusted keys from a metnos.toml inside its own workspace', async () => {
    const dir = await temp.make('place-');
    const key = await generateSigningKey();
    await writeFile(join(dir, 'k.pub'), serializePublicKey(key));
    await writeFile(join(dir, 'metnos.toml'), '[workspace]\nroot = "."\ntrusted_keys = ["k.pub"]\n');
    const config = await findWorkspaceConfig(dir);
    expect(() => assertTrustOutsideWorkspace(config!)).toThrow(KeyError);
    await expect(loadTrustedKeys(dir, { configDir: await temp.make('cfg-') })).rejects.toThrow(
      /inside its workspace/,
    );
  });

  it('refuses a key file placed inside the workspace even when the toml is outside', async () => {
    const dir = await temp.make('place-');
    await mkdir(join(dir, 'ws'));
    const key = await generateSigningKey();
    await writeFile(join(dir, 'ws', 'k.pub'), serializePublicKey(key));
    await writeFile(join(dir, 'metnos.toml'), '[workspace]\nroot = "ws"\ntrusted_keys = ["ws/k.pub"]\n');
    await expect(loadTrustedKeys(dir, { configDir: await temp.make('cfg-') })).rejects.toThrow(KeyError);
  });
});

describe('a metnos.toml an executor could have written is not read', () => {
  it('refuses a metnos.toml inside the workspace of one further up', async () => {
    const place = await temp.make('place-');
    await mkdir(join(place, 'ws', 'sub'), { recursive: true });
    await writeFile(join(place, 'metnos.toml'), '[workspace]\nroot = "ws"\n');
    const key = await generateSigningKey();
    await writeFile(join(place, 'ws', 'sub', 'k.pub'), serializePublicKey(key));
    // what an executor with write on the workspace could plant: other executors, its own key
    await writeFile(
      join(place, 'ws', 'sub', 'metnos.toml'),
      '[workspace]\nroot = "/nonexistent-elsewhere"\nexecutors = "evil"\ntrusted_keys = ["k.pub"]\n',
    );
    await expect(findWorkspaceConfig(join(place, 'ws', 'sub'))).rejects.toThrow(/inside the workspace/);
    await expect(
      loadTrustedKeys(join(place, 'ws', 'sub'), { configDir: await temp.make('cfg-') }),
    ).rejects.toThrow(KeyError);
    // the outer one itself is fine
    expect((await findWorkspaceConfig(place))?.root).toBe(join(place, 'ws'));
  });
});

describe('a full disk', () => {
  const root = process.getuid?.() === 0;
  it.skipIf(!root)(
    'still records lines after the reserve was given back, and says so with diskFull',
    async () => {
      const { spawnSync } = await import('node:child_process');
      const { statfs } = await import('node:fs/promises');
      const workspace = await temp.make('full-');
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', workspace]).status !== 0) return;
      try {
        await ensureAuditTree(workspace);
        // fill what is left, then give the reserve back as a full-disk append would
        const { bsize, bavail } = await statfs(workspace);
        await writeFile(join(workspace, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - 64 * 1024)));
        await writeFile(join(workspace, '.audit', '.reserve'), '');
        await writeFile(join(workspace, 'filler2'), Buffer.alloc(900 * 1024));
        const error = await ensureAuditTree(workspace).catch((caught) => caught);
        expect(error).toMatchObject({ diskFull: true });
        const ts = new Date().toISOString();
        await appendToAuditTree(workspace, 'executors', ts, '{"after":"full"}');
        expect(
          await readFile(join(workspace, '.audit', 'executors', `${ts.slice(0, 10)}.jsonl`), 'utf8'),
        ).toBe('{"after":"full"}\n');
      } finally {
        spawnSync('umount', [workspace]);
      }
    },
  );
});
