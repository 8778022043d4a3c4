import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/index.ts';
import { KeyError } from './errors.ts';
import {
  createKeyStore,
  generateSigningKey,
  keyIdOf,
  parsePublicKey,
  readPublicKey,
  serializePublicKey,
} from './keys.ts';
import { resolveConfigDir } from './settings.ts';
import { createTrustStore, findWorkspaceConfig, loadTrustedKeys } from './trust.ts';

const temp = useTempDirs('metnos-keys-');

async function listing(dir: string) {
  return (await readdir(dir)).sort();
}

async function keyError(promise: Promise<unknown>): Promise<KeyError> {
  try {
    await promise;
  } catch (error) {
    if (KeyError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a KeyError');
}

describe('key store', () => {
  it('creates a key pair under <configDir>/keys: secret 0600, folder 0700, and loads it back', async () => {
    const configDir = await temp.make();
    const store = createKeyStore({ configDir });
    const created = await store.create('default');
    expect(created.keyId).toMatch(/^ed25519:[0-9a-f]{16}$/);
    expect(created.keyId).toBe(await keyIdOf(created.publicKey));

    expect((await stat(join(configDir, 'keys'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(configDir, 'keys', 'default.key'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(configDir, 'keys', 'default.pub'))).mode & 0o022).toBe(0);

    const loaded = await store.load('default');
    expect(loaded.keyId).toBe(created.keyId);
    expect(Buffer.from(loaded.secretKey)).toEqual(Buffer.from(created.secretKey));
    expect(await store.list()).toEqual([expect.objectContaining({ name: 'default', keyId: created.keyId })]);
    // The public half is safe to share: no secret in it.
    expect(await readFile(join(configDir, 'keys', 'default.pub'), 'utf8')).not.toContain('secret');
  });

  it('refuses to overwrite an existing key and keeps the original', async () => {
    const configDir = await temp.make();
    const store = createKeyStore({ configDir });
    const first = await store.create('default');
    const before = await readFile(join(configDir, 'keys', 'default.key'), 'utf8');
    const error = await keyError(store.create('default'));
    expect(error.message).toContain('already exists');
    expect(await readFile(join(configDir, 'keys', 'default.key'), 'utf8')).toBe(before);
    expect((await store.load('default')).keyId).toBe(first.keyId);
  });

  it('refuses to create a key over a leftover public half, without writing a secret that does not match it', async () => {
    const configDir = await temp.make();
    const store = createKeyStore({ configDir });
    await store.create('default');
    const pub = await readFile(join(configDir, 'keys', 'default.pub'), 'utf8');
    await rm(join(configDir, 'keys', 'default.key'));
    const error = await keyError(store.create('default'));
    expect(error.message).toContain('already exists');
    expect(await listing(join(configDir, 'keys'))).toEqual(['default.pub']);
    expect(await readFile(join(configDir, 'keys', 'default.pub'), 'utf8')).toBe(pub);
  });

  it('refuses a secret key file that other users can read, and says how to fix it', async () => {
    const configDir = await temp.make();
    const store = createKeyStore({ configDir });
    await store.create('shared');
    const path = join(configDir, 'keys', 'shared.key');
    for (const mode of [0o644, 0o640, 0o604]) {
      await chmod(path, mode);
      const error = await keyError(store.load('shared'));
      expect(error.message).toContain('readable by other users');
      expect(error.message).toContain(`chmod 600 ${path}`);
    }
    await chmod(path, 0o600);
    await expect(store.load('shared')).resolves.toMatchObject({ source: path });
  });

  it('refuses a missing key, a corrupted file, a secret that does not match its public key, and a bad name', async () => {
    const configDir = await temp.make();
    const store = createKeyStore({ configDir });
    expect((await keyError(store.load('nope'))).message).toContain('metnos keys init');

    await store.create('broken');
    const path = join(configDir, 'keys', 'broken.key');
    await writeFile(path, '{ not json', { mode: 0o600 });
    expect((await keyError(store.load('broken'))).message).toContain('not a Metnos secret key file');

    await store.create('swapped');
    const other = await generateSigningKey();
    const swapped = JSON.parse(await readFile(join(configDir, 'keys', 'swapped.key'), 'utf8'));
    swapped.secret_key = Buffer.from(other.secretKey).toString('base64');
    await writeFile(join(configDir, 'keys', 'swapped.key'), JSON.stringify(swapped), { mode: 0o600 });
    expect((await keyError(store.load('swapped'))).message).toContain('does not match');

    expect((await keyError(store.create('../escape'))).message).toContain('invalid key name');
  });

  it('uses METNOS_CONFIG_DIR when no config dir is given', async () => {
    const configDir = await temp.config();
    expect(resolveConfigDir()).toBe(configDir);
    expect(createKeyStore().dir).toBe(join(configDir, 'keys'));
    expect(resolveConfigDir('/explicit/wins')).toBe('/explicit/wins');
  });
});

describe('public keys', () => {
  it('round-trips a public key file and refuses one whose id does not match its bytes', async () => {
    const key = await generateSigningKey();
    const text = serializePublicKey(key);
    expect(await parsePublicKey(text, 'a.pub')).toMatchObject({ keyId: key.keyId, source: 'a.pub' });

    const other = await generateSigningKey();
    const lying = text.replace(key.keyId, other.keyId);
    expect((await keyError(parsePublicKey(lying, 'lying.pub'))).message).toContain('key_id does not match');
    expect((await keyError(parsePublicKey('nope', 'x.pub'))).message).toContain('x.pub');
    expect((await keyError(readPublicKey('/nonexistent/key.pub'))).message).toContain('/nonexistent/key.pub');
  });
});

describe('trust', () => {
  it('adds, lists and removes trusted keys in a 0600 file, without duplicates', async () => {
    const configDir = await temp.make();
    const trust = createTrustStore({ configDir });
    expect(await trust.list()).toEqual([]);
    const [first, second] = [await generateSigningKey(), await generateSigningKey()];
    expect(await trust.add(first)).toBe(true);
    expect(await trust.add(first)).toBe(false);
    expect(await trust.add(second)).toBe(true);
    expect((await trust.list()).map((key) => key.keyId)).toEqual([first.keyId, second.keyId]);
    expect((await stat(trust.path)).mode & 0o777).toBe(0o600);

    expect(await trust.remove(first.keyId)).toBe(true);
    expect(await trust.remove(first.keyId)).toBe(false);
    expect((await trust.list()).map((key) => key.keyId)).toEqual([second.keyId]);
  });

  it('refuses a trust list that is not one', async () => {
    const configDir = await temp.make();
    await writeFile(join(configDir, 'trusted_keys.json'), JSON.stringify({ keys: 'all' }));
    expect((await keyError(createTrustStore({ configDir }).list())).message).toContain(
      'not a Metnos trust list',
    );
  });

  it('finds the nearest metnos.toml and trusts its keys plus the user list', async () => {
    const workspace = await temp.make();
    const configDir = await temp.make();
    const [workspaceKey, userKey] = [await generateSigningKey(), await generateSigningKey()];
    await mkdir(join(workspace, 'keys'));
    await mkdir(join(workspace, 'executors', 'deep', 'er'), { recursive: true });
    await writeFile(join(workspace, 'keys', 'release.pub'), serializePublicKey(workspaceKey));
    await writeFile(
      join(workspace, 'metnos.toml'),
      '[workspace]\nroot = "ws"\nexecutors = "executors"\ntrusted_keys = ["keys/release.pub"]\n\n[server]\nport = 8080\n',
    );
    await createTrustStore({ configDir }).add(userKey);

    const found = await findWorkspaceConfig(join(workspace, 'executors', 'deep', 'er'));
    expect(found).toMatchObject({
      configDir: workspace,
      root: join(workspace, 'ws'),
      executors: join(workspace, 'executors'),
      trustedKeyFiles: [join(workspace, 'keys', 'release.pub')],
      raw: { server: { port: 8080 } },
    });
    const keys = await loadTrustedKeys(join(workspace, 'executors'), { configDir });
    expect(keys.map((key) => key.keyId).sort()).toEqual([workspaceKey.keyId, userKey.keyId].sort());
  });

  it('names metnos.toml when it does not parse', async () => {
    const workspace = await temp.make();
    await writeFile(join(workspace, 'metnos.toml'), '[workspace\n');
    await expect(findWorkspaceConfig(workspace)).rejects.toMatchObject({
      file: join(workspace, 'metnos.toml'),
      expected: 'valid TOML',
    });
  });
});
