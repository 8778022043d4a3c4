import { cp, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFile, forgeSignature, useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { LifecycleError, VerificationError } from './errors.ts';
import { createInvoker } from './invoke.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';
import { createProcessRunner } from './runner.ts';
import { signExecutor } from './sign.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-catalog-');

async function world() {
  const root = await temp.make();
  const key = await generateSigningKey();
  const write = (
    name: string,
    options: { version?: string; versioned?: boolean; code?: string; key?: SigningKey } = {},
  ) => writeSignedExecutor({ root, name, key, ...options }).then((result) => result.dir);
  // The state folder these tests inspect; by default it lives in the user's state dir.
  const open = (settings: Partial<Parameters<typeof createCatalog>[0]> = {}) =>
    createCatalog({ root, trustedKeys: [key], stateDir: join(root, '.state'), ...settings });
  return { root, key, write, open };
}

async function listing(dir: string) {
  return (await readdir(dir)).sort();
}

describe('loading a catalog', () => {
  it('quarantines each broken executor with its reason, keeps it on disk, and still loads the rest', async () => {
    const { root, key, write, open } = await world();
    await write('alpha');
    await write('omega');
    const broken: Array<{
      name: string;
      reason: string;
      artefact?: string;
      message: RegExp;
      breakIt: (dir: string) => Promise<unknown>;
    }> = [
      {
        name: 'code_edited',
        reason: 'digest_mismatch',
        artefact: 'main.ts',
        message: /main\.ts .*modified after signing/,
        breakIt: (dir) => editFile(join(dir, 'main.ts'), (text) => `${text}// more\n`),
      },
      {
        name: 'summary_edited',
        reason: 'digest_mismatch',
        artefact: 'manifest.toml',
        message: /manifest\.toml .*modified/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) => text.replace('Test executor', 'Best executor')),
      },
      {
        name: 'schema_edited',
        reason: 'digest_mismatch',
        artefact: 'schema.json',
        message: /schema\.json .*modified/,
        breakIt: (dir) => editFile(join(dir, 'schema.json'), (text) => text.replace('"object"', '"array"')),
      },
      {
        name: 'lock_edited',
        reason: 'profile_lock_mismatch',
        artefact: 'profile.lock',
        message: /profile changed without re-signing/,
        breakIt: (dir) => writeFile(join(dir, 'profile.lock'), `blake3:${'0'.repeat(64)}\n`),
      },
      {
        name: 'sig_garbled',
        reason: 'signature_malformed',
        artefact: 'manifest.sig',
        message: /manifest\.sig/,
        breakIt: (dir) => writeFile(join(dir, 'manifest.sig'), '{"v": 1}'),
      },
      {
        name: 'forged',
        reason: 'signature_invalid',
        artefact: 'manifest.sig',
        message: /forged or corrupted/,
        breakIt: (dir) => forgeSignature(dir, key),
      },
      {
        name: 'stranger',
        reason: 'untrusted_key',
        artefact: 'manifest.sig',
        message: /not a trusted key/,
        breakIt: async (dir) => signExecutor(dir, await generateSigningKey()),
      },
      {
        name: 'profile_widened',
        reason: 'profile_lock_mismatch',
        artefact: 'manifest.toml',
        message: /without re-signing/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) => text.replace('write = []', 'write = ["$HOME"]')),
      },
      {
        name: 'toml_syntax',
        reason: 'manifest_invalid',
        artefact: 'manifest.toml',
        message: /manifest\.toml: field "\(syntax, line \d+\)": expected valid TOML/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) => text.replace('[contract]', '[contract')),
      },
      {
        name: 'field_missing',
        reason: 'manifest_invalid',
        artefact: 'manifest.toml',
        message: /manifest\.toml: field "executor\.summary": expected a value of type string/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) => text.replace(/^summary = .*\n/m, '')),
      },
      {
        name: 'wrong_type',
        reason: 'manifest_invalid',
        artefact: 'manifest.toml',
        message: /field "sandbox\.max_memory_mb": expected a value of type number/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) =>
            text.replace('max_memory_mb = 128', 'max_memory_mb = "lots"'),
          ),
      },
      {
        name: 'unknown_key',
        reason: 'manifest_invalid',
        artefact: 'manifest.toml',
        message: /field "contract": expected no unknown keys \(found retries\)/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) =>
            text.replace('idempotent = true', 'idempotent = true\nretries = 3'),
          ),
      },
      {
        name: 'bad_semver',
        reason: 'manifest_invalid',
        artefact: 'manifest.toml',
        message: /field "executor\.version": expected a semantic version such as "1\.0\.0"/,
        breakIt: (dir) =>
          editFile(join(dir, 'manifest.toml'), (text) => text.replace('version = "1.0.0"', 'version = "v1"')),
      },
      {
        name: 'bad_schema',
        reason: 'schema_invalid',
        artefact: 'schema.json',
        message: /does not support: \/definitions\/Input\/if/,
        breakIt: (dir) =>
          writeFile(
            join(dir, 'schema.json'),
            JSON.stringify({ definitions: { Input: { if: {} }, Output: {} } }),
          ),
      },
      {
        name: 'code_missing',
        reason: 'missing_artefact',
        artefact: 'main.ts',
        message: /main\.ts is missing/,
        breakIt: (dir) => rm(join(dir, 'main.ts')),
      },
      {
        name: 'sig_missing',
        reason: 'missing_artefact',
        artefact: 'manifest.sig',
        message: /manifest\.sig is missing/,
        breakIt: (dir) => rm(join(dir, 'manifest.sig')),
      },
      {
        name: 'manifest_missing',
        reason: 'missing_artefact',
        artefact: 'manifest.toml',
        message: /manifest\.toml is missing/,
        breakIt: (dir) => rm(join(dir, 'manifest.toml')),
      },
      {
        name: 'renamed',
        reason: 'name_mismatch',
        artefact: 'manifest.toml',
        message: /manifest names "moved" but the folder is "renamed"/,
        breakIt: async (dir) => {
          await rm(dir, { recursive: true });
          await cp(await write('moved'), dir, { recursive: true });
          await rm(join(root, 'moved'), { recursive: true });
        },
      },
    ];
    const before = new Map<string, string[]>();
    for (const entry of broken) {
      const dir = await write(entry.name);
      await entry.breakIt(dir);
      before.set(entry.name, await listing(dir));
    }
    // Things in the folder that are not executors at all.
    await writeFile(join(root, 'README.md'), '# my executors\n');
    await mkdir(join(root, 'empty'));
    await mkdir(join(root, '.git'));

    const catalog = open();
    const report = await catalog.load();
    expect(report.loaded.map((executor) => executor.name).sort()).toEqual(['alpha', 'omega']);
    expect(catalog.executors().map((executor) => executor.name)).toEqual(['alpha', 'omega']);

    for (const entry of broken) {
      const quarantined = report.quarantined.filter((candidate) => candidate.name === entry.name);
      expect([entry.name, quarantined.length]).toEqual([entry.name, 1]);
      expect([entry.name, quarantined[0]]).toEqual([
        entry.name,
        expect.objectContaining({
          reason: entry.reason,
          artefact: entry.artefact,
          message: expect.stringMatching(entry.message),
        }),
      ]);
      expect(catalog.get(entry.name)).toBeUndefined();
      const row = catalog.list().find((candidate) => candidate.name === entry.name);
      expect([entry.name, row]).toEqual([
        entry.name,
        expect.objectContaining({ state: 'quarantined', current: false, reason: quarantined[0]!.message }),
      ]);
      // Never deleted, never touched.
      expect([entry.name, await listing(join(root, entry.name))]).toEqual([
        entry.name,
        before.get(entry.name),
      ]);
    }
    expect(
      catalog
        .list()
        .filter((row) => row.state !== 'quarantined')
        .map((row) => [row.name, row.state]),
    ).toEqual([
      ['alpha', 'active'],
      ['omega', 'active'],
    ]);

    // A second load of the same folder gives the same answer.
    const again = await catalog.load();
    expect(again.loaded.map((executor) => executor.name).sort()).toEqual(['alpha', 'omega']);
    expect(again.quarantined.map((entry) => entry.reason).sort()).toEqual(
      report.quarantined.map((entry) => entry.reason).sort(),
    );
  });

  it('records first sightings in the lifecycle file: seeds become active, broken ones quarantined with their signature', async () => {
    const { root, write, open } = await world();
    await write('good');
    const bad = await write('bad');
    await editFile(join(bad, 'main.ts'), (text) => `${text}\n`);
    await open().load();
    const lifecycle = JSON.parse(await readFile(join(root, '.state', 'lifecycle.json'), 'utf8'));
    expect(lifecycle.executors['good@1.0.0']).toMatchObject({ state: 'active' });
    expect(lifecycle.executors['good@1.0.0'].history.map((entry: { to: string }) => entry.to)).toEqual([
      'seed',
      'active',
    ]);
    const signature = JSON.parse(await readFile(join(bad, 'manifest.sig'), 'utf8')).signature;
    expect(lifecycle.executors['bad@1.0.0']).toMatchObject({ state: 'quarantined', signature });
    const ledger = JSON.parse(await readFile(join(root, '.state', 'ledger.json'), 'utf8'));
    expect(ledger.executors.good).toMatchObject({ highest: '1.0.0' });
    expect(ledger.executors.bad).toBeUndefined();
  });

  it('keeps a quarantined version in quarantine when the same signature reappears, and lets it out with a new one', async () => {
    const { write, open, key } = await world();
    const dir = await write('flaky');
    const original = await readFile(join(dir, 'main.ts'), 'utf8');
    const catalog = open();
    expect((await catalog.load()).loaded).toHaveLength(1);

    await writeFile(join(dir, 'main.ts'), `${original}// injected\n`);
    expect((await catalog.load()).quarantined).toEqual([
      expect.objectContaining({ name: 'flaky', reason: 'digest_mismatch' }),
    ]);

    // The original bytes come back: the signature is the one that was quarantined, so it stays there.
    await writeFile(join(dir, 'main.ts'), original);
    const same = await catalog.load();
    expect(same.loaded).toEqual([]);
    expect(same.quarantined).toEqual([
      expect.objectContaining({ name: 'flaky', message: expect.stringMatching(/stays quarantined/) }),
    ]);
    expect(catalog.list()).toEqual([expect.objectContaining({ name: 'flaky', state: 'quarantined' })]);
    // Boot after boot the reason stays the original one; it does not wrap itself again each time.
    const reason = catalog.list()[0]!.reason;
    await catalog.load();
    await catalog.load();
    expect(catalog.list()[0]!.reason).toBe(reason);
    expect((await catalog.lifecycle()).get('flaky@1.0.0')!.reason).toMatch(/modified after signing/);

    // A reviewed change, signed again: a new signature, so the version leaves quarantine.
    await writeFile(join(dir, 'main.ts'), `${original}// reviewed\n`);
    await signExecutor(dir, key);
    const fresh = await catalog.load();
    expect(fresh.quarantined).toEqual([]);
    expect(fresh.loaded.map((executor) => executor.name)).toEqual(['flaky']);
    expect(catalog.list()).toEqual([expect.objectContaining({ name: 'flaky', state: 'active' })]);
    const history = (await catalog.lifecycle()).get('flaky@1.0.0')!.history.map((entry) => entry.to);
    expect(history).toEqual(['seed', 'active', 'quarantined', 'active']);
  });

  it('rehabilitate() lets a quarantined version out after it verifies again', async () => {
    const { write, open } = await world();
    const dir = await write('repaired');
    const original = await readFile(join(dir, 'main.ts'), 'utf8');
    const catalog = open();
    await catalog.load();
    await writeFile(join(dir, 'main.ts'), `${original}// oops\n`);
    await catalog.load();
    await expect(catalog.rehabilitate('repaired', '1.0.0')).rejects.toMatchObject({
      reason: 'digest_mismatch',
    });
    expect(catalog.get('repaired')).toBeUndefined();

    await writeFile(join(dir, 'main.ts'), original);
    await expect(catalog.rehabilitate('repaired', '1.0.0')).resolves.toMatchObject({ name: 'repaired' });
    expect(catalog.get('repaired')).toBeDefined();
    expect(catalog.list()).toEqual([expect.objectContaining({ name: 'repaired', state: 'active' })]);
  });

  it('quarantines a version the ager or the synt had moved on (below threshold, fused) when it gets tampered', async () => {
    const { root, write, open } = await world();
    const aged = await write('aged');
    const merged = await write('merged');
    await write('steady');
    const catalog = open();
    await catalog.load();
    const lifecycle = await catalog.lifecycle();
    lifecycle.transition('aged@1.0.0', 'below_threshold', 'unused for 90 days');
    lifecycle.transition('merged@1.0.0', 'fused', 'merged into steady');
    await lifecycle.save();

    await editFile(join(aged, 'main.ts'), (text) => `${text}// tampered\n`);
    await editFile(join(merged, 'main.ts'), (text) => `${text}// tampered\n`);
    const next = open();
    const report = await next.load();
    expect(report.loaded.map((executor) => executor.name)).toEqual(['steady']);
    expect(report.quarantined.map((entry) => entry.name).sort()).toEqual(['aged', 'merged']);
    const states = JSON.parse(await readFile(join(root, '.state', 'lifecycle.json'), 'utf8')).executors;
    expect(states['aged@1.0.0'].state).toBe('quarantined');
    expect(states['merged@1.0.0'].state).toBe('quarantined');
  });

  it('refuses to load over a ledger it cannot read, rather than lose rollback protection', async () => {
    const { root, write, open } = await world();
    await write('one');
    await mkdir(join(root, '.state'));
    await writeFile(join(root, '.state', 'ledger.json'), '{"version": 1, "executors": ');
    await expect(open().load()).rejects.toThrow(LifecycleError);
    await writeFile(join(root, '.state', 'ledger.json'), '{"version": 2}');
    await expect(open().load()).rejects.toThrow(/refusing to load without rollback protection/);
  });

  it('ignores temp files a kill -9 left behind beside the state files and the executors', async () => {
    const { root, write, open } = await world();
    await write('kept', { versioned: true });
    await writeFile(join(root, 'kept', 'CURRENT'), '1.0.0\n');
    const catalog = open();
    await catalog.load();
    const ledger = await readFile(join(root, '.state', 'ledger.json'), 'utf8');
    const lifecycle = await readFile(join(root, '.state', 'lifecycle.json'), 'utf8');

    // Half-written temp files from interrupted atomic writes.
    await writeFile(
      join(root, '.state', `ledger.json.4242.${Date.now()}.tmp`),
      ledger.slice(0, ledger.length / 2),
    );
    await writeFile(join(root, '.state', `lifecycle.json.4242.${Date.now()}.tmp`), lifecycle.slice(0, 10));
    await writeFile(join(root, 'kept', `CURRENT.4242.${Date.now()}.tmp`), '0.');
    await writeFile(join(root, 'kept', '1.0.0', `manifest.sig.4242.${Date.now()}.tmp`), '{');

    const reopened = open();
    const report = await reopened.load();
    expect(report.quarantined).toEqual([]);
    expect(reopened.get('kept')).toMatchObject({ version: '1.0.0' });
    expect(JSON.parse(await readFile(join(root, '.state', 'ledger.json'), 'utf8'))).toEqual(
      JSON.parse(ledger),
    );
    expect(reopened.list()).toEqual([
      expect.objectContaining({ name: 'kept', state: 'active', current: true }),
    ]);
  });

  it('"check" mode reads the ledger but never writes state', async () => {
    const { root, write, open } = await world();
    await write('watch');
    const report = await open({ ledger: 'check' }).load();
    expect(report.loaded).toHaveLength(1);
    await expect(stat(join(root, '.state'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps its state where stateDir says', async () => {
    const { root, write, open } = await world();
    const stateDir = await temp.make();
    await write('elsewhere');
    await open({ stateDir }).load();
    expect(await listing(stateDir)).toEqual(['ledger.json', 'lifecycle.json']);
    await expect(stat(join(root, '.state'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('versions and rollback', () => {
  it('loads several versions side by side; CURRENT names the default and the others stay reachable', async () => {
    const { root, write, open } = await world();
    await write('multi', { version: '1.0.0', versioned: true });
    await write('multi', { version: '1.1.0', versioned: true });
    await write('multi', { version: '2.0.0', versioned: true });
    await writeFile(join(root, 'multi', 'CURRENT'), '1.1.0\n');

    const catalog = open();
    const report = await catalog.load();
    expect(report.quarantined).toEqual([]);
    expect(report.loaded.map((executor) => executor.version).sort()).toEqual(['1.0.0', '1.1.0', '2.0.0']);
    expect(catalog.get('multi')?.version).toBe('1.1.0');
    expect(catalog.get('multi', '2.0.0')?.dir).toBe(join(root, 'multi', '2.0.0'));
    expect(catalog.get('multi', '1.0.0')?.version).toBe('1.0.0');
    expect(catalog.executors().map((executor) => `${executor.name}@${executor.version}`)).toEqual([
      'multi@1.1.0',
    ]);
    expect(catalog.list().map((row) => [row.version, row.state, row.current])).toEqual([
      ['2.0.0', 'active', false],
      ['1.1.0', 'active', true],
      ['1.0.0', 'active', false],
    ]);

    // The same folder loads the same way next time.
    const again = open();
    expect((await again.load()).quarantined).toEqual([]);
    expect(again.get('multi')?.version).toBe('1.1.0');
  });

  // Every folder is read as a flat executor first; the versioned ones are found by their failure.
  it.each([
    { label: 'a few folders', flat: 3 },
    { label: 'enough folders for the signature thread', flat: 70 },
  ])(
    'reads flat and versioned executors side by side, with $label, and reports only folders that hold one',
    async ({ flat }) => {
      const { root, write, open } = await world();
      // written out of order: the report follows the folders' paths
      const names = Array.from(
        { length: flat },
        (_, index) => `flat_${String(flat - index).padStart(3, '0')}`,
      );
      for (const name of names) await write(name);
      await write('a_versioned', { version: '1.0.0', versioned: true });
      await write('a_versioned', { version: '2.0.0', versioned: true });
      await writeFile(join(root, 'a_versioned', 'CURRENT'), '1.0.0\n');
      const tampered = await write('a_versioned', { version: '3.0.0', versioned: true });
      await editFile(join(tampered, 'main.ts'), (text) => `${text}// more\n`);
      // flat executors that lost their manifest: quarantined, not skipped
      const lost = ['lost_e', 'lost_b', 'lost_d', 'lost_a', 'lost_c'];
      for (const name of lost) await rm(join(await write(name), 'manifest.toml'));
      // a flat executor never signed: quarantined for its missing signature, as flat
      const unsigned = join(root, 'unsigned');
      await mkdir(unsigned);
      await writeFile(join(unsigned, 'manifest.toml'), '[executor]\nname = "unsigned"\n');
      await writeFile(join(unsigned, 'main.ts'), 'export default {};\n');
      // folders without an executor: not reported
      await mkdir(join(root, 'notes'));
      await writeFile(join(root, 'notes', 'README.md'), 'not an executor\n');
      await mkdir(join(root, 'empty'));

      const catalog = open();
      const report = await catalog.load();
      // in the order of their folders' paths
      expect(report.quarantined.map((entry) => [entry.name, entry.reason, entry.artefact])).toEqual([
        ['a_versioned', 'digest_mismatch', 'main.ts'],
        ...lost.sort().map((name) => [name, 'missing_artefact', 'manifest.toml']),
        ['unsigned', expect.any(String), expect.any(String)],
      ]);
      expect(report.loaded).toHaveLength(flat + 2);
      expect(catalog.get('a_versioned')?.version).toBe('1.0.0');
      expect(catalog.get('a_versioned', '2.0.0')?.dir).toBe(join(root, 'a_versioned', '2.0.0'));
      expect(catalog.executors().map((executor) => executor.name)).toEqual(['a_versioned', ...names.sort()]);
      // newest versions first, then in the order of the folders' paths
      expect(report.loaded.map((executor) => `${executor.name}@${executor.version}`)).toEqual([
        'a_versioned@2.0.0',
        'a_versioned@1.0.0',
        ...names.map((name) => `${name}@1.0.0`),
      ]);
      expect(catalog.get('notes')).toBeUndefined();
    },
  );

  it('refuses a versioned executor whose CURRENT is missing or names a version that is not loaded', async () => {
    const { root, write, open } = await world();
    await write('nocurrent', { version: '1.0.0', versioned: true });
    await write('dangling', { version: '1.0.0', versioned: true });
    await writeFile(join(root, 'dangling', 'CURRENT'), '3.0.0\n');
    const catalog = open();
    const report = await catalog.load();
    expect(report.quarantined.map((entry) => [entry.name, entry.reason, entry.artefact])).toEqual(
      expect.arrayContaining([
        ['nocurrent', 'current_invalid', 'CURRENT'],
        ['dangling', 'current_invalid', 'CURRENT'],
      ]),
    );
    expect(catalog.get('nocurrent')).toBeUndefined();
    expect(catalog.get('dangling')).toBeUndefined();
    expect(catalog.get('dangling', '1.0.0')).toBeDefined();
  });

  it('refuses a freshly signed lower version as a rollback once a higher one was accepted', async () => {
    const { root, write, open } = await world();
    await write('climb', { version: '2.0.0', versioned: true });
    await writeFile(join(root, 'climb', 'CURRENT'), '2.0.0\n');
    expect((await open().load()).quarantined).toEqual([]);

    await write('climb', { version: '1.5.0', versioned: true });
    const catalog = open();
    const report = await catalog.load();
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        name: 'climb',
        version: '1.5.0',
        reason: 'rollback',
        message: expect.stringMatching(/lower than 2\.0\.0/),
      }),
    ]);
    expect(catalog.get('climb', '1.5.0')).toBeUndefined();
    expect(catalog.get('climb')?.version).toBe('2.0.0');
    expect(catalog.list().find((row) => row.version === '1.5.0')).toMatchObject({ state: 'quarantined' });
    await expect(stat(join(root, 'climb', '1.5.0', 'manifest.sig'))).resolves.toBeDefined();
  });

  it('refuses a rollback in place in the single-version layout, and between pre-releases', async () => {
    const { write, open } = await world();
    await write('flat', { version: '2.0.0' });
    await write('pre', { version: '1.0.0-rc.10' });
    expect((await open().load()).quarantined).toEqual([]);

    await write('flat', { version: '1.5.0' });
    await write('pre', { version: '1.0.0-rc.2' });
    const catalog = open();
    const report = await catalog.load();
    expect(report.quarantined.map((entry) => [entry.name, entry.version, entry.reason]).sort()).toEqual([
      ['flat', '1.5.0', 'rollback'],
      ['pre', '1.0.0-rc.2', 'rollback'],
    ]);
    expect(catalog.get('flat')).toBeUndefined();
  });

  it('refuses CURRENT moved back by hand, and promote() does it deliberately', async () => {
    const { root, write, open } = await world();
    await write('steer', { version: '1.0.0', versioned: true });
    await write('steer', { version: '2.0.0', versioned: true });
    await writeFile(join(root, 'steer', 'CURRENT'), '2.0.0\n');
    expect((await open().load()).quarantined).toEqual([]);

    await writeFile(join(root, 'steer', 'CURRENT'), '1.0.0\n');
    const catalog = open();
    const report = await catalog.load();
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        name: 'steer',
        reason: 'rollback',
        artefact: 'CURRENT',
        message: expect.stringMatching(/moved back from 2\.0\.0 to 1\.0\.0/),
      }),
    ]);
    expect(catalog.get('steer')).toBeUndefined();
    const invoker = createInvoker({ catalog, runner: createProcessRunner() });
    await expect(
      invoker.invoke('steer', {}, { workspace: root, caller: { kind: 'test' } }),
    ).resolves.toMatchObject({
      ok: false,
      error: { class: 'NotInvocable' },
    });

    await catalog.promote('steer', '1.0.0');
    expect(catalog.get('steer')?.version).toBe('1.0.0');
    expect(catalog.quarantined()).toEqual([]);
    expect(catalog.list().find((row) => row.version === '1.0.0')).toMatchObject({
      state: 'active',
      current: true,
      reason: 'signature verified',
    });
    expect((await readFile(join(root, 'steer', 'CURRENT'), 'utf8')).trim()).toBe('1.0.0');
    const later = open();
    expect((await later.load()).quarantined).toEqual([]);
    expect(later.get('steer')?.version).toBe('1.0.0');

    // Moving forward again needs nothing special.
    await writeFile(join(root, 'steer', 'CURRENT'), '2.0.0\n');
    const forward = open();
    expect((await forward.load()).quarantined).toEqual([]);
    expect(forward.get('steer')?.version).toBe('2.0.0');
  });

  it('promote() refuses a version that is not loaded and the single-version layout', async () => {
    const { write, open } = await world();
    await write('single');
    const catalog = open();
    await catalog.load();
    await expect(catalog.promote('single', '9.9.9')).rejects.toThrow(LifecycleError);
    await expect(catalog.promote('single', '1.0.0')).rejects.toThrow(/single-version layout/);
  });
});

