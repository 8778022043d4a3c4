import { lstatSync, readlinkSync } from 'node:fs';
import { posix } from 'node:path';

/** Where a path really leads, resolved one component at a time. */
export interface ResolvedPath {
  /** The physical path: every symlink followed, `..` applied after the symlink before it. */
  real: string;
  /** False when some trailing component does not exist yet (a file about to be written). */
  exists: boolean;
}

const MAX_SYMLINKS = 40;

const MISSING = Symbol('missing');
const NOT_A_LINK = Symbol('not a link');

/**
 * What {@link resolveReal} found at each absolute component path: a symlink's
 * target, not a link, or missing. One cache serves the paths resolved together
 * at one moment (a call's forbidden set), which share most of their folders;
 * it is never kept across calls.
 */
export type ComponentCache = Map<string, string | typeof MISSING | typeof NOT_A_LINK>;

function lookComponent(path: string): string | typeof MISSING | typeof NOT_A_LINK {
  try {
    if (!lstatSync(path).isSymbolicLink()) return NOT_A_LINK;
    return readlinkSync(path);
  } catch {
    return MISSING;
  }
}

/**
 * Resolves `path` like the kernel does: component by component, following
 * each symlink (including magic ones such as `/proc/self/root`) before the
 * next `..` is applied. Missing trailing components are kept as written, so
 * a file about to be created resolves under its real parent.
 *
 * @example
 * resolveReal('/tmp/ws/link-to-ssh/id_rsa'); // { real: '/root/.ssh/id_rsa', exists: true }
 */
export function resolveReal(path: string, seen?: ComponentCache): ResolvedPath {
  // split the path as written: normalising first would apply `..` lexically, before the symlinks it follows
  const pending = (path.startsWith('/') ? path : `/${path}`).split('/').filter(Boolean);
  let current = '/';
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      current = posix.dirname(current);
      continue;
    }
    const next = posix.join(current, part);
    const found = seen?.get(next) ?? lookComponent(next);
    seen?.set(next, found);
    if (found === MISSING) return { real: posix.normalize(posix.join(next, ...pending)), exists: false };
    if (found === NOT_A_LINK) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINKS) return { real: posix.normalize(posix.join(next, ...pending)), exists: false };
    const target = found;
    if (target.startsWith('/')) current = '/';
    pending.unshift(...target.split('/').filter(Boolean));
  }
  return { real: current, exists: true };
}

/** True when `path` is `root` or lies below it (both normalised absolute paths). */
export function isWithin(path: string, root: string): boolean {
  if (root === '/') return true;
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}
