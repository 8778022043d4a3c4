import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { LifecycleError } from './errors.ts';
import { generateSigningKey } from './keys.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-catalog-mutation-');

async function world() {
  const root = await temp.make('executors-');
  const stateDir = await temp.make('state-');
  const key = await generateSigningKey();
  const write = (version: string) =>
    writeSignedExecutor({ root, name: 'tool', key, version, versioned: true });
  const current = (version: string) => writeFile(join(root, 'tool', 'CURRENT'), `${version}\n`);
  const open = () => createCatalog({ root, trustedKeys: [key], stateDir });
  return { root, stateDir, write, current, open };
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error instanceof Error) return error;
  throw new Error('nothing was refused');
}

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

  it('accepts what was never seen higher', async () => {
    const { write, current, open } = await world();
    await write('1.0.0');
    await current('1.0.0');
    expect((await open().load()).quarantined).toEqual([]);
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
