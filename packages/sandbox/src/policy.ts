import { statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ExpandedProfile, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { type DomainRule, domainAllowed, parseDomainRule } from './domains.ts';
import { type ForbiddenSet, forbiddenInside, forbiddenTreeOf, SYSTEM_FORBIDDEN } from './forbidden.ts';
import { isWithin, resolveReal } from './resolve-path.ts';

/** Which rule a refused call broke. */
export type PolicyRule =
  | 'forbidden-path'
  | 'outside-allow-list'
  | 'hardlink'
  | 'special-file'
  | 'domain-not-allowed'
  | 'ip-literal'
  | 'profile-forbidden-path'
  | 'profile-too-broad'
  | 'profile-bad-domain'
  | 'profile-bad-exec'
  | 'path-changed'
  | 'argument-too-deep';

/** A refusal before any process starts: data for the caller and the audit line. */
export interface PolicyViolation {
  rule: PolicyRule;
  /** JSON pointer of the argument at fault (`/path`), or `profile` for the profile itself. */
  where: string;
  /** The value as given (cut to 200 characters). */
  value: string;
  /** The real path it resolved to, for path rules. */
  real?: string;
  message: string;
}

/** The allow-lists of one call, resolved to real paths. */
export interface ResolvedProfile {
  read: string[];
  write: string[];
  domains: DomainRule[];
}

/** Keys whose string values are paths even when relative (`notes/a.md` under the workspace). */
const PATH_KEYS = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'filepath',
  'dir',
  'dirs',
  'directory',
  'folder',
  'src',
  'source',
  'sources',
  'dest',
  'destination',
  'target',
  'cwd',
  'root',
  'from',
  'to',
  'output',
  'input_path',
  'output_path',
]);

const URL_PATTERN = /^(https?|wss?|ftp):\/\/\S+$/i;
const ABSOLUTE_PATH_PATTERN = /^(\/|~\/|~$|file:\/\/)\S*$/;
/** A `..` segment in a string without whitespace: a path whatever its key (`name: '../../etc/passwd'`). */
const CLIMB_PATTERN = /^\S*(^|\/)\.\.(\/|$)\S*$/;

function cut(value: string): string {
  return value.length > 200 ? `${value.slice(0, 200)}…` : value;
}

/** Systems trees that a profile entry may not contain: binding their parent would expose them. */
function tooBroad(real: string): boolean {
  return SYSTEM_FORBIDDEN.some((tree) => real !== tree && isWithin(tree, real));
}

/**
 * Checks the profile itself and resolves its allow-lists. An entry inside a
 * core forbidden tree, or one so broad it contains a system tree (`/`,
 * `/var`), is refused; secret folders inside an allowed home are masked later.
 *
 * @example
 * const profile = resolveProfile(expandProfile(manifest.sandbox, places), forbiddenSet({ homes, workspace }));
 * if ('rule' in profile) console.error(profile.message);
 */
