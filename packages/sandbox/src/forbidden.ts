import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isWithin, resolveReal } from './resolve-path.ts';

/**
 * Secrets under a home directory that no profile can grant. The list is in
 * code on purpose: changing it takes a code change, a review and a release.
 *
 * @example
 * HOME_SECRETS.map((secret) => join(homedir(), secret)); // ['/home/me/.ssh', …]
 */
export const HOME_SECRETS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.password-store',
  '.pki',
  '.config/metnos',
  '.config/myclaw',
  '.config/gcloud',
  '.config/gh',
  '.local/share/keyrings',
] as const;

/**
 * Whole system trees no profile can grant, and that no profile entry may contain.
 *
 * @example
 * SYSTEM_FORBIDDEN.includes('/proc'); // true
 */
export const SYSTEM_FORBIDDEN = [
  '/root',
  '/boot',
  '/proc',
  '/sys',
  '/dev',
  '/etc',
  '/run',
  '/var/run',
  '/var/lib/sss',
] as const;

/**
 * Files under `/etc` a runtime may need and that reveal nothing: the only
 * exceptions to the `/etc` ban, and read-only even then.
 *
 * @example
 * ETC_READABLE.includes('/etc/passwd'); // false
 */
export const ETC_READABLE = [
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/mime.types',
  '/etc/ssl/certs/ca-certificates.crt',
] as const;

/**
 * Device files a sandbox may use; every other node under `/dev` is refused.
 *
 * @example
 * DEVICES_ALLOWED.includes('/dev/sda'); // false
 */
export const DEVICES_ALLOWED = [
  '/dev/null',
  '/dev/zero',
  '/dev/random',
  '/dev/urandom',
  '/dev/full',
] as const;

/** System credential files whose hardlinks are recognised by inode. */
const SYSTEM_SECRET_FILES = [
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/sudoers',
  '/etc/ssh',
  '/etc/ssl/private',
  '/root',
];

/** The forbidden set for one host and one call, with real paths. */
export interface ForbiddenSet {
  /** Real paths of trees no profile may reach (secrets under homes, the audit folder, system trees). */
  trees: string[];
  /** Read-only exceptions inside the trees (`/etc/ld.so.cache`, `/dev/null`, …). */
  readable: string[];
  /** Secret trees inside homes and the workspace: masked inside any bind that contains them. */
  masks: string[];
}

/**
 * Builds the forbidden set for `homes` (the user's and root's) and the call's
 * workspace, with both the written and the real form of every path.
 *
 * @example
 * const forbidden = forbiddenSet({ homes: [homedir(), '/root'], workspace: '/tmp/ws' });
 */
export function forbiddenSet(settings: { homes: readonly string[]; workspace?: string }): ForbiddenSet {
  const masks = new Set<string>();
  for (const home of settings.homes) {
    for (const secret of HOME_SECRETS) {
      masks.add(join(home, secret));
      masks.add(resolveReal(join(home, secret)).real);
    }
  }
  if (settings.workspace) {
    masks.add(join(settings.workspace, '.audit'));
    masks.add(resolveReal(join(settings.workspace, '.audit')).real);
  }
  const trees = new Set<string>(masks);
  for (const tree of SYSTEM_FORBIDDEN) {
    trees.add(tree);
    trees.add(resolveReal(tree).real);
  }
  return { trees: [...trees], readable: [...ETC_READABLE, ...DEVICES_ALLOWED], masks: [...masks] };
}

/** Which forbidden tree holds `real`, unless it is one of the read-only exceptions and `write` is false. */
export function forbiddenTreeOf(real: string, forbidden: ForbiddenSet, write: boolean): string | undefined {
  if (!write && forbidden.readable.includes(real)) return undefined;
  return forbidden.trees.find((tree) => isWithin(real, tree));
}

/**
 * Device and inode numbers of the secret files a hardlink could point at.
 * Walks the secret trees shallowly (depth 3, at most 4096 entries): they are
 * small by nature.
 */
export function secretInodes(forbidden: ForbiddenSet): Set<string> {
  const found = new Set<string>();
  let budget = 4096;
  const visit = (path: string, depth: number) => {
    if (budget-- <= 0) return;
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path);
    } catch {
      return;
    }
    if (info.isFile()) found.add(`${info.dev}:${info.ino}`);
    if (!info.isDirectory() || depth >= 3) return;
    let entries: string[] = [];
    try {
      entries = readdirSync(path);
    } catch {
      return;
    }
    for (const entry of entries) {
      // root's home can be large (package caches); only its secret folders are walked
      if (path === '/root' && !HOME_SECRETS.some((secret) => secret.split('/')[0] === entry)) continue;
      visit(join(path, entry), depth + 1);
    }
  };
  for (const tree of [...forbidden.masks, ...SYSTEM_SECRET_FILES]) visit(tree, 0);
  return found;
}
