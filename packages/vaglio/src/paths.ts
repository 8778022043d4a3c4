import { posix } from 'node:path';

/**
 * One forbidden location. `label` is what a reason may show (the rule, never
 * the argument); `matches` reads a normalised absolute path; `samples` are
 * concrete paths inside the location, used to test shell wildcards.
 */
export interface ForbiddenRule {
  label: string;
  matches(path: string): boolean;
  samples: string[];
}

/** The home-relative trees no argument may mention. */
export const HOME_FORBIDDEN = ['.ssh', '.gnupg', '.aws', '.config/metnos', '.config/myclaw'] as const;

/**
 * Home-relative trees that decide what Metnos trusts and runs: its state
 * (version ledgers), data (memory) and cache (the sandbox helper). Reading
 * them is harmless; a side-effecting call may not name them.
 */
export const HOME_PROTECTED = ['.local/state/metnos', '.local/share/metnos', '.cache/metnos'] as const;

/** System trees no argument may mention. `/root` is skipped when it is the user's own home. */
export const SYSTEM_FORBIDDEN = ['/root', '/boot', '/sys', '/proc'] as const;

/** System account files, with their backups (`/etc/shadow-`) and drop-in folders (`/etc/sudoers.d`). */
export const ACCOUNT_FILES = ['/etc/passwd', '/etc/shadow', '/etc/gshadow', '/etc/sudoers'] as const;

/** Block-device prefixes under `/dev`. */
export const BLOCK_DEVICES = ['sd', 'hd', 'vd', 'xvd', 'nvme', 'mmcblk', 'disk/'] as const;

const DEVICE_SAMPLES = [
  '/dev/sda',
  '/dev/hda',
  '/dev/vda',
  '/dev/xvda',
  '/dev/nvme0n1',
  '/dev/mmcblk0',
  '/dev/disk/by-id',
];

/** True when `path` is `root` or inside it. */
export function isWithin(path: string, root: string): boolean {
  if (root === '/') return path.startsWith('/');
  return path === root || path.startsWith(`${root}/`);
}

function tree(label: string, root: string): ForbiddenRule {
  return { label, matches: (path) => isWithin(path, root), samples: [root] };
}

/**
 * The forbidden locations for one user and workspace, as the guard reads them.
 *
 * @example
 * forbiddenRules({ home: '/home/ada', workspace: '/home/ada/metnos' }).find((rule) => rule.matches('/home/ada/.ssh/id_rsa'))?.label; // '~/.ssh'
 */
export function forbiddenRules(context: { home: string; workspace: string }): ForbiddenRule[] {
  const home = posix.resolve(context.home);
  const workspace = posix.resolve(context.workspace);
  const rules = HOME_FORBIDDEN.map((relative) => tree(`~/${relative}`, posix.join(home, relative)));
  const configDir = posix.join(home, '.config');
  rules.push({
    label: '~/.config/*/credentials.env',
    matches: (path) =>
      isWithin(path, configDir) &&
      path !== configDir &&
      posix.basename(path) === 'credentials.env' &&
      posix.dirname(path) !== configDir,
    samples: [posix.join(configDir, 'x', 'credentials.env')],
  });
  rules.push(tree('<workspace>/.audit', posix.join(workspace, '.audit')));
  for (const root of SYSTEM_FORBIDDEN) {
    if (root === '/root' && isWithin(home, root)) continue;
    rules.push(tree(root, root));
  }
  for (const file of ACCOUNT_FILES) {
    rules.push({
      label: file,
      matches: (path) =>
        path === file || (path.startsWith(file) && /^[^A-Za-z0-9_]/.test(path.slice(file.length))),
      samples: [file],
    });
  }
  rules.push({
    label: '/dev block devices',
    matches: (path) => BLOCK_DEVICES.some((prefix) => path.startsWith(`/dev/${prefix}`)),
    samples: DEVICE_SAMPLES,
  });
  return rules;
}

/**
 * What a side-effecting call may not name: {@link HOME_PROTECTED} and the
 * context's own protected paths, together with every folder that holds one
 * (moving such a folder aside would replace what it holds).
 *
 * @example
 * protectedRules({ home: '/home/ada', workspace: '/w', protect: ['/w2/metnos.toml'] })[3]?.label; // 'protected: metnos.toml'
 */
export function protectedRules(context: {
  home: string;
  workspace: string;
  protect?: readonly string[];
}): ForbiddenRule[] {
  const home = posix.resolve(context.home);
  const paths = [
    ...HOME_PROTECTED.map((relative) => ({ label: `~/${relative}`, root: posix.join(home, relative) })),
    ...(context.protect ?? []).map((path) => ({
      label: `protected: ${posix.basename(path)}`,
      root: posix.resolve(path),
    })),
  ];
  return paths.map(({ label, root }) => ({
    label,
    // the path itself, anything in it, or a folder above it (but not / or the home itself)
    matches: (path) => isWithin(path, root) || (path !== '/' && path !== home && isWithin(root, path)),
    samples: [root],
  }));
}

