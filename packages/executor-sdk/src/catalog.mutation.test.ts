import { appendFile, cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFile, useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { LifecycleError } from './errors.ts';
import { generateSigningKey } from './keys.ts';
import { signExecutor } from './sign.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-catalog-mutation-');

async function world() {
  const root = await temp.make('executors-');
  const stateDir = await temp.make('state-');
  const key = await generateSigningKey();
  /** Writes and signs `name` in its own folder (`<root>/<name>/`) or, with `versioned`, `<root>/<name>/<version>/`. */
  const writeAs = (name: string, options: { version?: string; versioned?: boolean } = {}) =>
    writeSignedExecutor({ root, name, key, ...options }).then((result) => result.dir);
  const write = (version: string) => writeAs('tool', { version, versioned: true });
  const current = (version: string) => writeFile(join(root, 'tool', 'CURRENT'), `${version}\n`);
  const open = () => createCatalog({ root, trustedKeys: [key], stateDir });
  const state = async (file: 'ledger.json' | 'lifecycle.json') =>
    JSON.parse(await readFile(join(stateDir, file), 'utf8'));
  return { root, stateDir, key, writeAs, write, current, open, state };
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error instanceof Error) return error;
  throw new Error('nothing was refused');
}

/** The Ed25519 signature a folder's `manifest.sig` carries. */
async function signatureOf(dir: string): Promise<string> {
  return JSON.parse(await readFile(join(dir, 'manifest.sig'), 'utf8')).signature;
}

const versions = (executors: ReadonlyArray<{ version: string }>) =>
  executors.map((executor) => executor.version);

describe('a catalog before its first load', () => {
  it('names the two folders no executor may write, and knows of no version yet', async () => {
    const { root, stateDir, open } = await world();
    const catalog = open();
    expect(catalog.protectedPaths()).toEqual([
      { path: root, why: 'the executors folder Metnos loads' },
      { path: stateDir, why: "the executors' version ledger and lifecycle state" },
    ]);
    expect(catalog.quarantined()).toEqual([]);
    expect(catalog.list()).toEqual([]);
  });
});

describe('the version ledger', () => {
  it('raises the highest version only for a strictly higher one, and lists versions newest first', async () => {
    const { root, write, current, open, state } = await world();
    await write('1.0.0');
    await write('2.0.0');
    await write('10.0.0');
    await current('2.0.0');
    const first = await open().load();
    expect(first.quarantined).toEqual([]);
    expect(versions(first.loaded)).toEqual(['10.0.0', '2.0.0', '1.0.0']);
    const signatures = Object.fromEntries(
      await Promise.all(
        ['1.0.0', '2.0.0', '10.0.0'].map(async (version) => [
          version,
          await signatureOf(join(root, 'tool', version)),
        ]),
      ),
    );
    expect(await state('ledger.json')).toEqual({
      version: 1,
      executors: { tool: { highest: '10.0.0', current: '2.0.0', accepted: signatures } },
    });

    await write('11.0.0');
    await open().load();
    expect((await state('ledger.json')).executors.tool.highest).toBe('11.0.0');
  });

  it('counts two builds of one version as that version: the first seen stays the highest, with or without the ledger', async () => {
    const { root, stateDir, write, current, open, state } = await world();
    await write('1.0.0+a');
    await current('1.0.0+a');
    await open().load();
    await write('1.0.0+b');
    const both = await open().load();
    expect(both.quarantined).toEqual([]);
    expect(versions(both.loaded).sort()).toEqual(['1.0.0+a', '1.0.0+b']);
    expect((await state('ledger.json')).executors.tool.highest).toBe('1.0.0+a');

    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '1.0.0+a'), { recursive: true });
    await rm(join(root, 'tool', '1.0.0+b'), { recursive: true });
    await write('0.9.0');
    await current('0.9.0');
    expect((await open().load()).quarantined).toEqual([
      expect.objectContaining({
        version: '0.9.0',
        reason: 'rollback',
        message: expect.stringMatching(
          /^tool@0\.9\.0 is lower than 1\.0\.0\+a, which Metnos has seen before/,
        ),
      }),
    ]);
  });

  it('still refuses rollbacks with a ledger that carries fields a later Metnos added', async () => {
    const { stateDir, writeAs, open } = await world();
    await writeAs('tool', { version: '1.0.0' });
    await writeFile(
      join(stateDir, 'ledger.json'),
      JSON.stringify({
        version: 1,
        executors: { tool: { highest: '2.0.0', accepted: {}, pinned_by: 'someone' } },
      }),
    );
    const report = await open().load();
    expect(report.loaded).toEqual([]);
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        name: 'tool',
        version: '1.0.0',
        reason: 'rollback',
        artefact: 'manifest.toml',
        message: 'tool@1.0.0 is lower than 2.0.0, already accepted: rollback refused',
      }),
    ]);
  });
});

