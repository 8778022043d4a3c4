import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { createBirthHarness } from './birth.ts';
import { createCatalog } from './catalog.ts';
import { createInvoker } from './invoke.ts';
import { createKeyStore, generateSigningKey } from './keys.ts';
import { parseManifest } from './manifest.ts';
import { createProcessRunner } from './runner.ts';
import { scaffoldExecutor } from './scaffold.ts';
import { signExecutor } from './sign.ts';
import { writeSignedExecutor } from './test/index.ts';
import { createTrustStore } from './trust.ts';
import { verifyExecutor } from './verify.ts';

const temp = useTempDirs('metnos-scaffold-');
// Scaffolded executors ask for tier "full"; these tests run them on the plain runner on purpose.
const runner = createProcessRunner({ enforceMinimumTier: false });

describe('scaffoldExecutor', () => {
  it('writes an executor that signs, verifies and runs', async () => {
    const parent = await temp.make();
    const key = await generateSigningKey();
    const dir = await scaffoldExecutor({
      parent,
      name: 'hello',
      clock: () => new Date('2026-04-25T08:12:00.123Z'),
    });
    expect(dir).toBe(join(parent, 'hello'));
    expect((await readdir(dir)).sort()).toEqual(['main.ts', 'manifest.toml', 'schema.json', 'tests']);
    expect(await readdir(join(dir, 'tests'))).toEqual(['birth.test.ts']);
    const manifest = parseManifest(await readFile(join(dir, 'manifest.toml'), 'utf8'), 'manifest.toml');
    expect(manifest.executor).toMatchObject({
      name: 'hello',
      version: '0.1.0',
      created_at: '2026-04-25T08:12:00.000Z',
    });

    await expect(signExecutor(dir, key)).resolves.toMatchObject({
      name: 'hello',
      version: '0.1.0',
      keyId: key.keyId,
    });
    await expect(verifyExecutor(dir, { trustedKeys: [key] })).resolves.toMatchObject({ name: 'hello' });

    const catalog = createCatalog({ root: parent, trustedKeys: [key] });
    expect((await catalog.load()).loaded).toHaveLength(1);
    const invoker = createInvoker({ catalog, runner });
    const options = { workspace: parent, caller: { kind: 'cli' as const } };
    expect(await invoker.invoke('hello', { name: 'Ada' }, options)).toMatchObject({
      ok: true,
      content: { greeting: 'Hello, Ada!' },
    });
    expect(await invoker.invoke('hello', { name: ' ' }, options)).toMatchObject({
      ok: false,
      error: { class: 'BadName' },
    });
    expect(await invoker.invoke('hello', { name: 'Ada', shout: true }, options)).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
  });

  it('keeps quotes in the summary and refuses a bad name or a folder that exists', async () => {
    const parent = await temp.make();
    const dir = await scaffoldExecutor({ parent, name: 'quoted', summary: 'Says "hi".' });
    expect(parseManifest(await readFile(join(dir, 'manifest.toml'), 'utf8'), 'm').executor.summary).toBe(
      'Says "hi".',
    );
    await expect(scaffoldExecutor({ parent, name: 'quoted' })).rejects.toMatchObject({ code: 'exists' });
    await expect(scaffoldExecutor({ parent, name: 'Bad-Name' })).rejects.toMatchObject({
      code: 'invalid_name',
    });
  });
});

describe('createBirthHarness', () => {
  it('verifies an executor folder and runs calls through the runner', async () => {
    const parent = await temp.make();
    const key = await generateSigningKey();
    const dir = await scaffoldExecutor({ parent, name: 'born' });
    await signExecutor(dir, key);
    const harness = createBirthHarness(dir, { runner, trustedKeys: [key] });
    expect(await harness.invoke({ name: 'Ada' })).toMatchObject({
      ok: true,
      content: { greeting: 'Hello, Ada!' },
    });
    const { name, workspace } = await harness.prepare();
    expect(name).toBe('born');
    const [day] = await readdir(join(workspace, '.audit', 'executors'));
    const audit = await readFile(join(workspace, '.audit', 'executors', day!), 'utf8');
    expect(JSON.parse(audit.trim().split('\n')[0]!)).toMatchObject({
      executor: 'born',
      caller: { kind: 'test' },
      exit: 'ok',
    });
  });

  it('refuses to run an executor that does not verify', async () => {
    const parent = await temp.make();
    const key = await generateSigningKey();
    const dir = await scaffoldExecutor({ parent, name: 'unborn' });
    await signExecutor(dir, key);
    await writeFile(
      join(dir, 'main.ts'),
      `${await readFile(join(dir, 'main.ts'), 'utf8')}\n// unsigned change\n`,
    );
    await expect(
      createBirthHarness(dir, { runner, trustedKeys: [key] }).invoke({ name: 'Ada' }),
    ).rejects.toMatchObject({
      reason: 'digest_mismatch',
      artefact: 'main.ts',
    });
  });

  it('tests the version in the folder it is given, in the versioned layout too', async () => {
    const root = await temp.make();
    const key = await generateSigningKey();
    const code = (greeting: string) => `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return ok({ greeting: '${greeting}' }); } });
`;
    const { dir: old } = await writeSignedExecutor({
      root,
      name: 'layered',
      version: '1.0.0',
      versioned: true,
      key,
      code: code('old'),
    });
    const { dir: next } = await writeSignedExecutor({
      root,
      name: 'layered',
      version: '2.0.0',
      versioned: true,
      key,
      code: code('new'),
    });
    await writeFile(join(root, 'layered', 'CURRENT'), '1.0.0\n');
    expect(await createBirthHarness(next, { runner, trustedKeys: [key] }).invoke({})).toMatchObject({
      ok: true,
      content: { greeting: 'new' },
    });
    expect(await createBirthHarness(old, { runner, trustedKeys: [key] }).invoke({})).toMatchObject({
      ok: true,
      content: { greeting: 'old' },
    });
  });

  it('trusts the keys of the user trust list by default', async () => {
    const configDir = await temp.config();
    const parent = await temp.make();
    const key = await createKeyStore({ configDir }).create('default');
    await createTrustStore({ configDir }).add(key);
    const dir = await scaffoldExecutor({ parent, name: 'trusted' });
    await signExecutor(dir, key);
    expect(await createBirthHarness(dir, { runner }).invoke({ name: 'Bo' })).toMatchObject({
      ok: true,
      content: { greeting: 'Hello, Bo!' },
    });
  });
});
