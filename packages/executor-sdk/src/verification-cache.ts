import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createBLAKE3, type IHasher } from 'hash-wasm';
import { resolveConfigDir } from './settings.ts';
import { writeFileAtomic } from './sign.ts';

/**
 * Domain-separation tag of an entry. The version names the load checks an
 * entry vouches for: bump it whenever `verifyExecutor` checks something new,
 * and every entry written before stops matching.
 */
const ENTRY_TAG = 'metnos.verification-cache.v1\n';
const SECRET_BYTES = 32;
const FILE_VERSION = 1;

/** Where a {@link VerificationCache} keeps its entries and its secret. */
export interface VerificationCacheSettings {
  /** The cache file (entries only, no secret). Usually beside the catalog's ledger. */
  file: string;
  /**
   * The 32-byte secret that authenticates entries. Default
   * `<config dir>/verification-cache.secret`: the config dir is one of the
   * paths no sandbox profile can grant, so no executor can read it or forge an entry.
   */
  secretFile?: string;
  /** The config dir used for the default `secretFile`. */
  configDir?: string;
}

/** What an entry binds together: the signed set and the manifest parsed from it. */
export interface VerifiedSet {
  /** The exact statement bytes the signature covers (names the four artefact digests). */
  statement: Uint8Array;
  signature: Uint8Array;
  publicKey: Uint8Array;
}

/**
 * Executor versions that passed every load check on this machine. At a
 * restart the catalog still reads every artefact, recomputes its BLAKE3
 * digest and compares it with the signed statement, and checks the key
 * against today's trust list; when the signed set is one that passed before,
 * the entry stands in for the Ed25519 arithmetic and the manifest, schema and
 * profile checks of those same bytes. Each entry is a keyed-BLAKE3 tag over
 * (public key, signature, statement, parsed manifest) under a local secret,
 * so an entry written without the secret matches nothing.
 */
export interface VerificationCache {
  /**
   * The manifest remembered for these manifest bytes (by digest), not yet
   * authenticated: use it only once {@link VerificationCache.confirm} agrees.
   */
  manifestFor(manifestDigest: string): string | undefined;
  /** True when this signed set, with the remembered manifest, passed every check before. */
  confirm(manifestDigest: string, set: VerifiedSet): boolean;
  /** Remembers a version that has just passed every check. */
  remember(manifestDigest: string, manifestJson: string, set: VerifiedSet): void;
  /**
   * Writes the entries confirmed or remembered since the cache was opened
   * (entries of versions no longer present fall away). Atomic; a failure
   * (full disk, read-only dir) leaves the old file and is reported, never thrown.
   */
  save(): Promise<{ saved: boolean; error?: string }>;
  /** Why the cache is off, when it is (every version is then checked in full). */
  readonly disabled: string | undefined;
  /** How many versions were confirmed since opening, for reports and benchmarks. */
  readonly hits: number;
  /** How many entries the cache file held when it was opened (0 for a new or unusable one). */
  readonly stored: number;
}

interface Entry {
  manifest: string;
  tag: string;
}

/**
 * Reads a local 32-byte secret, creating it (mode 0600, exclusively) when absent. A
 * secret that other users can read, of the wrong size, or owned by someone
 * else is not used: the cache stays off and says why.
 */
export function loadLocalSecret(path: string): Buffer | string {
  let fd: number | undefined;
  try {
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const secret = randomBytes(SECRET_BYTES);
      try {
        const created = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
        try {
          writeSync(created, secret);
        } finally {
          closeSync(created);
        }
        return secret;
      } catch (raceError) {
        // Another process created it first: use theirs.
        if ((raceError as NodeJS.ErrnoException).code !== 'EEXIST') throw raceError;
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      }
    }
    const info = fstatSync(fd);
    if (!info.isFile()) return `${path} is not a regular file`;
    if ((info.mode & 0o077) !== 0) {
      return `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}): run chmod 600 ${path}`;
    }
    if (typeof process.getuid === 'function' && info.uid !== process.getuid()) {
      return `${path} belongs to another user`;
    }
    if (info.size !== SECRET_BYTES) return `${path} is not a ${SECRET_BYTES}-byte secret`;
    const secret = Buffer.alloc(SECRET_BYTES);
    if (readSync(fd, secret, 0, SECRET_BYTES, 0) !== SECRET_BYTES) return `${path} could not be read whole`;
    return secret;
  } catch (error) {
    return `${path} is unusable (${(error as Error).message})`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Entries as stored. A file that does not parse is an empty cache. */
function readEntries(file: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { v?: unknown; entries?: unknown };
    if (data?.v !== FILE_VERSION || data.entries === null || typeof data.entries !== 'object') return entries;
    for (const [digest, entry] of Object.entries(data.entries as Record<string, Partial<Entry>>)) {
      if (typeof entry?.manifest === 'string' && typeof entry.tag === 'string') {
        entries.set(digest, { manifest: entry.manifest, tag: entry.tag });
      }
    }
  } catch {
    // Missing or corrupt: start empty; the next save replaces it.
  }
  return entries;
}

