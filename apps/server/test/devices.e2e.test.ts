import { createHash, X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePhotos } from '../../../executors/photo_organize/tests/photos.ts';
import { makeLaptop, makeServer, tree, until } from './devices-fixture.ts';

const hashes = async (folder: string, paths: string[]) =>
  Object.fromEntries(
    await Promise.all(
      paths.map(async (path) => [
        path,
        createHash('sha256')
          .update(await readFile(join(folder, path)))
          .digest('hex'),
      ]),
    ),
  );

describe('a laptop paired with the server organises 1,000 photos and undoes it', () => {
  let server: Awaited<ReturnType<typeof makeServer>>;
  let laptop: Awaited<ReturnType<typeof makeLaptop>>;
  let agent: ReturnType<Awaited<ReturnType<typeof makeLaptop>>['start']>;
  let device: string;

  beforeAll(async () => {
    server = await makeServer();
    laptop = await makeLaptop();
  });

  afterAll(async () => {
    await agent?.stop();
    await server?.close();
    await laptop?.remove();
  });

  it('pairs with a one-time code: a certificate from the server CA for a key made on the laptop', async () => {
    const code = server.code();
    const wrong = await laptop.run(['pair', server.address, 'AAAA-BBBB-CCCC-DDDD']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/no such open pairing code/);
    const paired = await laptop.run([
      'pair',
      server.address,
      code,
      '--name',
      'ada-laptop',
      '--grant',
      laptop.pictures,
    ]);
    expect(paired.stderr).toBe('');
    expect(paired.code).toBe(0);
    device = /\((dev_[a-z0-9]+)\)/.exec(paired.stdout)![1]!;
    const again = await laptop.run(['pair', server.address, code]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no such open pairing code/);

    const deviceDir = join(laptop.home, '.config', 'metnos', 'device');
    const certificate = new X509Certificate(await readFile(join(deviceDir, 'device.pem')));
    const ca = new X509Certificate(server.authority.ca);
    expect(certificate.verify(ca.publicKey)).toBe(true);
    expect(certificate.subject).toContain(`CN=${device}`);
    expect(await readFile(join(deviceDir, 'ca.pem'), 'utf8')).toBe(server.authority.ca);
    // the private key was made on the laptop and never left it: only its public half is on the server
    const key = await readFile(join(deviceDir, 'device.key'), 'utf8');
    expect(JSON.stringify(server.store.devices())).not.toContain(key.split('\n')[1]);
    expect(server.store.devices()).toMatchObject([
      { id: device, name: 'ada-laptop', state: 'active', executors: ['photo_organize'] },
    ]);
  });

  it('organises the photos on the laptop under the sandbox, recording before and after manifests and two audit lines', async () => {
    const expected = await writePhotos(laptop.pictures, 1000);
    const originals = await tree(laptop.pictures);
    const before = await hashes(laptop.pictures, originals);
    agent = laptop.start();
    await until(() => server.hub.connected(device), 20_000, 'the laptop to connect').catch((error) => {
      throw new Error(`${error.message}\n${agent.output()}\n${server.logs.join('\n')}`);
    });

    const outcome = await server.hub.call(
      device,
      'photo_organize',
      { folder: '.' },
      { caller: { kind: 'cli' } },
    );
    expect(outcome.result).toMatchObject({
      ok: true,
      content: { organised: 1000 },
      metadata: { applied: 1000 },
    });
    // the sandbox, at the tier it reached, said so in the result
    expect(outcome.result.isolation?.tier).toBe('full');
    expect(await tree(laptop.pictures)).toEqual([...expected.values()].sort());
    const after = await hashes(laptop.pictures, [...expected.values()]);
    for (const [name, place] of expected) expect(after[place]).toBe(before[name]);

    // the first call found no cached copy: the server pushed it, then delivered the call again
    expect(server.logs.some((line) => /pushing photo_organize@1\.0\.0/.test(line))).toBe(true);
    const recorded = server.store.call(outcome.key)!;
    expect(recorded.before).toHaveLength(1000);
    expect(recorded.after).toHaveLength(1000);
    expect(recorded.before!.find((entry) => entry.path === 'IMG_0000.jpg')).toMatchObject({
      size: expect.any(Number),
      hash: `sha256:${before['IMG_0000.jpg']}`,
    });

    const lines = (await server.auditLines()).filter((line) => line.trace_id === outcome.trace);
    expect(lines.map((line) => line.side)).toEqual(['server', 'laptop']);
    expect(lines[0]).toMatchObject({
      executor: 'photo_organize',
      caller: { kind: 'cli' },
      exit: 'ok',
      remote: { device, name: 'ada-laptop', tier: 'full' },
    });
    expect(lines[1]).toMatchObject({ executor: 'photo_organize', exit: 'ok', device, key: outcome.key });
    expect((lines[1]!.touched as unknown[]).length).toBe(1000);
    const own = (await laptop.auditLines()).filter(
      (line) => line.trace_id === outcome.trace && line.exit === 'ok',
    );
    expect(own).toHaveLength(1);
    expect(own[0]!.touched).toContainEqual({
      op: 'move',
      from: 'IMG_0000.jpg',
      path: expected.get('IMG_0000.jpg'),
      hash: `sha256:${before['IMG_0000.jpg']}`,
    });

    const undone = await server.hub.undo(outcome.trace, { caller: { kind: 'cli' } });
    expect(undone.result).toMatchObject({ ok: true, metadata: { applied: 1000 } });
    expect(await tree(laptop.pictures)).toEqual(originals);
    expect(await hashes(laptop.pictures, originals)).toEqual(before);
    expect(server.store.call(outcome.key)!.undoneBy).toBe(undone.key);
    expect((await server.hub.undo(outcome.trace, { caller: { kind: 'cli' } })).result).toMatchObject({
      ok: false,
      error: { class: 'AlreadyUndone' },
    });
  });

  it('refuses an undo with the reason when a file changed since, and changes nothing', async () => {
    const outcome = await server.hub.call(device, 'photo_organize', {}, { caller: { kind: 'cli' } });
    expect(outcome.result.ok).toBe(true);
    const sorted = await tree(laptop.pictures);
    await writeFile(join(laptop.pictures, sorted[3]!), 'edited since');
    const undone = await server.hub.undo(outcome.trace, { caller: { kind: 'cli' } });
    expect(undone.result).toMatchObject({
      ok: false,
      error: {
        class: 'ChangedSince',
        message: expect.stringContaining(`${sorted[3]} changed since the call`),
      },
    });
    expect(await tree(laptop.pictures)).toEqual(sorted);
  });
});
