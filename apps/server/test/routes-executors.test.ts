import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCatalog, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefusal, scratch, serveApi } from './routes-helpers.ts';

let api: Awaited<ReturnType<typeof serveApi>>;
let catalog: ReturnType<typeof createCatalog>;
let root: string;
const signatures = new Map<string, string>();

interface Row {
  name: string;
  version: string;
  state: string;
  current: boolean;
  quarantine: { reason: string } | null;
  sideEffects: boolean | null;
  idempotent: boolean | null;
}

beforeAll(async () => {
  const base = await scratch('routes-executors');
  root = join(base, 'executors');
  const key = await generateSigningKey();
  const dirs = {
    'fs_read@1.0.0': (await writeSignedExecutor({ root, name: 'fs_read', key })).dir,
    'mailer@1.0.0': (
      await writeSignedExecutor({
        root,
        name: 'mailer',
        key,
        versioned: true,
        contract: { side_effects: true, idempotent: false },
      })
    ).dir,
    'mailer@1.1.0': (
      await writeSignedExecutor({
        root,
        name: 'mailer',
        version: '1.1.0',
        key,
        versioned: true,
        contract: { side_effects: true, idempotent: false },
      })
    ).dir,
    'broken@1.0.0': (await writeSignedExecutor({ root, name: 'broken', key })).dir,
  };
  await writeFile(join(root, 'mailer', 'CURRENT'), '1.1.0\n');
  // changed after signing: the catalog quarantines it
  await writeFile(join(dirs['broken@1.0.0'], 'main.ts'), 'export default 1;\n');
  for (const [id, dir] of Object.entries(dirs))
    signatures.set(id, await readFile(join(dir, 'manifest.sig'), 'utf8'));
  catalog = createCatalog({ root, trustedKeys: [key], stateDir: join(base, 'state') });
  await catalog.load();
  api = await serveApi({ executors: { catalog } });
});

afterAll(async () => {
  await api?.server.close();
});

async function list(): Promise<Row[]> {
  const response = await api.call('/api/executors');
  expect(response.status).toBe(200);
  return ((await response.json()) as { executors: Row[] }).executors;
}
const row = async (name: string, version: string) =>
  (await list()).find((entry) => entry.name === name && entry.version === version);
const post = (path: string, json?: unknown, body?: string) =>
  api.call(path, { method: 'POST', ...(body !== undefined ? { body } : { json }) });

