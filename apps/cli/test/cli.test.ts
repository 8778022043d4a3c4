import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot } from './__fixtures__/cli.ts';

let home: string;
let work: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'metnos-cli-home-'));
  work = await mkdtemp(join(tmpdir(), 'metnos-cli-work-'));
  process.env.METNOS_CONFIG_DIR = join(home, 'config');
  process.env.INIT_CWD = work;
});

afterAll(async () => {
  process.env = savedEnv;
  await rm(home, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('metnos help', () => {
  it('prints help for every command', async () => {
    for (const args of [['--help'], ['keys', '--help'], ['executor', '--help'], ['doctor', '--help']]) {
      const result = await cli(args);
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/Usage:/);
    }
  });

  it('refuses an unknown command with exit 2', async () => {
    const result = await cli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.err).toContain('unknown command');
  });
});

describe('seed executors', () => {
  it('verifies every seed executor with the committed release key', async () => {
    process.env.INIT_CWD = repoRoot;
    const result = await cli(['executor', 'verify', 'executors']);
    process.env.INIT_CWD = work;
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/ok {4}fs_read@/);
    expect(result.out).toMatch(/\b(1[1-9]|[2-9]\d) valid, 0 refused/);
  });

  it.each(['manifest.toml', 'main.ts', 'schema.json', 'profile.lock', 'manifest.sig'])(
    'names %s when one of its bytes is flipped in a copy',
    async (artefact) => {
      const copy = await mkdtemp(join(tmpdir(), 'metnos-flip-'));
      await cp(join(repoRoot, 'executors', 'fs_read'), join(copy, 'fs_read'), { recursive: true });
      await writeFile(
        join(copy, 'metnos.toml'),
        `[workspace]\nroot = "workspace"\ntrusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]\n`,
      );
      const path = join(copy, 'fs_read', artefact);
      const bytes = await readFile(path);
      const index =
        artefact === 'manifest.sig' ? bytes.indexOf('"signature"') + 20 : Math.floor(bytes.length / 2);
      bytes[index] = bytes[index]! ^ 0x01;
      await writeFile(path, bytes);
      const result = await cli(['executor', 'verify', join(copy, 'fs_read')]);
      expect(result.code).toBe(1);
      expect(result.err).toContain(artefact);
      const tree = await cli(['executor', 'verify', copy]);
      expect(tree.code).toBe(1);
      expect(tree.err).toContain('fs_read');
      await rm(copy, { recursive: true, force: true });
    },
  );
});

describe('authoring an executor start to finish', () => {
  it('creates a key, scaffolds, signs, verifies, tests and runs', async () => {
    const init = await cli(['keys', 'init']);
    expect(init.code).toBe(0);
    expect(init.out).toMatch(/created key "default" ed25519:[0-9a-f]{16}/);
    expect((await cli(['keys', 'init'])).code).toBe(1);

    const list = await cli(['keys', 'list']);
    expect(list.out).toContain('default');

    expect((await cli(['executor', 'new', 'hello', '--in', '.'])).code).toBe(0);
    const signed = await cli(['executor', 'sign', 'hello']);
    expect(signed.code).toBe(0);
    expect(signed.out).toContain('signed hello@0.1.0');

    const verified = await cli(['executor', 'verify', 'hello']);
    expect(verified.out).toContain('ok  hello@0.1.0');

    const run = await cli([
      'executor',
      'run',
      'hello',
      '--executors',
      '.',
      '--workspace',
      '.',
      '--args',
      '{"name":"Ada"}',
    ]);
    expect(run.err).toBe('');
    expect(JSON.parse(run.out)).toMatchObject({ ok: true, content: { greeting: 'Hello, Ada!' } });
    expect(run.code).toBe(0);

    const refused = await cli([
      'executor',
      'run',
      'hello',
      '--executors',
      '.',
      '--workspace',
      '.',
      '--args',
      '{"nom":"Ada"}',
    ]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });

    const tested = await cli(['executor', 'test', 'hello']);
    expect(tested.code).toBe(0);

    const listed = await cli(['executor', 'list', '--executors', '.']);
    expect(listed.out).toMatch(/hello\s+0\.1\.0\s+active/);

    await writeFile(join(work, 'hello', 'main.ts'), '// changed after signing\n', { flag: 'a' });
    const tampered = await cli(['executor', 'verify', 'hello']);
    expect(tampered.code).toBe(1);
    expect(tampered.err).toContain('main.ts');
    const listedAfter = await cli(['executor', 'list', '--executors', '.']);
    expect(listedAfter.out).toMatch(/hello\s+0\.1\.0\s+quarantined/);
  });

  it('reports bad JSON arguments as a usage error', async () => {
    const result = await cli(['executor', 'run', 'hello', '--executors', '.', '--args', '{oops']);
    expect(result.code).toBe(2);
    expect(result.err).toContain('--args is not valid JSON');
  });
});