describe('rollback protection without a ledger', () => {
  it('refuses a lower version than the lifecycle remembers, saying the ledger is missing and how to accept it', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('2.0.0');
    expect((await open().load()).loaded.map((executor) => executor.version)).toEqual(['2.0.0']);
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await write('1.0.0');
    await current('1.0.0');
    const report = await open().load();
    expect(report.loaded).toEqual([]);
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        name: 'tool',
        version: '1.0.0',
        reason: 'rollback',
        artefact: 'manifest.toml',
        message: `tool@1.0.0 is lower than 2.0.0, which Metnos has seen before, and the version ledger ${join(stateDir, 'ledger.json')} is missing: refused as a possible rollback (restore the ledger, or accept this version with \`metnos executor rehabilitate tool 1.0.0\`)`,
      }),
    ]);
  });

  it('accepts a lower version the lifecycle saw active, and remembers the highest of several', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('1.0.0');
    await write('1.5.0');
    await write('2.0.0');
    await current('2.0.0');
    expect((await open().load()).loaded).toHaveLength(3);
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await current('1.0.0');
    const report = await open().load();
    expect(report.quarantined).toEqual([]);
    expect(report.loaded.map((executor) => executor.version).sort()).toEqual(['1.0.0', '1.5.0']);
  });

  it('does not count a quarantined version as seen active', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('1.0.0');
    await write('2.0.0');
    await current('2.0.0');
    expect((await open().load()).loaded).toHaveLength(2);
    // break 1.0.0 so it is quarantined, then drop the ledger and 2.0.0
    await writeFile(join(root, 'tool', '1.0.0', 'main.ts'), 'export {};\n');
    expect((await open().load()).quarantined.map((entry) => entry.version)).toEqual(['1.0.0']);
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await rm(join(root, 'tool', '1.0.0'), { recursive: true });
    await write('1.0.0');
    await current('1.0.0');
    const report = await open().load();
    expect(report.quarantined.map((entry) => [entry.version, entry.reason])).toEqual([['1.0.0', 'rollback']]);
  });

  it('reads the highest versions a ledger in the old place remembers', async () => {
    const { root, write, current, open } = await world();
    await mkdir(join(root, '.state'), { recursive: true });
    await writeFile(
      join(root, '.state', 'ledger.json'),
      JSON.stringify({ version: 1, executors: { tool: { highest: '3.0.0', accepted: { '3.0.0': 'x' } } } }),
    );
    await write('2.0.0');
    await current('2.0.0');
    const report = await open().load();
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        version: '2.0.0',
        reason: 'rollback',
        message: expect.stringContaining('lower than 3.0.0'),
      }),
    ]);
  });

  it('takes the highest version the lifecycle saw, in whatever order it saw them', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('1.0.0');
    await current('1.0.0');
    await open().load();
    await write('2.0.0');
    await current('2.0.0');
    expect((await open().load()).quarantined).toEqual([]);
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await write('1.5.0');
    await current('1.0.0');
    const report = await open().load();
    expect(versions(report.loaded)).toEqual(['1.0.0']);
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        version: '1.5.0',
        reason: 'rollback',
        message: expect.stringMatching(/^tool@1\.5\.0 is lower than 2\.0\.0, which Metnos has seen before/),
      }),
    ]);
  });

  it('never takes the highest version of a ledger in the old place as accepted', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('3.0.0');
    await current('3.0.0');
    await open().load();
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '3.0.0'), { recursive: true });
    await mkdir(join(root, '.state'));
    await writeFile(
      join(root, '.state', 'ledger.json'),
      JSON.stringify({ version: 1, executors: { tool: { highest: '2.0.0', accepted: {} } } }),
    );
    await write('2.0.0');
    await current('2.0.0');
    expect((await open().load()).quarantined).toEqual([
      expect.objectContaining({
        version: '2.0.0',
        reason: 'rollback',
        message: expect.stringMatching(/^tool@2\.0\.0 is lower than 3\.0\.0/),
      }),
    ]);
  });

  it('does not count an archived version as seen active, and leaves its archive record alone', async () => {
    const { root, stateDir, write, current, open, state } = await world();
    await write('1.0.0');
    await write('2.0.0');
    await current('2.0.0');
    const catalog = open();
    await catalog.load();
    await catalog.archive('tool', '1.0.0');
    await rm(join(stateDir, 'ledger.json'));
    // a copy of the archived version put back by hand
    await cp(join(root, '.archive', 'tool', '1.0.0'), join(root, 'tool', '1.0.0'), { recursive: true });
    const report = await open().load();
    expect(versions(report.loaded)).toEqual(['2.0.0']);
    expect(report.quarantined).toEqual([
      expect.objectContaining({
        version: '1.0.0',
        reason: 'rollback',
        message: expect.stringMatching(/^tool@1\.0\.0 is lower than 2\.0\.0, which Metnos has seen before/),
      }),
    ]);
    expect((await state('lifecycle.json')).executors['tool@1.0.0']).toMatchObject({
      state: 'archived',
      path: join('tool', '1.0.0'),
    });
  });

  it('leaves lifecycle entries that name no executor version out of the ledger it rebuilds', async () => {
    const { stateDir, write, current, open, state } = await world();
    await write('1.0.0');
    await current('1.0.0');
    const catalog = open();
    await catalog.load();
    const lifecycle = await catalog.lifecycle();
    lifecycle.introduce('stray', 'active');
    lifecycle.introduce('@9.0.0', 'active');
    await lifecycle.save();
    await rm(join(stateDir, 'ledger.json'));
    expect((await open().load()).quarantined).toEqual([]);
    expect(Object.keys((await state('ledger.json')).executors)).toEqual(['tool']);
  });

  it('accepts what was never seen higher', async () => {
    const { write, current, open } = await world();
    await write('1.0.0');
    await current('1.0.0');
    expect((await open().load()).quarantined).toEqual([]);
  });
});

