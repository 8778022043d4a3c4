import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The C source of the in-sandbox helper, shipped with the package and compiled on first use.
 *
 * @example
 * readFileSync(HELPER_SOURCE, 'utf8');
 */
export const HELPER_SOURCE = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'metnos-jail.c');

/** Where the helper binary is, or why there is none and how to fix it. */
export type HelperStatus =
  | { ok: true; path: string; compiled: boolean }
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
  if ((info.mode & 0o022) !== 0) {
    chmodSync(dir, 0o700);
  }
  return undefined;
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
export function ensureHelper(cacheDir: string): HelperStatus {
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
  const digest = createHash('sha256')
    .update(source)
    .update(flags.join(' '))
    .update(libraries.join(' '))
    .digest('hex')
    .slice(0, 16);
  const target = join(cacheDir, `metnos-jail-${digest}`);
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
  if (existsSync(target)) return { ok: true, path: target, compiled: false };
  const partial = `${target}.${process.pid}.tmp`;
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
  renameSync(partial, target);
  return { ok: true, path: target, compiled: true };
}
