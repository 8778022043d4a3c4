import { posix } from 'node:path';
import type { ArgumentInventory } from './arguments.ts';
import { isWithin } from './paths.ts';
import { parseShell, type SimpleCommand } from './shell-words.ts';

/** The destructive command patterns the guard knows, by the label a reason shows. */
export const DESTRUCTIVE_PATTERNS = [
  'rm -r on /, ~ or a system folder',
  'rm --no-preserve-root',
  'recursive delete of /, ~ or a system folder in code',
  'find -delete on /, ~ or a system folder',
  'mkfs (formats a file system)',
  'wipefs or blkdiscard (erases a device)',
  'dd writing to a device',
  'output redirected to a device',
  'shred on a device',
  'fork bomb',
  'recursive chmod/chown on /, ~ or a system folder',
] as const;

/** A label from {@link DESTRUCTIVE_PATTERNS}. */
export type DestructivePattern = (typeof DESTRUCTIVE_PATTERNS)[number];

/** Top-level system folders whose recursive removal or re-permissioning breaks the machine. */
export const SYSTEM_FOLDERS = [
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/opt',
  '/proc',
  '/root',
  '/sbin',
  '/srv',
  '/sys',
  '/usr',
  '/var',
] as const;

/** Device files that are safe to write to. */
const HARMLESS_DEVICES = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/stdin',
  '/dev/tty',
];

/** Words that run the command after them: skipped to find the real program. */
const WRAPPERS = new Set([
  'sudo',
  'doas',
  'env',
  'nice',
  'nohup',
  'time',
  'command',
  'builtin',
  'exec',
  'xargs',
  'timeout',
  'stdbuf',
  'ionice',
  'busybox',
  'chrt',
  'setsid',
  'unbuffer',
]);
/** Wrapper options that take a separate value (`sudo -u root`, `nice -n 5`). */
const WRAPPER_OPTIONS_WITH_VALUE = new Set([
  '-u',
  '-g',
  '-n',
  '-c',
  '-p',
  '-C',
  '-s',
  '-k',
  '-I',
  '-L',
  '-P',
  '-d',
  '-a',
  '-E',
]);

const MAX_NESTING = 3;

interface Place {
  home: string;
  workspace: string;
}

function isHarmlessDevice(path: string): boolean {
  return HARMLESS_DEVICES.includes(path) || /^\/dev\/(fd|pts)\/\d+$/.test(path);
}

/**
 * What a target covers once `..` is resolved and trailing wildcards are read
 * as "everything in that folder": `/*` covers `/`, `~/.*` covers the hidden
 * files of home.
 */
function coverage(target: string, place: Place): { folder: string; wildcard: 'none' | 'visible' | 'hidden' } {
  const absolute = target.startsWith('/') ? target : posix.join(place.workspace, target);
  const kept: string[] = [];
  let wildcard: 'none' | 'visible' | 'hidden' = 'none';
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      kept.pop();
      continue;
    }
    if (/^[*?.[\]!]+$/.test(segment) && /[*?]/.test(segment)) {
      wildcard = segment.startsWith('.') ? 'hidden' : 'visible';
      break;
    }
    kept.push(segment);
  }
  return { folder: `/${kept.join('/')}`, wildcard };
}

/**
 * True when removing (or re-permissioning) `target` recursively would take
 * out the machine, the user's home, or the workspace with its audit ledger.
 */
function isCriticalTarget(target: string, place: Place, workspaceCounts = true): boolean {
  const { folder, wildcard } = coverage(target, place);
  if ((SYSTEM_FOLDERS as readonly string[]).includes(folder)) return true;
  for (const anchor of [place.home, place.workspace]) {
    // a folder that holds the home or the workspace (e.g. `/home`, `~/..`)
    if (isWithin(anchor, folder) && anchor !== folder) return true;
  }
  if (folder === place.home) return true;
  // `rm -rf *` inside the workspace spares the hidden `.audit`; the workspace itself or `.*` does not
  return workspaceCounts && folder === place.workspace && wildcard !== 'visible';
}

function shortFlags(word: string): string {
  return /^-[A-Za-z]+$/.test(word) ? word.slice(1) : '';
}

interface Program {
  name: string;
  args: string[];
}

/** How many other readings of wrapper options one command may add, so hostile text cannot multiply them. */
const MAX_READINGS = 16;

/**
 * Every program a word list may run, past assignments and wrappers. An option such as `-n`
 * takes a value for one wrapper (`nice -n 5`) and none for another (`sudo -n rm …`), so each
 * such option is read both ways: the program behind it is found either way.
 */
function programsOf(words: string[], start = 0, budget = { left: MAX_READINGS }): Program[] {
  let index = start;
  while (index < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index]!)) index++;
  if (index >= words.length) return [];
  const base = posix.basename(words[index]!);
  if (!WRAPPERS.has(base)) return [{ name: base, args: words.slice(index + 1) }];
  return afterWrapper(words, index + 1, base, budget);
}