describe('admission into the lifecycle', () => {
  it('enters a version its author wrote as active at once, and a seed through seed, once', async () => {
    const { key, writeAs, open, state } = await world();
    const mine = await writeAs('mine');
    await editFile(join(mine, 'manifest.toml'), (text) =>
      text.replace('created_by = "seed"', 'created_by = "user"'),
    );
    await signExecutor(mine, key);
    await writeAs('seeded');
    await open().load();
    await open().load();
    const records = (await state('lifecycle.json')).executors;
    expect(records['mine@1.0.0']).toMatchObject({ state: 'active', history: [{ from: null, to: 'active' }] });
    expect(records['mine@1.0.0']).not.toHaveProperty('reason');
    expect(records['seeded@1.0.0']).toMatchObject({
      state: 'active',
      reason: 'signature verified',
      history: [
        { from: null, to: 'seed' },
        { from: 'seed', to: 'active', reason: 'signature verified' },
      ],
    });
  });

  it('leaves a version the ager moved below threshold where it is, load after load', async () => {
    const { writeAs, open, state } = await world();
    await writeAs('aged');
    const catalog = open();
    await catalog.load();
    const lifecycle = await catalog.lifecycle();
    lifecycle.transition('aged@1.0.0', 'below_threshold', 'unused for 90 days');
    await lifecycle.save();
    const next = open();
    expect(versions((await next.load()).loaded)).toEqual(['1.0.0']);
    expect(next.list()).toEqual([
      expect.objectContaining({ name: 'aged', state: 'below_threshold', reason: 'unused for 90 days' }),
    ]);
    expect(
      (await state('lifecycle.json')).executors['aged@1.0.0'].history.map(
        (entry: { to: string }) => entry.to,
      ),
    ).toEqual(['seed', 'active', 'below_threshold']);
  });

  it('keeps the quarantined signature however manifest.sig is spaced, and the same copy stays quarantined', async () => {
    const { root, write, current, open, state } = await world();
    const dir = await write('1.0.0');
    await current('1.0.0');
    // the same signature file without its indentation
    await editFile(join(dir, 'manifest.sig'), (text) => JSON.stringify(JSON.parse(text)));
    const signature = await signatureOf(dir);
    const catalog = open();
    expect(versions((await catalog.load()).loaded)).toEqual(['1.0.0']);
    const code = await readFile(join(dir, 'main.ts'), 'utf8');
    await appendFile(join(dir, 'main.ts'), '// tampered\n');
    expect((await catalog.load()).quarantined).toEqual([
      expect.objectContaining({ version: '1.0.0', reason: 'digest_mismatch' }),
    ]);
    const record = (await state('lifecycle.json')).executors['tool@1.0.0'];
    expect(record).toMatchObject({ state: 'quarantined', signature });

    await writeFile(join(dir, 'main.ts'), code);
    expect((await catalog.load()).quarantined).toEqual([
      {
        name: 'tool',
        version: '1.0.0',
        dir: join(root, 'tool', '1.0.0'),
        reason: 'signature_invalid',
        artefact: undefined,
        message: `tool@1.0.0 stays quarantined (${record.reason}); re-sign it or run \`metnos executor rehabilitate\``,
      },
    ]);
  });

  it('records no signature for a version quarantined without its manifest.sig', async () => {
    const { write, current, open, state } = await world();
    const dir = await write('1.0.0');
    await current('1.0.0');
    await rm(join(dir, 'manifest.sig'));
    expect((await open().load()).quarantined).toEqual([
      expect.objectContaining({ version: '1.0.0', reason: 'missing_artefact', artefact: 'manifest.sig' }),
    ]);
    const record = (await state('lifecycle.json')).executors['tool@1.0.0'];
    expect(record.state).toBe('quarantined');
    expect(record).not.toHaveProperty('signature');
  });
});