/**
 * Opens (or starts) a verification cache. Never throws: an unusable secret
 * turns the cache off, an unreadable or corrupt file is an empty cache.
 *
 * @example
 * const cache = await openVerificationCache({ file: join(stateDir, 'verification-cache.json') });
 * const catalog = createCatalog({ root, trustedKeys, stateDir, verificationCache: cache });
 */
export async function openVerificationCache(settings: VerificationCacheSettings): Promise<VerificationCache> {
  const secretFile =
    settings.secretFile ?? join(resolveConfigDir(settings.configDir), 'verification-cache.secret');
  let secret: Buffer | string;
  try {
    await mkdir(dirname(secretFile), { recursive: true, mode: 0o700 });
    secret = loadLocalSecret(secretFile);
  } catch (error) {
    secret = `${dirname(secretFile)} cannot be created (${(error as Error).message})`;
  }
  const disabled = typeof secret === 'string' ? secret : undefined;
  // Keyed BLAKE3 is a MAC; one instance is re-initialised for every entry.
  const mac: IHasher | undefined = disabled ? undefined : await createBLAKE3(256, secret as Buffer);
  const stored = disabled ? new Map<string, Entry>() : readEntries(settings.file);
  const kept = new Map<string, Entry>();
  let hits = 0;
  let dirty = false;

  const length = Buffer.alloc(4);
  const tagOf = (manifestJson: string, set: VerifiedSet): string => {
    const hasher = mac!;
    hasher.init();
    hasher.update(ENTRY_TAG);
    // Fixed-size fields first, then the statement with its length, then the manifest:
    // no two different inputs share an encoding.
    hasher.update(set.publicKey);
    hasher.update(set.signature);
    length.writeUInt32BE(set.statement.length);
    hasher.update(length);
    hasher.update(set.statement);
    hasher.update(manifestJson);
    return hasher.digest('hex');
  };

  return {
    disabled,
    stored: stored.size,
    get hits() {
      return hits;
    },
    manifestFor(manifestDigest) {
      return stored.get(manifestDigest)?.manifest;
    },
    confirm(manifestDigest, set) {
      const entry = stored.get(manifestDigest);
      if (!entry || set.publicKey.length !== 32 || set.signature.length !== 64) return false;
      if (tagOf(entry.manifest, set) !== entry.tag) return false;
      hits++;
      kept.set(manifestDigest, entry);
      return true;
    },
    remember(manifestDigest, manifestJson, set) {
      if (disabled || set.publicKey.length !== 32 || set.signature.length !== 64) return;
      const tag = tagOf(manifestJson, set);
      if (kept.get(manifestDigest)?.tag === tag) return;
      kept.set(manifestDigest, { manifest: manifestJson, tag });
      dirty = true;
    },
    async save() {
      if (disabled) return { saved: false, error: disabled };
      const unchanged =
        !dirty && kept.size === stored.size && [...kept.keys()].every((digest) => stored.has(digest));
      if (unchanged) return { saved: false };
      try {
        await mkdir(dirname(settings.file), { recursive: true });
        const entries = Object.fromEntries(kept);
        await writeFileAtomic(settings.file, `${JSON.stringify({ v: FILE_VERSION, entries })}\n`, 0o600);
        stored.clear();
        for (const [digest, entry] of kept) stored.set(digest, entry);
        dirty = false;
        return { saved: true };
      } catch (error) {
        return { saved: false, error: `${settings.file} could not be written (${(error as Error).message})` };
      }
    },
  };
}