export function resolveProfile(
  profile: ExpandedProfile,
  forbidden: ForbiddenSet,
  places: { home?: string; tmpRoot?: string } = {},
): ResolvedProfile | PolicyViolation {
  const broad = new Map<string, string>([['/', 'the whole filesystem']]);
  if (places.home) broad.set(resolveReal(places.home).real, 'the whole home folder');
  if (places.tmpRoot)
    broad.set(resolveReal(places.tmpRoot).real, 'the shared temp folder (every call has its own $TMP)');
  const resolveList = (entries: readonly string[], write: boolean): string[] | PolicyViolation => {
    const out: string[] = [];
    for (const entry of entries) {
      const { real } = resolveReal(entry);
      const tree =
        forbiddenTreeOf(real, forbidden, write) ?? forbiddenTreeOf(posix.normalize(entry), forbidden, write);
      if (tree) {
        const why =
          tree === forbidden.calls?.root ? "other calls' private temp folders" : forbidden.reasons.get(tree);
        return {
          rule: 'profile-forbidden-path',
          where: 'profile',
          value: cut(entry),
          real,
          message: why
            ? `the profile grants write on ${entry}, inside ${tree} (${why}); no executor may write there`
            : `the profile grants ${entry}, inside the core forbidden path ${tree}; no profile can grant it`,
        };
      }
      if (write) {
        const whole = broad.get(real);
        // The workspace's own `.audit` is the one tree a grant may contain, and only a grant on the
        // workspace itself: that is a mount point inside, while a grant on a folder above it could
        // move the workspace, audit history included, aside and put a forged one in its place.
        const ownAudit = forbidden.audit.filter((path) => posix.dirname(path) === real);
        const inside = forbiddenInside(real, forbidden, ownAudit);
        if (whole || inside) {
          const why = !inside
            ? undefined
            : inside === forbidden.calls?.root
              ? "every call's private temp folder"
              : forbidden.reasons.get(inside);
          return {
            rule: 'profile-too-broad',
            where: 'profile',
            value: cut(entry),
            real,
            message: `the profile grants write on ${entry}${whole ? `, ${whole}` : ''}${
              inside ? `, which contains ${inside}${why ? ` (${why})` : ' (a core forbidden path)'}` : ''
            }: an executor could move that aside and put its own in its place; grant a narrower folder`,
          };
        }
      }
      if (tooBroad(real)) {
        return {
          rule: 'profile-too-broad',
          where: 'profile',
          value: cut(entry),
          real,
          message: `the profile grants ${entry}, which contains system trees (/etc, /proc, /root …); name narrower folders`,
        };
      }
      out.push(real);
    }
    return out;
  };
  const read = resolveList(profile.fs.read, false);
  if (!Array.isArray(read)) return read;
  const write = resolveList(profile.fs.write, true);
  if (!Array.isArray(write)) return write;
  const domains: DomainRule[] = [];
  if (profile.network.mode === 'allowlist') {
    for (const entry of profile.network.domains) {
      const rule = parseDomainRule(entry);
      if (typeof rule === 'string') {
        return {
          rule: 'profile-bad-domain',
          where: 'profile',
          value: cut(entry),
          message: `network allow-list: ${rule}`,
        };
      }
      domains.push(rule);
    }
  }
  return { read, write, domains };
}

/** What {@link checkArguments} needs beside the arguments. */
export interface ArgumentCheckContext {
  profile: ResolvedProfile;
  forbidden: ForbiddenSet;
  workspace: string;
  home: string;
  /**
   * Top-level argument names the executor's input schema declares as free
   * text (`"format": "text"`): their values are data, not paths or URLs, so
   * `"/api/v1"` in a search query is not checked against the file allow-list.
   * The kernel layers still contain whatever the executor does with them.
   */
  textKeys?: ReadonlySet<string>;
  /** The profile's `fs.hardlinks` opt-in: multiply-linked files may be named. */
  hardlinks?: boolean;
}

/**
 * The top-level properties an input schema marks `"format": "text"`.
 *
 * @example
 * textKeysOf({ type: 'object', properties: { query: { type: 'string', format: 'text' } } }); // Set { 'query' }
 */
export function textKeysOf(inputSchema: unknown): Set<string> {
  const keys = new Set<string>();
  const properties = (inputSchema as { properties?: Record<string, { format?: unknown }> } | undefined)
    ?.properties;
  if (properties === null || typeof properties !== 'object') return keys;
  for (const [name, property] of Object.entries(properties)) {
    if (property !== null && typeof property === 'object' && property.format === 'text') keys.add(name);
  }
  return keys;
}