describe('quarantine entries', () => {
  it('name the version by its folder, else by the manifest however it is spaced', async () => {
    const { write, writeAs, current, open } = await world();
    const claimed = await write('1.0.0');
    await current('1.0.0');
    await editFile(join(claimed, 'manifest.toml'), (text) =>
      text.replace('version = "1.0.0"', 'version = "1.0.1"'),
    );
    const flat = await writeAs('flat', { version: '2.0.0' });
    await editFile(join(flat, 'manifest.toml'), (text) =>
      text.replace('version = "2.0.0"', 'version="2.0.0"'),
    );
    const report = await open().load();
    expect(report.quarantined.map((entry) => [entry.name, entry.version, entry.dir, entry.reason])).toEqual([
      ['flat', '2.0.0', flat, 'digest_mismatch'],
      ['tool', '1.0.0', claimed, 'digest_mismatch'],
    ]);
  });

  it('name a failure of Metnos itself, with the version of the folder', async () => {
    const { root, stateDir, key, write, current } = await world();
    const dir = await write('1.0.0');
    await current('1.0.0');
    await editFile(join(dir, 'manifest.toml'), (text) =>
      text.replace('version = "1.0.0"', 'version = "1.0.1"'),
    );
    const broken = {
      get keyId(): string {
        throw new Error('internal fault');
      },
      publicKey: key.publicKey,
    };
    const report = await createCatalog({ root, trustedKeys: [broken], stateDir }).load();
    expect(report.quarantined[0]).toEqual({
      name: 'tool',
      version: '1.0.0',
      dir,
      reason: 'manifest_invalid',
      artefact: undefined,
      message: 'unexpected failure while verifying: internal fault',
    });
  });

  it('say in words when CURRENT is missing or names a version that is not loaded', async () => {
    const { root, write, current, open } = await world();
    await write('1.0.0');
    const missing = await open().load();
    expect(missing.quarantined).toEqual([
      {
        name: 'tool',
        version: undefined,
        dir: join(root, 'tool'),
        reason: 'current_invalid',
        artefact: 'CURRENT',
        message: 'tool has several versions but no CURRENT file naming the default',
      },
    ]);
    await current('3.0.0');
    expect((await open().load()).quarantined).toEqual([
      {
        name: 'tool',
        version: '3.0.0',
        dir: join(root, 'tool'),
        reason: 'current_invalid',
        artefact: 'CURRENT',
        message: 'tool/CURRENT names 3.0.0, which is not a valid loaded version',
      },
    ]);
  });
});

