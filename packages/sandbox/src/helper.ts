import { spawnSync } from 'node:child_process';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLocalSecret, resolveConfigDir } from '@metnos/executor-sdk';

/**
 * The C source of the in-sandbox helper, shipped with the package and compiled on first use.
 *
 * @example
 * readFileSync(HELPER_SOURCE, 'utf8');
 */
export const HELPER_SOURCE = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'metnos-jail.c');

/** Where the helper binary is, or why there is none and how to fix it. */
export type HelperStatus =
  | {
      ok: true;
      path: string;
      compiled: boolean;
      /** sha256 of the bytes that were built here or matched their seal: checked before every use. */
      digest: string;
      /** How the binary came to be trusted, for `metnos doctor`. */
      trust: string;
    }
  | { ok: false; problem: string; fix: string };

/**
 * The default cache folder for the compiled helper: `~/.cache/metnos/sandbox`,
 * or `<tmp>/metnos-sandbox-<uid>` when the home folder is not writable (the
 * `nobody` user has none).
 *
 * @example
 * ensureHelper(defaultHelperCacheDir());
 */
export function defaultHelperCacheDir(): string {
  const home = homedir();
  const uid = process.getuid?.() ?? 0;
  try {
    const info = statSync(home);
    if (info.isDirectory() && info.uid === uid) return join(home, '.cache', 'metnos', 'sandbox');
  } catch {
    // no usable home folder: fall through
  }
  return join(tmpdir(), `metnos-sandbox-${uid}`);
}

function safeCacheDir(dir: string): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = statSync(dir);
  const uid = process.getuid?.() ?? 0;
  if (info.uid !== uid) return `${dir} belongs to uid ${info.uid}, not to this user`;
  if ((info.mode & 0o077) !== 0) {
    chmodSync(dir, 0o700);
  }
  return unsafeParents(dir);
}

/**
 * Why a folder chain cannot be trusted to hold the helper, or undefined: every
 * folder from `/` down must be a real folder (no symlink), owned by root or this
 * user, and writable by nobody else (a sticky `/tmp` excepted).
 */
function unsafeParents(dir: string): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const parts = dir.split('/').filter(Boolean);
  for (let index = 0; index <= parts.length; index++) {
    const path = `/${parts.slice(0, index).join('/')}`;
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path);
    } catch (error) {
      return `${path} cannot be checked: ${(error as Error).message}`;
    }
    if (info.isSymbolicLink()) return `${path} is a symlink`;
    if (!info.isDirectory()) return `${path} is not a folder`;
    if (info.uid !== uid && info.uid !== 0) return `${path} belongs to uid ${info.uid}`;
    const sticky = (info.mode & 0o1000) !== 0;
    if ((info.mode & 0o022) !== 0 && !(sticky && index < parts.length))
      return `${path} is writable by other users (mode ${(info.mode & 0o7777).toString(8)})`;
  }
  return undefined;
}

/**
 * Checks the helper right before a use: every folder above it is sound
 * ({@link unsafeParents}), the binary is a plain file of this user (or root)
 * with one link that nobody else can write, and its bytes hash to `digest`.
 * Returns the problem, or undefined when it may run.
 *
 * @example
 * const problem = checkHelper(helper.path, helper.digest);
 * if (problem) refuse(problem);
 */
