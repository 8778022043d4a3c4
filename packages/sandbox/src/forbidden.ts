import { join } from 'node:path';
import type { ProtectedPath } from '@metnos/executor-sdk';
import { type ComponentCache, isWithin, resolveReal } from './resolve-path.ts';

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

/** The forbidden set for one host and one call, with real paths. */
export interface ForbiddenSet {
  /** Real paths of trees no profile may reach (secrets under homes, the audit folder, system trees). */
  trees: string[];
  /** Read-only exceptions inside the trees (`/etc/ld.so.cache`, `/dev/null`, …). */
  readable: string[];
  /** Secret trees inside homes and the workspace: masked inside any bind that contains them. */
  masks: string[];
  /**
   * What decides trust and what runs: readable, never writable, and no write
   * grant may contain them (Metnos's own code, the sandbox helper, executors
   * folders, trust lists, `metnos.toml`, ledgers, the memory stores).
   */
  protect: string[];
  /** Why each protected path is protected, for refusal messages. */
  reasons: Map<string, string>;
  /** The workspace's `.audit` (written and real form): masked, and the one tree a write grant may contain. */
  audit: string[];
  /**
   * The folder holding every call's private `$TMP` (`root`) and this call's
   * own (`own`): the others are out of reach, and masked inside a granted tree.
   */
  calls?: { root: string; own: string };
}

/**
 * Builds the forbidden set for `homes` (the user's and root's) and the call's
 * workspace, with both the written and the real form of every path.
 *
 * @example
 * const forbidden = forbiddenSet({ homes: [homedir(), '/root'], workspace: '/tmp/ws' });
 */
export function forbiddenSet(settings: {
  homes: readonly string[];
  workspace?: string;
  /** Extra secret trees (the resolved Metnos config dir), masked like a home's `.ssh`. */
  secrets?: readonly string[];
  /** Paths no executor may write (see {@link ForbiddenSet.protect}). */
  protect?: readonly ProtectedPath[];
  /** See {@link ForbiddenSet.calls}. */
  calls?: { root: string; own: string };
}): ForbiddenSet {
  const masks = new Set<string>();
  // the paths below share most of their folders: each is looked at once for this set
  const seen: ComponentCache = new Map();
  const both = (path: string) => [path, resolveReal(path, seen).real];
  for (const home of settings.homes) {
    for (const secret of HOME_SECRETS) for (const form of both(join(home, secret))) masks.add(form);
  }
  for (const secret of settings.secrets ?? []) for (const form of both(secret)) masks.add(form);
  const audit = settings.workspace ? both(join(settings.workspace, '.audit')) : [];
  for (const form of audit) masks.add(form);
  const trees = new Set<string>(masks);
  for (const tree of SYSTEM_FORBIDDEN) for (const form of both(tree)) trees.add(form);
  const reasons = new Map<string, string>();
  for (const { path, why } of settings.protect ?? []) {
    for (const form of both(path)) if (!reasons.has(form)) reasons.set(form, why);
  }
  return {
    trees: [...trees],
    readable: [...ETC_READABLE, ...DEVICES_ALLOWED],
    masks: [...masks],
    protect: [...reasons.keys()],
    reasons,
    audit,
    ...(settings.calls ? { calls: settings.calls } : {}),
  };
}

/**
 * Which forbidden tree holds `real`, unless it is one of the read-only exceptions and
 * `write` is false. For a write, the protected paths count too.
 */
export function forbiddenTreeOf(real: string, forbidden: ForbiddenSet, write: boolean): string | undefined {
  if (!write && forbidden.readable.includes(real)) return undefined;
  const calls = forbidden.calls;
  if (calls && isWithin(real, calls.root) && !isWithin(real, calls.own)) return calls.root;
  const tree = forbidden.trees.find((candidate) => isWithin(real, candidate));
  if (tree || !write) return tree;
  return forbidden.protect.find((candidate) => isWithin(real, candidate));
}

/**
 * The first forbidden or protected path strictly inside `root`: a write grant
 * on `root` could rename its way around any mask or read-only mount over it,
 * so such a grant is refused. The workspace's own `.audit`, created and masked
 * before every call, is the one exception (`allowed`).
 */
export function forbiddenInside(
  root: string,
  forbidden: ForbiddenSet,
  allowed: readonly string[] = [],
): string | undefined {
  const calls = forbidden.calls ? [forbidden.calls.root] : [];
  return [...forbidden.trees, ...forbidden.protect, ...calls].find(
    (path) => path !== root && isWithin(path, root) && !allowed.includes(path),
  );
}