describe('archived versions', () => {
  it('never loads a copy of an archived version put back by hand, nor records its signature', async () => {
    const { root, key, writeAs, open, state } = await world();
    const dir = await writeAs('solo');
    const catalog = open();
    await catalog.load();
    const ledger = await state('ledger.json');
    await catalog.archive('solo');
    await cp(join(root, '.archive', 'solo', '1.0.0'), dir, { recursive: true });
    await appendFile(join(dir, 'main.ts'), '// changed and signed again\n');
    await signExecutor(dir, key);
    const next = open();
    const report = await next.load();
    expect(report).toEqual({ loaded: [], quarantined: [] });
    expect(next.get('solo')).toBeUndefined();
    expect(next.list()).toEqual([expect.objectContaining({ name: 'solo', state: 'archived' })]);
    expect(await state('ledger.json')).toEqual(ledger);
  });
});

describe('the ledger file', () => {
  it('refuses to load over a ledger that is not one, or that cannot be read, naming the path', async () => {
    const { stateDir, write, open } = await world();
    await write('1.0.0');
    const path = join(stateDir, 'ledger.json');
    await writeFile(path, JSON.stringify({ version: 2, executors: {} }));
    const wrong = await failure(() => open().load());
    expect(LifecycleError.isInstance(wrong)).toBe(true);
    expect(wrong.message).toBe(
      `${path} is not a Metnos version ledger; refusing to load without rollback protection`,
    );
    await writeFile(path, '{');
    expect((await failure(() => open().load())).message).toBe(`cannot read ${path}`);
    await rm(path);
    await mkdir(path);
    expect((await failure(() => open().load())).message).toBe(`cannot read ${path}`);
  });
});