describe('re-verification before a call', () => {
  it('returns the same object while the files are unchanged, and verifies again when they are touched', async () => {
    const { write, open } = await world();
    const dir = await write('steady');
    const catalog = open();
    await catalog.load();
    const executor = catalog.get('steady')!;
    expect(await catalog.reverify(executor)).toBe(executor);
    expect(await catalog.reverify(executor)).toBe(executor);

    // Same bytes, new timestamps: a full check, which passes.
    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, 'main.ts'), later, later);
    const fresh = await catalog.reverify(executor);
    expect(fresh).not.toBe(executor);
    expect(fresh).toMatchObject({ name: 'steady', digests: executor.digests });
    expect(await catalog.reverify(fresh)).toBe(fresh);
  });

  it('quarantines a version whose file changed since loading, and the invoker refuses it', async () => {
    const { root, write, open } = await world();
    const dir = await write('changed');
    await write('bystander');
    const catalog = open();
    await catalog.load();
    const executor = catalog.get('changed')!;
    await editFile(join(dir, 'main.ts'), (text) =>
      text.replace('echo: args', 'echo: args, leaked: process.env'),
    );

    const error = await catalog.reverify(executor).catch((caught: unknown) => caught);
    expect(VerificationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'digest_mismatch', artefact: 'main.ts' });
    expect(catalog.get('changed')).toBeUndefined();
    expect(catalog.quarantined()).toEqual([
      expect.objectContaining({ name: 'changed', reason: 'digest_mismatch' }),
    ]);
    expect(catalog.list().map((row) => [row.name, row.state])).toEqual([
      ['bystander', 'active'],
      ['changed', 'quarantined'],
    ]);
    const saved = JSON.parse(await readFile(join(root, '.state', 'lifecycle.json'), 'utf8'));
    expect(saved.executors['changed@1.0.0'].state).toBe('quarantined');

    const invoker = createInvoker({ catalog, runner: createProcessRunner() });
    const result = await invoker.invoke('changed', {}, { workspace: root, caller: { kind: 'test' } });
    expect(result).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });

    // A stale handle, as a caller that looked the executor up before the change would hold.
    const viaStale = await createInvoker({
      catalog: { ...catalog, get: () => executor },
      runner: createProcessRunner(),
    }).invoke('changed', {}, { workspace: root, caller: { kind: 'test' } });
    expect(viaStale).toMatchObject({
      ok: false,
      error: { class: 'NotInvocable', message: expect.stringMatching(/main\.ts/) },
    });
  });

  it('quarantines several changed executors at once, each with its own reason', async () => {
    const { root, write, open } = await world();
    const names = Array.from({ length: 8 }, (_, index) => `parallel_${index}`);
    for (const name of names) await write(name);
    const catalog = open();
    await catalog.load();
    const executors = names.map((name) => catalog.get(name)!);
    for (const name of names) await editFile(join(root, name, 'main.ts'), (text) => `${text}// ${name}\n`);
    const errors = await Promise.all(
      executors.map((executor) => catalog.reverify(executor).catch((error: unknown) => error)),
    );
    for (const error of errors)
      expect(error).toMatchObject({ name: 'VerificationError', reason: 'digest_mismatch' });
    const saved = JSON.parse(await readFile(join(root, '.state', 'lifecycle.json'), 'utf8'));
    for (const name of names) expect(saved.executors[`${name}@1.0.0`].state).toBe('quarantined');
  });
});