function afterWrapper(words: string[], start: number, wrapper: string, budget: { left: number }): Program[] {
  const found: Program[] = [];
  let index = start;
  while (index < words.length && words[index]!.startsWith('-')) {
    if (!WRAPPER_OPTIONS_WITH_VALUE.has(words[index]!)) {
      index++;
      continue;
    }
    if (budget.left > 0) {
      budget.left--;
      found.push(...afterWrapper(words, index + 1, wrapper, budget));
    }
    index += 2;
  }
  // `timeout 10 rm …`: the duration is not the program
  if (wrapper === 'timeout' && /^\d/.test(words[index] ?? '')) index++;
  return [...found, ...programsOf(words, index, budget)];
}

function operands(args: string[]): string[] {
  const result: string[] = [];
  let afterDashes = false;
  for (const arg of args) {
    if (!afterDashes && arg === '--') afterDashes = true;
    else if (afterDashes || !arg.startsWith('-') || arg === '-') result.push(arg);
  }
  return result;
}

/** The text around one command: every word of it, and whether it substitutes commands (`$(…)`, backticks). */
interface Surroundings {
  words: string[];
  substituted: boolean;
}

/**
 * Whether a recursive `rm`/`chmod` hits a critical target: one of its
 * operands, or, when a target comes from elsewhere (`$(…)`, backticks,
 * `… | xargs rm -rf`), any word of the surrounding text, since any of them
 * may become the target. Those unseen targets do not count the workspace
 * itself, so `find . -name '*.o' | xargs rm -rf` stays ordinary. The reader
 * splits a substitution off as a command of its own, so `rm -rf build $(echo /)`
 * counts as hidden through the text around it.
 */
function hitsCriticalTarget(args: string[], around: Surroundings, place: Place): boolean {
  const listed = operands(args);
  if (listed.some((target) => isCriticalTarget(target, place))) return true;
  const hidden =
    around.substituted ||
    listed.length === 0 ||
    listed.some((target) => target.includes('$(') || target.includes('`'));
  if (!hidden) return false;
  const inner = listed.flatMap((target) => parseShell(target, () => '').flatMap((command) => command.words));
  return [...inner, ...around.words].some((target) => isCriticalTarget(target, place, false));
}

function inspectCommand(
  command: SimpleCommand,
  place: Place,
  around: Surroundings,
): DestructivePattern | undefined {
  for (const target of command.redirects) {
    const path = posix.resolve(place.workspace, target);
    if (path.startsWith('/dev/') && !isHarmlessDevice(path)) return 'output redirected to a device';
  }
  for (const program of programsOf(command.words)) {
    const found = inspectProgram(program, place, around);
    if (found) return found;
  }
  return undefined;
}