describe('rehabilitate', () => {
  it('accepts a version refused as a rollback, from then on', async () => {
    const { root, stateDir, write, current, open } = await world();
    await write('2.0.0');
    await open().load();
    await rm(join(stateDir, 'ledger.json'));
    await rm(join(root, 'tool', '2.0.0'), { recursive: true });
    await write('1.0.0');
    await current('1.0.0');
    const catalog = open();
    expect((await catalog.load()).quarantined).toHaveLength(1);
    expect((await catalog.rehabilitate('tool', '1.0.0')).version).toBe('1.0.0');
    expect(catalog.get('tool')?.version).toBe('1.0.0');
    expect((await open().load()).quarantined).toEqual([]);
  });

  it('a refusal by a catalog that has not loaded yet keeps every other executor in the ledger (their rollback protection)', async () => {
    const { writeAs, write, open, state } = await world();
    await writeAs('other', { version: '3.0.0', versioned: true });
    const dir = await write('2.0.0');
    const first = open();
    const { loaded } = await first.load();
    const executor = loaded.find((candidate) => candidate.name === 'tool')!;
    await appendFile(join(dir, 'main.ts'), '// changed\n');
    // another process's catalog, asked to check the changed version before it ever loaded
    await expect(open().reverify(executor)).rejects.toThrow('modified after signing');
    const ledger = await state('ledger.json');
    expect(ledger.executors.other.highest).toBe('3.0.0');
    expect(ledger.executors.tool.highest).toBe('2.0.0');
  });

  it('records a version brought back from the archive as rehabilitated', async () => {
    const { writeAs, open, state } = await world();
    await writeAs('solo');
    const catalog = open();
    await catalog.load();
    await catalog.archive('solo');
    await catalog.rehabilitate('solo', '1.0.0');
    const record = (await state('lifecycle.json')).executors['solo@1.0.0'];
    expect(record.reason).toBe('rehabilitated');
    expect(record.history.map((entry: { to: string }) => entry.to).slice(-2)).toEqual(['archived', 'active']);
  });

  it('accepts a refused lower version in the ledger beside the highest, which stays', async () => {
    const { root, writeAs, open, state } = await world();
    const dir = await writeAs('tool', { version: '2.0.0' });
    await open().load();
    const higher = await signatureOf(dir);
    await writeAs('tool', { version: '1.0.0' });
    const catalog = open();
    expect((await catalog.load()).quarantined).toEqual([
      expect.objectContaining({
        message: 'tool@1.0.0 is lower than 2.0.0, already accepted: rollback refused',
      }),
    ]);
    const back = await catalog.rehabilitate('tool', '1.0.0');
    expect([back.version, back.dir]).toEqual(['1.0.0', join(root, 'tool')]);
    expect(catalog.get('tool')?.version).toBe('1.0.0');
    expect(await state('ledger.json')).toEqual({
      version: 1,
      executors: { tool: { highest: '2.0.0', accepted: { '2.0.0': higher, '1.0.0': back.signature } } },
    });
    expect((await state('lifecycle.json')).executors['tool@1.0.0'].reason).toBe(
      'rehabilitated after a new verification',
    );
  });

  it('enters the ledger for an executor quarantined since its first sighting', async () => {
    const { writeAs, open, state } = await world();
    const dir = await writeAs('fresh');
    const code = await readFile(join(dir, 'main.ts'), 'utf8');
    await appendFile(join(dir, 'main.ts'), '// tampered\n');
    const catalog = open();
    expect((await catalog.load()).quarantined).toHaveLength(1);
    expect((await state('ledger.json')).executors).toEqual({});
    await writeFile(join(dir, 'main.ts'), code);
    const back = await catalog.rehabilitate('fresh', '1.0.0');
    expect((await state('ledger.json')).executors).toEqual({
      fresh: { highest: '1.0.0', accepted: { '1.0.0': back.signature } },
    });
  });

  it('verifies the very version asked for among several quarantined', async () => {
    const { root, write, writeAs, current, open } = await world();
    const other = await writeAs('alpha', { version: '2.0.0' });
    const older = await write('1.0.0');
    const wanted = await write('2.0.0');
    await current('2.0.0');
    const code = await readFile(join(wanted, 'main.ts'), 'utf8');
    for (const dir of [other, older, wanted]) await appendFile(join(dir, 'main.ts'), '// tampered\n');
    const catalog = open();
    expect((await catalog.load()).quarantined.map((entry) => `${entry.name}@${entry.version}`)).toEqual([
      'alpha@2.0.0',
      'tool@1.0.0',
      'tool@2.0.0',
    ]);
    await writeFile(join(wanted, 'main.ts'), code);
    const back = await catalog.rehabilitate('tool', '2.0.0');
    expect([back.name, back.version, back.dir]).toEqual(['tool', '2.0.0', join(root, 'tool', '2.0.0')]);
    expect(catalog.get('tool')?.version).toBe('2.0.0');
  });

  it('tries again a copy from the archive that failed once, after it is repaired', async () => {
    const { root, writeAs, open } = await world();
    await writeAs('spoiled');
    const catalog = open();
    await catalog.load();
    await catalog.archive('spoiled');
    const archived = join(root, '.archive', 'spoiled', '1.0.0', 'main.ts');
    const code = await readFile(archived, 'utf8');
    await appendFile(archived, '// spoiled in the archive\n');
    await failure(() => catalog.rehabilitate('spoiled', '1.0.0'));
    await writeFile(join(root, 'spoiled', 'main.ts'), code);
    const back = await catalog.rehabilitate('spoiled', '1.0.0');
    expect([back.version, back.dir]).toEqual(['1.0.0', join(root, 'spoiled')]);
  });

  it('verifies a quarantined version where it lies, leaving an old copy in the archive alone', async () => {
    const { root, writeAs, open, state } = await world();
    const dir = await writeAs('solo');
    // a person's copy of the good version, kept in the archive folder
    await cp(dir, join(root, '.archive', 'solo', '1.0.0'), { recursive: true });
    const code = await readFile(join(dir, 'main.ts'), 'utf8');
    await appendFile(join(dir, 'main.ts'), '// tampered\n');
    const catalog = open();
    expect((await catalog.load()).quarantined).toHaveLength(1);
    await writeFile(join(dir, 'main.ts'), code);
    const back = await catalog.rehabilitate('solo', '1.0.0');
    expect(back.dir).toBe(dir);
    expect(await readdir(join(root, '.archive', 'solo'))).toEqual(['1.0.0']);
    expect(await readdir(dir)).not.toContain('1.0.0');
    expect((await state('lifecycle.json')).executors['solo@1.0.0'].reason).toBe(
      'rehabilitated after a new verification',
    );
  });

  it('refuses an archived version whose archive copy is gone, and moves nothing', async () => {
    const { root, writeAs, open } = await world();
    await writeAs('solo');
    const catalog = open();
    await catalog.load();
    await catalog.archive('solo');
    await rm(join(root, '.archive', 'solo'), { recursive: true });
    const error = await failure(() => catalog.rehabilitate('solo', '1.0.0'));
    expect(LifecycleError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      `solo@1.0.0 is archived but its copy ${join(root, '.archive', 'solo', '1.0.0')} is gone; restore that folder, or install the version again`,
    );
    await expect(readdir(join(root, 'solo'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a version that is neither archived nor quarantined, naming its state', async () => {
    const { write, current, open } = await world();
    await write('1.0.0');
    await current('1.0.0');
    const catalog = open();
    await catalog.load();
    const active = await failure(() => catalog.rehabilitate('tool', '1.0.0'));
    expect(LifecycleError.isInstance(active)).toBe(true);
    expect(active.message).toBe('tool@1.0.0 is not archived or quarantined (state: active)');
    expect((await failure(() => catalog.rehabilitate('ghost', '9.9.9'))).message).toBe(
      'ghost@9.9.9 is not archived or quarantined (state: unknown)',
    );
  });

  it('refuses to bring an archived version back over a folder in its place', async () => {
    const { root, write, current, open } = await world();
    await write('1.0.0');
    await write('2.0.0');
    await current('2.0.0');
    const catalog = open();
    await catalog.load();
    await catalog.archive('tool', '1.0.0');
    await mkdir(join(root, 'tool', '1.0.0'), { recursive: true });
    const error = await failure(() => catalog.rehabilitate('tool', '1.0.0'));
    expect(error.message).toBe(`${join(root, 'tool', '1.0.0')} already exists; remove it first`);
  });
});
