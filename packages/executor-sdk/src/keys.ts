import { createPrivateKey, type KeyObject } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';
import { ed25519PublicKey } from '../runtime/public-key.mjs';
import { KeyError } from './errors.ts';
import { blake3Digest } from './hash.ts';
import { resolveConfigDir } from './settings.ts';

/** A public key Metnos may trust, with its id (`ed25519:<16 hex>`). */
export interface PublicKey {
  keyId: string;
  publicKey: Uint8Array;
  /** Where it was read from, for messages. */
  source?: string;
}

/** A signing key pair. The secret never leaves the user's config dir. */
export interface SigningKey extends PublicKey {
  secretKey: Uint8Array;
}

const publicFileSchema = z.object({
  kind: z.literal('metnos-ed25519-public'),
  key_id: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
  public_key: z.string().regex(/^[A-Za-z0-9+/]{43}=$/),
});

const secretFileSchema = z.object({
  kind: z.literal('metnos-ed25519-secret'),
  key_id: z.string().regex(/^ed25519:[0-9a-f]{16}$/),
  public_key: z.string().regex(/^[A-Za-z0-9+/]{43}=$/),
  secret_key: z.string().regex(/^[A-Za-z0-9+/]{43}=$/),
});

const KEY_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The id of a public key: the first 16 hex digits of its BLAKE3 digest. */
export async function keyIdOf(publicKey: Uint8Array): Promise<string> {
  const digest = await blake3Digest(publicKey);
  return `ed25519:${digest.slice('blake3:'.length, 'blake3:'.length + 16)}`;
}

/**
 * Creates a fresh Ed25519 key pair in memory.
 *
 * @example
 * const key = await generateSigningKey();
 */
export async function generateSigningKey(): Promise<SigningKey> {
  const secretKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secretKey);
  return { keyId: await keyIdOf(publicKey), publicKey, secretKey };
}

/** The text of a `.pub` file for `key`; safe to commit and share. */
export function serializePublicKey(key: PublicKey): string {
  return `${JSON.stringify(
    {
      kind: 'metnos-ed25519-public',
      key_id: key.keyId,
      public_key: Buffer.from(key.publicKey).toString('base64'),
    },
    null,
    2,
  )}\n`;
}

/** Parses a `.pub` file and checks that its id matches its bytes. */
export async function parsePublicKey(text: string, source: string): Promise<PublicKey> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new KeyError(`${source}: not a Metnos public key file (invalid JSON)`, error);
  }
  const parsed = publicFileSchema.safeParse(data);
  if (!parsed.success) {
    throw new KeyError(`${source}: not a Metnos public key file (${parsed.error.issues[0]?.message})`);
  }
  const publicKey = new Uint8Array(Buffer.from(parsed.data.public_key, 'base64'));
  if ((await keyIdOf(publicKey)) !== parsed.data.key_id) {
    throw new KeyError(`${source}: key_id does not match the public key bytes`);
  }
  return { keyId: parsed.data.key_id, publicKey, source };
}

/** Reads a trusted public key file. */
export async function readPublicKey(path: string): Promise<PublicKey> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new KeyError(`cannot read public key ${path}: ${(error as Error).message}`, error);
  }
  return parsePublicKey(text, path);
}

/** Settings of the on-disk key store. */
export interface KeyStoreSettings {
  /** The Metnos config dir; keys live in `<configDir>/keys`. Defaults to {@link resolveConfigDir}. */
  configDir?: string;
}

/**
 * The user's signing keys under `~/.config/metnos/keys/` (files mode 0600,
 * folder 0700). Secret keys are never written anywhere else.
 *
 * @example
 * const store = createKeyStore();
 * const key = await store.create('default');
 * await store.load('default');
 */