function checkPath(value: string, where: string, context: ArgumentCheckContext): PolicyViolation | undefined {
  let absolute: string;
  if (value.startsWith('file://')) {
    try {
      absolute = fileURLToPath(value);
    } catch {
      return {
        rule: 'outside-allow-list',
        where,
        value: cut(value),
        message: `${where}: "${cut(value)}" is not a usable file URL`,
      };
    }
  } else if (value === '~' || value.startsWith('~/')) {
    absolute = `${context.home}/${value.slice(1)}`;
  } else {
    // joined as written: resolveReal applies each `..` after the symlinks before it
    absolute = value.startsWith('/') ? value : `${context.workspace}/${value}`;
  }
  const lexical = posix.normalize(absolute);
  const { real, exists } = resolveReal(absolute);
  const allowed = [...context.profile.read, ...context.profile.write];
  for (const candidate of [lexical, real]) {
    const tree = forbiddenTreeOf(candidate, context.forbidden, false);
    if (tree) {
      return {
        rule: 'forbidden-path',
        where,
        value: cut(value),
        real,
        message: `${where}: "${cut(value)}" leads to ${real}, inside the core forbidden path ${tree}`,
      };
    }
  }
  if (!allowed.some((root) => isWithin(real, root))) {
    return {
      rule: 'outside-allow-list',
      where,
      value: cut(value),
      real,
      message: `${where}: "${cut(value)}" leads to ${real}, outside the profile's file allow-lists (${allowed.join(', ') || 'none'})`,
    };
  }
  if (exists) {
    let info: ReturnType<typeof statSync> | undefined;
    try {
      info = statSync(real);
    } catch {
      info = undefined;
    }
    if (info && (info.isBlockDevice() || info.isCharacterDevice() || info.isSocket())) {
      return {
        rule: 'special-file',
        where,
        value: cut(value),
        real,
        message: `${where}: ${real} is a device or socket`,
      };
    }
    if (info?.isFile() && info.nlink > 1 && !context.hardlinks) {
      // Which name is the original cannot be told from the file, and finding the other names
      // would mean walking trees an attacker can pad; so no multiply-linked file is opened.
      return {
        rule: 'hardlink',
        where,
        value: cut(value),
        real,
        message: `${where}: ${real} has ${info.nlink} hard links; Metnos opens no file with more than one name unless the profile sets fs.hardlinks = true (it could be a second name of a secret)`,
      };
    }
  }
  return undefined;
}

function checkUrl(value: string, where: string, context: ArgumentCheckContext): PolicyViolation | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':')) {
    return {
      rule: 'ip-literal',
      where,
      value: cut(value),
      message: `${where}: "${cut(value)}" names an IP address; only allow-listed domains are reachable`,
    };
  }
  const port = url.port
    ? Number(url.port)
    : url.protocol === 'http:' || url.protocol === 'ws:'
      ? 80
      : url.protocol === 'ftp:'
        ? 21
        : 443;
  if (!domainAllowed(host, port, context.profile.domains)) {
    return {
      rule: 'domain-not-allowed',
      where,
      value: cut(value),
      message: `${where}: ${host}:${port} is not on the profile's network allow-list`,
    };
  }
  return undefined;
}

/**
 * Checks call arguments against the resolved profile: every path-like value
 * (absolute, `~/…`, `file://…`, or any string under a path key such as `path`
 * or `dest`) must resolve inside the allow-lists and outside the core
 * forbidden set; every whole-string URL must name an allow-listed domain.
 * Top-level arguments the schema declares as free text are skipped.
 * Returns the first violation, or undefined.
 *
 * @example
 * checkArguments({ path: '/etc/passwd' }, context); // { rule: 'outside-allow-list', … }
 */
export function checkArguments(args: unknown, context: ArgumentCheckContext): PolicyViolation | undefined {
  const visit = (
    value: unknown,
    pointer: string,
    key: string | undefined,
    depth: number,
  ): PolicyViolation | undefined => {
    if (depth > MAX_JSON_DEPTH) {
      // never skipped: a path nested where the walk stops would reach the process unchecked
      return {
        rule: 'argument-too-deep',
        where: cut(pointer),
        value: '',
        message: `${cut(pointer)}: arguments nest deeper than ${MAX_JSON_DEPTH} levels; the paths in them cannot be checked`,
      };
    }
    if (typeof value === 'string') {
      if (URL_PATTERN.test(value)) return checkUrl(value, pointer || '/', context);
      const pathKey = key !== undefined && PATH_KEYS.has(key.toLowerCase());
      const pathLike = ABSOLUTE_PATH_PATTERN.test(value) || CLIMB_PATTERN.test(value);
      if ((pathKey && value.length > 0 && !/[\n\0]/.test(value)) || pathLike) {
        return checkPath(value, pointer || '/', context);
      }
      return undefined;
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const found = visit(value[index], `${pointer}/${index}`, key, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    if (value !== null && typeof value === 'object') {
      for (const [name, item] of Object.entries(value)) {
        if (depth === 0 && context.textKeys?.has(name)) continue;
        const found = visit(
          item,
          `${pointer}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`,
          name,
          depth + 1,
        );
        if (found) return found;
      }
    }
    return undefined;
  };
  return visit(args, '', undefined, 0);
}