function inspectProgram(
  { name, args }: Program,
  place: Place,
  around: Surroundings,
): DestructivePattern | undefined {
  const recursive = args.some((arg) => /[rR]/.test(shortFlags(arg)) || arg === '--recursive');
  if (name === 'rm') {
    if (args.includes('--no-preserve-root')) return 'rm --no-preserve-root';
    if (recursive && hitsCriticalTarget(args, around, place)) return 'rm -r on /, ~ or a system folder';
  }
  if (['chmod', 'chown', 'chgrp'].includes(name)) {
    const chRecursive = args.some((arg) => shortFlags(arg).includes('R') || arg === '--recursive');
    if (chRecursive && hitsCriticalTarget(args, around, place))
      return 'recursive chmod/chown on /, ~ or a system folder';
  }
  if (name === 'find') {
    const starts: string[] = [];
    for (const arg of args) {
      if (arg.startsWith('-') || arg === '(' || arg === '!') break;
      starts.push(arg);
    }
    const deletes =
      args.includes('-delete') ||
      args.some(
        (arg, index) =>
          /^-exec(dir)?$/.test(arg) && ['rm', 'shred'].includes(posix.basename(args[index + 1] ?? '')),
      );
    // `find . -name '*.tmp' -delete` is ordinary workspace cleaning; the workspace itself is not a critical start
    if (deletes && starts.some((start) => isCriticalTarget(start, place, false)))
      return 'find -delete on /, ~ or a system folder';
  }
  if (name.startsWith('mkfs') || name === 'mke2fs') return 'mkfs (formats a file system)';
  if (name === 'wipefs' || name === 'blkdiscard') return 'wipefs or blkdiscard (erases a device)';
  if (name === 'dd') {
    for (const arg of args) {
      if (!arg.startsWith('of=')) continue;
      const path = posix.resolve(place.workspace, arg.slice(3));
      if (path.startsWith('/dev/') && !isHarmlessDevice(path)) return 'dd writing to a device';
    }
  }
  if (name === 'shred' || name === 'tee') {
    for (const target of operands(args)) {
      const path = posix.resolve(place.workspace, target);
      if (path.startsWith('/dev/') && !isHarmlessDevice(path))
        return name === 'shred' ? 'shred on a device' : 'output redirected to a device';
    }
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Fork bombs: a shell function that calls itself twice with one copy in the
 * background (`:(){ :|:& };:`, `bomb(){ bomb|bomb& };bomb`), Perl's
 * `fork while fork`, a `while True: os.fork()` loop, batch `%0|%0`.
 */
export function looksLikeForkBomb(text: string): boolean {
  if (
    text.includes('fork') &&
    (/fork\s*while\s*fork/.test(text) ||
      /while\s*\(?\s*(?:1|true|True)\s*\)?\s*[:{]?\s*(?:os\.)?fork\s*\(\s*\)/.test(text))
  )
    return true;
  if (/%0\s*\|\s*%0/.test(text)) return true;
  if (!text.includes('{') || !/[&|]/.test(text)) return false;
  const definitions = /(?:function\s+)?([^\s(){};|&]+)\s*(?:\(\s*\))?\s*\{([^}]*)\}/g;
  for (const match of text.matchAll(definitions)) {
    const name = match[1]!;
    const body = match[2]!;
    const calls =
      body.match(new RegExp(`(?:^|[\\s|&;])${escapeRegExp(name)}(?=$|[\\s|&;])`, 'g'))?.length ?? 0;
    if (calls >= 2 && /[&|]/.test(body)) return true;
  }
  return false;
}

/** Library calls that delete a tree: Python, Node, Ruby, Rust, and the rimraf package. */
const TREE_DELETE =
  /\b(?:rmtree|rmSync|rm_rf|rm_r|remove_dir_all|rimraf(?:\.sync)?|(?:fs|fsp|promises)\.rm)\s*\(\s*/g;
/** Expressions for the home folder inside such a call. */
const HOME_EXPRESSION =
  /^(?:os\.path\.expanduser\(\s*['"]~\/?['"]\s*\)|(?:pathlib\.)?Path\.home\(\s*\)|(?:os\.)?homedir\(\s*\)|Dir\.home|process\.env\.HOME|os\.environ\[\s*['"]HOME['"]\s*\])/;

/** A tree-deleting library call whose first argument is `/`, `~` or a system folder, as a literal or a home expression. */
function deletesTreeInCode(text: string, place: Place): boolean {
  if (!/rmtree|rmSync|rm_r|remove_dir_all|rimraf|\.rm\s*\(/.test(text)) return false;
  for (const match of text.matchAll(TREE_DELETE)) {
    const start = match.index + match[0].length;
    const rest = text.slice(start, start + 200);
    if (HOME_EXPRESSION.test(rest)) return true;
    const literal = /^(['"`])([^'"`]*)\1/.exec(rest);
    if (literal && isCriticalTarget(literal[2]!.replace(/^~(?=\/|$)/, place.home), place)) return true;
  }
  return false;
}

function inspectText(text: string, place: Place, depth: number): DestructivePattern | undefined {
  if (looksLikeForkBomb(text)) return 'fork bomb';
  if (deletesTreeInCode(text, place)) return 'recursive delete of /, ~ or a system folder in code';
  const commands = parseShell(text, (name) => (name === 'HOME' ? place.home : ''));
  return inspectCommands(commands, place, depth, /\$\(|`/.test(text));
}

function inspectCommands(
  commands: SimpleCommand[],
  place: Place,
  depth: number,
  substituted = false,
): DestructivePattern | undefined {
  const around = { words: commands.flatMap((command) => command.words), substituted };
  for (const command of commands) {
    const found = inspectCommand(command, place, around);
    if (found) return found;
    if (depth >= MAX_NESTING) continue;
    // `sh -c "…"`, `ssh host "…"`, `eval "…"`: a word that is itself a command line
    for (const word of command.words) {
      if (!/[\s;|&]/.test(word)) continue;
      const nested = inspectText(word, place, depth + 1);
      if (nested) return nested;
    }
  }
  return undefined;
}

/**
 * The first destructive command pattern in a call's arguments, if any. Reads
 * every string value as a shell line, every string array as an argv (and
 * joined, for `['rm', '-rf', '/']`), and all values joined, for commands split
 * over fields (`{ command: 'rm', args: ['-rf', '/'] }`). Relative targets are
 * read against the workspace; the reader does not follow `cd`.
 *
 * @example
 * destructiveCommand(inventory({ command: 'rm', args: ['-rf', '~'] }), { home: '/home/ada', workspace: '/w' }); // 'rm -r on /, ~ or a system folder'
 */
export function destructiveCommand(
  found: ArgumentInventory,
  context: { home: string; workspace: string },
): DestructivePattern | undefined {
  const place = { home: posix.resolve(context.home), workspace: posix.resolve(context.workspace) };
  for (const entry of found.strings) {
    if (entry.role !== 'value') continue;
    const hit = inspectText(entry.text, place, 0);
    if (hit) return hit;
  }
  for (const list of found.wordLists) {
    const hit =
      inspectCommands([{ words: list.words, redirects: [] }], place, 0) ??
      inspectText(list.words.join(' '), place, 0);
    if (hit) return hit;
  }
  return inspectText(found.joined, place, 0);
}