export function checkHelper(path: string, digest: string): string | undefined {
  const parents = unsafeParents(dirname(path));
  if (parents) return `the sandbox helper's folder is unsafe: ${parents}`;
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const info = fstatSync(fd);
    const uid = process.getuid?.() ?? 0;
    if (!info.isFile()) return `the sandbox helper ${path} is not a plain file`;
    if (info.uid !== uid && info.uid !== 0) return `the sandbox helper ${path} belongs to uid ${info.uid}`;
    if ((info.mode & 0o022) !== 0) return `the sandbox helper ${path} is writable by other users`;
    if (info.nlink !== 1) return `the sandbox helper ${path} has ${info.nlink} links`;
    const actual = createHash('sha256').update(readFileSync(fd)).digest('hex');
    if (actual !== digest)
      return `the sandbox helper ${path} is not the binary Metnos built (its content changed)`;
    return undefined;
  } catch (error) {
    return `the sandbox helper ${path} cannot be checked: ${(error as Error).message}`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** HMAC of a helper binary under the local seal secret. */
function sealOf(secret: Buffer, bytes: Buffer): string {
  return createHmac('sha256', secret).update('metnos.helper.v1\n').update(bytes).digest('hex');
}

function sameHex(left: string, right: string): boolean {
  const a = Buffer.from(left, 'hex');
  const b = Buffer.from(right, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/**
 * Returns the helper binary, compiling it from {@link HELPER_SOURCE} with gcc
 * on first use. The binary's name carries a hash of the source and the
 * compiler flags, so an edited source is rebuilt and concurrent processes
 * never see a half-written file (it is renamed into place).
 *
 * @example
 * const helper = ensureHelper(defaultHelperCacheDir());
 * if (!helper.ok) console.error(helper.problem, helper.fix);
 */
export function ensureHelper(cacheDir: string, settings: { configDir?: string } = {}): HelperStatus {
  let source: Buffer;
  try {
    source = readFileSync(HELPER_SOURCE);
  } catch (error) {
    return {
      ok: false,
      problem: `the helper source is missing: ${(error as Error).message}`,
      fix: 'reinstall @metnos/sandbox',
    };
  }
  const flags = ['-O2', '-Wall', '-o'];
  const libraries = ['-Wl,-Bstatic', '-lseccomp', '-Wl,-Bdynamic'];
  const sourceDigest = createHash('sha256')
    .update(source)
    .update(flags.join(' '))
    .update(libraries.join(' '))
    .digest('hex')
    .slice(0, 16);
  const target = join(cacheDir, `metnos-jail-${sourceDigest}`);
  try {
    const unsafe = safeCacheDir(cacheDir);
    if (unsafe)
      return { ok: false, problem: unsafe, fix: 'pass helperCacheDir pointing at a folder you own' };
  } catch (error) {
    return {
      ok: false,
      problem: `cannot create ${cacheDir}: ${(error as Error).message}`,
      fix: 'pass a writable helperCacheDir',
    };
  }
  // A binary from an earlier process is used only if it carries a seal made with the local
  // secret (in the config dir, which no executor can reach); otherwise it is built again.
  const secretDir = resolveConfigDir(settings.configDir);
  let secret: Buffer | string;
  try {
    mkdirSync(secretDir, { recursive: true, mode: 0o700 });
    secret = loadLocalSecret(join(secretDir, 'sandbox-helper.secret'));
  } catch (error) {
    secret = `${secretDir} cannot be created (${(error as Error).message})`;
  }
  const sealFile = `${target}.seal`;
  let rebuilt = '';
  if (existsSync(target)) {
    try {
      const bytes = readFileSync(target);
      const seal = readFileSync(sealFile, 'utf8').trim();
      if (
        typeof secret !== 'string' &&
        sameHex(seal, sealOf(secret, bytes)) &&
        lstatSync(target).nlink === 1
      ) {
        const digest = createHash('sha256').update(bytes).digest('hex');
        return { ok: true, path: target, compiled: false, digest, trust: 'sealed by this machine' };
      }
    } catch {
      // no seal, or unreadable: built again below
    }
    rebuilt =
      typeof secret === 'string' ? '' : ' (the cached binary did not match its seal, so it was rebuilt)';
  }
  // Without a usable secret no seal can be trusted: every process builds its own copy.
  const place = typeof secret === 'string' ? `${target}-${process.pid}-${Date.now()}` : target;
  const partial = `${place}.${process.pid}.tmp`;
  const build = spawnSync('gcc', [...flags, partial, HELPER_SOURCE, ...libraries], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (build.error || build.status !== 0) {
    rmSync(partial, { force: true });
    const reason = build.error ? build.error.message : build.stderr.trim().split('\n').slice(-3).join(' | ');
    const missingCompiler = build.error && (build.error as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      ok: false,
      problem: `the sandbox helper did not compile: ${reason}`,
      fix: missingCompiler
        ? 'apt-get install -y gcc libseccomp-dev'
        : 'apt-get install -y libseccomp-dev (static libseccomp.a is needed)',
    };
  }
  chmodSync(partial, 0o700);
  const bytes = readFileSync(partial);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (typeof secret !== 'string')
    writeFileSync(`${partial}.seal`, `${sealOf(secret, bytes)}\n`, { mode: 0o600 });
  rmSync(place, { force: true });
  renameSync(partial, place);
  if (typeof secret !== 'string') renameSync(`${partial}.seal`, sealFile);
  return {
    ok: true,
    path: place,
    compiled: true,
    digest,
    trust:
      typeof secret === 'string'
        ? `built by this process (no seal secret: ${secret})`
        : `built and sealed by this process${rebuilt}`,
  };
}