describe('the executor routes', () => {
  it('answer nothing without the bearer token, and change nothing', async () => {
    await expectRefusal(await api.call('/api/executors', {}, 'nope'), 401, 'unauthorized');
    await expectRefusal(
      await api.call('/api/executors/fs_read/archive', { method: 'POST', json: {} }, 'n'.repeat(43)),
      401,
    );
    expect((await row('fs_read', '1.0.0'))?.state).not.toBe('archived');
  });

  it('list every version with its state, default, quarantine reason, side effects and idempotence', async () => {
    const rows = await list();
    expect(rows.find((entry) => entry.name === 'fs_read')).toMatchObject({
      version: '1.0.0',
      current: true,
      sideEffects: false,
      idempotent: true,
      quarantine: null,
    });
    expect(rows.filter((entry) => entry.name === 'mailer')).toEqual([
      expect.objectContaining({ version: '1.1.0', current: true, sideEffects: true, idempotent: false }),
      expect.objectContaining({ version: '1.0.0', current: false, sideEffects: true, idempotent: false }),
    ]);
    expect(rows.find((entry) => entry.name === 'broken')).toMatchObject({
      state: 'quarantined',
      quarantine: { reason: 'digest_mismatch' },
      sideEffects: null,
    });
    expect(JSON.stringify(rows)).not.toContain(root);
  });

  it('archive, rehabilitate and promote through the catalog; a refused move is 409 with the reason', async () => {
    const archived = await post('/api/executors/fs_read/archive', {});
    expect(await archived.json()).toEqual({ action: 'archive', archived: ['fs_read@1.0.0'] });
    expect((await row('fs_read', '1.0.0'))?.state).toBe('archived');
    expect(catalog.get('fs_read')).toBeUndefined();
    const again = await expectRefusal(await post('/api/executors/fs_read/archive', {}), 409, 'refused');
    expect(again.message).toMatch(/no loaded or quarantined version/);

    expect(
      await (await post('/api/executors/fs_read/rehabilitate', { version: '1.0.0' })).json(),
    ).toMatchObject({
      state: 'active',
    });
    expect(catalog.get('fs_read')?.version).toBe('1.0.0');
    const active = await expectRefusal(
      await post('/api/executors/fs_read/rehabilitate', { version: '1.0.0' }),
      409,
      'refused',
    );
    expect(active.message).toMatch(/not archived or quarantined/);

    expect((await post('/api/executors/mailer/promote', { version: '1.0.0' })).status).toBe(200);
    expect(await readFile(join(root, 'mailer', 'CURRENT'), 'utf8')).toBe('1.0.0\n');
    expect((await row('mailer', '1.0.0'))?.current).toBe(true);
    const single = await expectRefusal(
      await post('/api/executors/fs_read/promote', { version: '1.0.0' }),
      409,
    );
    expect(single.message).toMatch(/single-version layout/);

    // a version that does not verify stays quarantined
    const broken = await expectRefusal(
      await post('/api/executors/broken/rehabilitate', { version: '1.0.0' }),
      409,
      'refused',
    );
    expect(broken.message).toMatch(/does not verify/);
    expect((await row('broken', '1.0.0'))?.state).toBe('quarantined');

    // signatures are what they were: nothing here signs
    for (const [id, text] of signatures) {
      const [name, version] = id.split('@') as [string, string];
      const dir = name === 'mailer' ? join(root, name, version) : join(root, name);
      expect(await readFile(join(dir, 'manifest.sig'), 'utf8')).toBe(text);
    }
  });

  it('answer 404 for an executor or version the catalog does not know', async () => {
    await expectRefusal(await post('/api/executors/nothing_here/archive', {}), 404, 'not_found');
    await expectRefusal(await post('/api/executors/mailer/promote', { version: '9.9.9' }), 404, 'not_found');
  });

  it('refuse hostile names and bodies before touching the catalog', async () => {
    for (const name of ['..%2Fmailer', '__proto__', 'Mailer', 'a'.repeat(80), 'mailer%00'])
      await expectRefusal(await post(`/api/executors/${name}/archive`, {}), 400, 'invalid');
    const bodies = [
      'not json',
      '[]',
      '{}',
      '{"version":"latest"}',
      '{"version":"1.0.0","extra":1}',
      '{"version":"1.0.0","__proto__":{"admin":true}}',
      '{"version":"1.0.0","constructor":{"prototype":{}}}',
      `{"version":"1.0.0","deep":${'['.repeat(50)}${']'.repeat(50)}}`,
    ];
    for (const body of bodies)
      await expectRefusal(await post('/api/executors/mailer/promote', undefined, body), 400, 'invalid');
    // each refused for its own reason, not only by the strict schema
    const proto = await expectRefusal(
      await post('/api/executors/mailer/promote', undefined, '{"version":"1.0.0","__proto__":{}}'),
      400,
    );
    expect(proto.message).toBe('the key "__proto__" is refused');
    const deep = await expectRefusal(
      await post(
        '/api/executors/mailer/promote',
        undefined,
        `{"version":${'['.repeat(20)}${']'.repeat(20)}}`,
      ),
      400,
    );
    expect(deep.message).toMatch(/nests deeper than 8 levels/);
    await expectRefusal(
      await post('/api/executors/mailer/promote', undefined, JSON.stringify({ version: 'x'.repeat(40_000) })),
      413,
      'too_large',
    );
    expect(await readFile(join(root, 'mailer', 'CURRENT'), 'utf8')).toBe('1.0.0\n');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