export function createKeyStore(settings: KeyStoreSettings = {}) {
  const dir = join(resolveConfigDir(settings.configDir), 'keys');

  function checkName(name: string): void {
    if (!KEY_NAME.test(name)) throw new KeyError(`invalid key name "${name}": use letters, digits, _ and -`);
  }

  return {
    dir,

    /** Creates and stores a new key pair named `name`; refuses to overwrite one. */
    async create(name: string): Promise<SigningKey> {
      checkName(name);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
      const key = await generateSigningKey();
      const secretText = `${JSON.stringify(
        {
          kind: 'metnos-ed25519-secret',
          key_id: key.keyId,
          public_key: Buffer.from(key.publicKey).toString('base64'),
          secret_key: Buffer.from(key.secretKey).toString('base64'),
        },
        null,
        2,
      )}\n`;
      const files = [
        [`${name}.key`, secretText, 0o600],
        [`${name}.pub`, serializePublicKey(key), 0o644],
      ] as const;
      // Both files are claimed before either is written, so a leftover half never gets a new partner.
      const handles: Array<Awaited<ReturnType<typeof open>>> = [];
      try {
        for (const [file, , mode] of files) handles.push(await open(join(dir, file), 'wx', mode));
      } catch (error) {
        await Promise.all(handles.map((handle) => handle.close()));
        await Promise.all(files.slice(0, handles.length).map(([file]) => unlink(join(dir, file))));
        throw new KeyError(`key "${name}" already exists in ${dir}`, error);
      }
      for (const [index, handle] of handles.entries()) {
        try {
          await handle.writeFile(files[index]![1]);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      return key;
    },

    /** Loads the key pair named `name`, refusing a secret file readable by others. */
    async load(name: string): Promise<SigningKey> {
      checkName(name);
      const path = join(dir, `${name}.key`);
      let text: string;
      try {
        const info = await stat(path);
        if ((info.mode & 0o077) !== 0) {
          throw new KeyError(
            `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}): run chmod 600 ${path}`,
          );
        }
        text = await readFile(path, 'utf8');
      } catch (error) {
        if (KeyError.isInstance(error)) throw error;
        throw new KeyError(`no key "${name}" in ${dir}: create one with \`metnos keys init\``, error);
      }
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (error) {
        throw new KeyError(`${path}: not a Metnos secret key file`, error);
      }
      const parsed = secretFileSchema.safeParse(data);
      if (!parsed.success) throw new KeyError(`${path}: not a Metnos secret key file`);
      const secretKey = new Uint8Array(Buffer.from(parsed.data.secret_key, 'base64'));
      const publicKey = ed25519.getPublicKey(secretKey);
      if (Buffer.from(publicKey).toString('base64') !== parsed.data.public_key) {
        throw new KeyError(`${path}: the public key does not match the secret key`);
      }
      return { keyId: parsed.data.key_id, publicKey, secretKey, source: path };
    },

    /** Lists the stored key pairs (public halves only). */
    async list(): Promise<Array<PublicKey & { name: string }>> {
      let entries: string[];
      try {
        entries = await readdir(dir);
      } catch {
        return [];
      }
      const keys: Array<PublicKey & { name: string }> = [];
      for (const entry of entries.filter((file) => file.endsWith('.pub')).sort()) {
        const key = await readPublicKey(join(dir, entry));
        keys.push({ ...key, name: entry.slice(0, -'.pub'.length) });
      }
      return keys;
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;

const nodeKeys = new Map<string, KeyObject>();

/** A Node `KeyObject` for a raw Ed25519 public key, cached by its bytes. */
export function nodePublicKey(key: PublicKey): KeyObject {
  const x = Buffer.from(key.publicKey).toString('base64url');
  let object = nodeKeys.get(x);
  if (!object) {
    object = ed25519PublicKey(key.publicKey);
    nodeKeys.set(x, object);
  }
  return object;
}

const nodeSigningKeys = new WeakMap<SigningKey, KeyObject>();

/**
 * A Node `KeyObject` for a signing key's secret, kept for as long as the key
 * object lives (never by its bytes). Ed25519 signatures are deterministic
 * (RFC 8032), so OpenSSL's equal `@noble/curves`' byte for byte, at a small
 * fraction of the time: a receipt is signed on every call.
 *
 * @example
 * sign(null, bytes, nodeSigningKey(key)); // the same bytes as ed25519.sign(bytes, key.secretKey)
 */
export function nodeSigningKey(key: SigningKey): KeyObject {
  let object = nodeSigningKeys.get(key);
  if (!object) {
    object = createPrivateKey({
      key: {
        kty: 'OKP',
        crv: 'Ed25519',
        d: Buffer.from(key.secretKey).toString('base64url'),
        x: Buffer.from(key.publicKey).toString('base64url'),
      },
      format: 'jwk',
    });
    nodeSigningKeys.set(key, object);
  }
  return object;
}