describe('archive and rehabilitation', () => {
  it('archive() moves the folder to .archive and rehabilitate() brings it back verified', async () => {
    const { root, write, open } = await world();
    await write('retired');
    await write('other');
    const catalog = open();
    await catalog.load();
    const files = await listing(join(root, 'retired'));

    expect(await catalog.archive('retired', undefined, 'not used since March')).toEqual(['retired@1.0.0']);
    await expect(stat(join(root, 'retired'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await listing(join(root, '.archive', 'retired', '1.0.0'))).toEqual(files);
    expect(catalog.get('retired')).toBeUndefined();
    expect(catalog.list().find((row) => row.name === 'retired')).toMatchObject({
      state: 'archived',
      reason: 'not used since March',
    });

    // Still archived after a restart.
    const restarted = open();
    await restarted.load();
    expect(restarted.get('retired')).toBeUndefined();
    expect(restarted.list().map((row) => [row.name, row.state])).toEqual([
      ['other', 'active'],
      ['retired', 'archived'],
    ]);

    const back = await restarted.rehabilitate('retired', '1.0.0');
    expect(back.dir).toBe(join(root, 'retired'));
    expect(await listing(join(root, 'retired'))).toEqual(files);
    await expect(stat(join(root, '.archive', 'retired', '1.0.0'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(restarted.get('retired')).toMatchObject({ version: '1.0.0' });
    expect(restarted.list().find((row) => row.name === 'retired')).toMatchObject({ state: 'active' });
  });

  it('archives one version of several and brings it back to its versioned folder', async () => {
    const { root, write, open } = await world();
    await write('layers', { version: '1.0.0', versioned: true });
    await write('layers', { version: '2.0.0', versioned: true });
    await writeFile(join(root, 'layers', 'CURRENT'), '2.0.0\n');
    const catalog = open();
    await catalog.load();
    await catalog.archive('layers', '1.0.0');
    expect(await listing(join(root, 'layers'))).toEqual(['2.0.0', 'CURRENT']);
    expect(catalog.get('layers')?.version).toBe('2.0.0');
    await catalog.rehabilitate('layers', '1.0.0');
    expect(catalog.get('layers', '1.0.0')?.dir).toBe(join(root, 'layers', '1.0.0'));
    expect(catalog.get('layers')?.version).toBe('2.0.0');
  });

  it('leaves an archived copy that no longer verifies in quarantine when it is rehabilitated', async () => {
    const { root, write, open } = await world();
    await write('spoiled');
    const catalog = open();
    await catalog.load();
    await catalog.archive('spoiled');
    await editFile(
      join(root, '.archive', 'spoiled', '1.0.0', 'main.ts'),
      (text) => `${text}// spoiled in the archive\n`,
    );

    const error = await catalog.rehabilitate('spoiled', '1.0.0').catch((caught: unknown) => caught);
    expect(VerificationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'digest_mismatch', artefact: 'main.ts' });
    expect(catalog.get('spoiled')).toBeUndefined();
    expect((await catalog.lifecycle()).get('spoiled@1.0.0')?.state).toBe('quarantined');
    const restarted = open();
    await restarted.load();
    expect(restarted.list()).toEqual([expect.objectContaining({ name: 'spoiled', state: 'quarantined' })]);
    await expect(stat(join(root, 'spoiled', 'main.ts'))).resolves.toBeDefined();
  });

  it('archives a quarantined version too, and refuses what it does not know', async () => {
    const { root, write, open } = await world();
    const dir = await write('doomed');
    await editFile(join(dir, 'main.ts'), (text) => `${text}\n`);
    const catalog = open();
    await catalog.load();
    expect(await catalog.archive('doomed')).toEqual(['doomed@1.0.0']);
    expect(await listing(join(root, '.archive', 'doomed'))).toEqual(['1.0.0']);
    expect(catalog.list()).toEqual([expect.objectContaining({ name: 'doomed', state: 'archived' })]);

    await expect(catalog.archive('nobody')).rejects.toThrow(LifecycleError);
    await write('alive');
    await catalog.load();
    await expect(catalog.rehabilitate('alive', '1.0.0')).rejects.toThrow(/not archived or quarantined/);
  });
});

describe('a failure of Metnos itself while loading', () => {
  it('reports the version for this load but does not keep it quarantined once the fault is gone', async () => {
    const { key, write, open } = await world();
    await write('alpha');
    // A trust list that throws when read stands for any internal fault (a bug, a missing module).
    const broken = {
      get keyId(): string {
        throw new Error('internal fault');
      },
      publicKey: key.publicKey,
    };
    const faulty = await open({ trustedKeys: [broken] }).load();
    expect(faulty.loaded).toHaveLength(0);
    expect(faulty.quarantined[0]?.message).toMatch(/unexpected failure while verifying: internal fault/);

    const healthy = await open().load();
    expect(healthy.quarantined).toEqual([]);
    expect(healthy.loaded.map((executor) => executor.name)).toEqual(['alpha']);
  });
});