const HOME_MARK = '\u0001';
const WORKSPACE_MARK = '\u0002';
/** Token separators; the second set keeps `[…]` so bracket wildcards survive. */
const SEPARATORS = [/[\s'"`;|&<>(){}[\],=:]+/, /[\s'"`;|&<>(){},=:]+/];
const MAX_VARIANTS = 64;

/** Decodes `%XX` escapes (ASCII is enough for the paths the guard knows), repeatedly for double encoding. */
export function percentDecode(text: string): string {
  let current = text;
  for (let round = 0; round < 3 && current.includes('%'); round++) {
    const next = current.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (next === current) break;
    current = next;
  }
  return current;
}

/** Expands shell brace lists (`.{ssh,aws}` → `.ssh`, `.aws`), up to a bounded number of results. */
function expandBraces(text: string): string[] {
  const results: string[] = [];
  const queue = [text];
  while (queue.length > 0 && results.length < MAX_VARIANTS) {
    const current = queue.shift()!;
    const match = /\{([^{}]*,[^{}]*)\}/.exec(current);
    if (!match) {
      results.push(current);
      continue;
    }
    for (const option of match[1]!.split(',')) {
      queue.push(current.slice(0, match.index) + option + current.slice(match.index + match[0].length));
    }
  }
  return results;
}

/**
 * The readings of one string the guard checks: as written, percent-decoded,
 * without `file:` URL prefixes, without shell quotes and backslashes, and
 * with brace lists expanded.
 */
export function readings(text: string): string[] {
  const found = new Set<string>();
  for (const decoded of new Set([text, percentDecode(text)])) {
    const withoutScheme = decoded.replace(/file:(?:\/\/(?:localhost)?)?/gi, '');
    for (const base of new Set([decoded, withoutScheme])) {
      found.add(base);
      const unquoted = base.replace(/['"\\]/g, '');
      found.add(unquoted);
      if (unquoted.includes('{')) for (const expanded of expandBraces(unquoted)) found.add(expanded);
    }
  }
  return [...found];
}

/**
 * The absolute, normalised paths a string may name: every token is read as a
 * path, with `~`, `~root`, `$HOME` and `${HOME}` expanded, relative tokens
 * read against the workspace (where executors run), `..` and `//` resolved.
 *
 * @example
 * pathsIn('cat ~/.ssh/id_rsa > x', { home: '/home/ada', workspace: '/w' }); // includes '/home/ada/.ssh/id_rsa'
 */
export function pathsIn(text: string, context: { home: string; workspace: string }): string[] {
  const home = posix.resolve(context.home);
  const workspace = posix.resolve(context.workspace);
  const paths = new Set<string>();
  const tokens = new Set<string>();
  const marks: [string, string][] = [
    [home, HOME_MARK],
    [workspace, WORKSPACE_MARK],
  ];
  marks.sort((a, b) => b[0].length - a[0].length);
  for (const reading of readings(text)) {
    let marked = reading.replace(/\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g, HOME_MARK);
    for (const [path, mark] of marks) if (path !== '/') marked = marked.split(path).join(mark);
    for (const separators of marked.includes('[') ? SEPARATORS : SEPARATORS.slice(0, 1))
      for (const token of marked.split(separators)) tokens.add(token);
  }
  for (const raw of tokens) {
    if (raw === '') continue;
    let token = raw.replace(/^\/+(?=~)/, '');
    if (token === '~' || token.startsWith('~/')) token = HOME_MARK + token.slice(1);
    else if (token === '~root' || token.startsWith('~root/')) token = `/root${token.slice(5)}`;
    token = token.split(HOME_MARK).join(home).split(WORKSPACE_MARK).join(workspace);
    paths.add(posix.resolve(workspace, token));
  }
  return [...paths];
}

const GLOB_CHARS = /[*?[]/;

function segmentPattern(segment: string): RegExp {
  let source = '';
  for (let index = 0; index < segment.length; index++) {
    const char = segment[index]!;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      const close = segment.indexOf(']', index + 2);
      if (close === -1) source += '\\[';
      else {
        // a `]` right after `[` (or `[!`) is a member, as in a shell: escaped for the RegExp class
        const body = segment
          .slice(index + 1, close)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')
          .replace(/]/g, '\\]');
        source += `[${body}]`;
        index = close;
      }
    } else source += char.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * True when the shell wildcard `pattern` (an absolute path) could expand to
 * `sample` or to something inside it. As in a shell, a wildcard segment that
 * does not start with `.` does not match hidden names.
 */
export function globReaches(pattern: string, sample: string): boolean {
  const patternSegments = pattern.split('/').filter(Boolean);
  const sampleSegments = sample.split('/').filter(Boolean);
  for (let index = 0; index < sampleSegments.length; index++) {
    const segment = patternSegments[index];
    if (segment === undefined) return false;
    if (segment === '**') return true;
    const name = sampleSegments[index]!;
    if (!GLOB_CHARS.test(segment)) {
      if (segment !== name) return false;
      continue;
    }
    if (name.startsWith('.') && !segment.startsWith('.')) return false;
    if (!segmentPattern(segment).test(name)) return false;
  }
  return true;
}

/**
 * The forbidden rule a string mentions, if any: a path inside a forbidden
 * location, or a wildcard that could expand into one.
 *
 * @example
 * mentionedRule('cat $HOME/.ssh/id_rsa', forbiddenRules(context), context)?.label; // '~/.ssh'
 */
export function mentionedRule(
  text: string,
  rules: ForbiddenRule[],
  context: { home: string; workspace: string },
): ForbiddenRule | undefined {
  for (const path of pathsIn(text, context)) {
    const direct = rules.find((rule) => rule.matches(path));
    if (direct) return direct;
    if (GLOB_CHARS.test(path)) {
      const reached = rules.find((rule) => rule.samples.some((sample) => globReaches(path, sample)));
      if (reached) return reached;
    }
  }
  return undefined;
}
