import type { Dirent, Stats } from 'node:fs';
import { lstat, opendir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  path?: string;
  recursive?: boolean;
  max_depth?: number;
  pattern?: string;
  type?: 'any' | 'file' | 'directory';
  include_hidden?: boolean;
  max_entries?: number;
}

type EntryType = 'file' | 'directory' | 'symlink' | 'other';

interface Entry {
  path: string;
  name: string;
  type: EntryType;
  size: number;
  mtime: string;
}

interface Output {
  path: string;
  entries: Entry[];
  count: number;
  truncated: boolean;
  unreadable: number;
}

function failureForCode(error: unknown, path: string): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') throw new ExecutorFailure('NotFound', `${path} does not exist`);
  if (code === 'ENOTDIR') throw new ExecutorFailure('NotADirectory', `${path} is not a folder; use fs_read`);
  if (code === 'EACCES' || code === 'EPERM') {
    throw new ExecutorFailure('PermissionDenied', `${path} cannot be listed (${code})`);
  }
  throw error;
}

/**
 * Compiles a glob to a regular expression: `*` and `?` stay within one path
 * segment, `**` spans segments, `{a,b}` is an alternative, `[...]` a class.
 */
function globToRegExp(glob: string): RegExp {
  let source = '';
  let braces = 0;
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!;
    if (char === '*') {
      if (glob[index + 1] === '*') {
        const slashAfter = glob[index + 2] === '/';
        source += slashAfter ? '(?:.*/)?' : '.*';
        index += slashAfter ? 2 : 1;
      } else {
        source += '[^/]*';
      }
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '{') {
      braces++;
      source += '(?:';
    } else if (char === '}' && braces > 0) {
      braces--;
      source += ')';
    } else if (char === ',' && braces > 0) {
      source += '|';
    } else if (char === '[') {
      const close = glob.indexOf(']', index + 2);
      if (close === -1) throw new ExecutorFailure('BadPattern', `"${glob}" has a "[" without its "]"`);
      const body = glob
        .slice(index + 1, close)
        .replace(/^!/, '^')
        .replace(/[\\\]]/g, '\\$&');
      source += `[${body}]`;
      index = close;
    } else {
      source += char.replace(/[.+^$(){}|\\\]]/g, '\\$&');
    }
  }
  if (braces > 0) throw new ExecutorFailure('BadPattern', `"${glob}" has a "{" without its "}"`);
  try {
    return new RegExp(`^${source}$`, 'u');
  } catch (error) {
    throw new ExecutorFailure('BadPattern', `"${glob}" is not a usable glob: ${(error as Error).message}`);
  }
}

function entryType(dirent: Dirent | Stats): EntryType {
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  return 'other';
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const input = args.path ?? '.';
    const root = await resolveAllowedPath(input, ctx, { roots: ctx.profile.fs.read, verb: 'read' });
    const shown = displayPath(root, ctx);
    const rootStats = await stat(root).catch((error: unknown) => failureForCode(error, shown));
    if (!rootStats.isDirectory()) {
      throw new ExecutorFailure('NotADirectory', `${shown} is not a folder; use fs_read`);
    }

    const maxDepth = args.recursive ? (args.max_depth ?? 5) : 1;
    const maxEntries = args.max_entries ?? 500;
    const wanted = args.type ?? 'any';
    const matcher = args.pattern === undefined ? undefined : globToRegExp(args.pattern);
    const matchesPath = args.pattern?.includes('/') ?? false;
    const entries: Entry[] = [];
    let unreadable = 0;
    let truncated = false;

    const walk = async (folder: string, prefix: string, depth: number): Promise<void> => {
      let dirents: Dirent[];
      try {
        dirents = [];
        for await (const dirent of await opendir(folder)) dirents.push(dirent);
      } catch (error) {
        if (depth === 1) failureForCode(error, shown);
        unreadable++;
        return;
      }
      dirents.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
      for (const dirent of dirents) {
        if (truncated) return;
        if (!args.include_hidden && dirent.name.startsWith('.')) continue;
        const path = prefix === '' ? dirent.name : `${prefix}/${dirent.name}`;
        const type = entryType(dirent);
        const typeMatches = wanted === 'any' || wanted === type;
        const nameMatches = matcher === undefined || matcher.test(matchesPath ? path : dirent.name);
        if (typeMatches && nameMatches) {
          if (entries.length >= maxEntries) {
            truncated = true;
            return;
          }
          const stats = await lstat(join(folder, dirent.name)).catch(() => undefined);
          entries.push({
            path,
            name: dirent.name,
            type,
            size: stats && type !== 'directory' ? stats.size : 0,
            mtime: (stats?.mtime ?? new Date(0)).toISOString(),
          });
        }
        if (type === 'directory' && depth < maxDepth) await walk(join(folder, dirent.name), path, depth + 1);
      }
    };
    await walk(root, '', 1);
    return ok({ path: shown, entries, count: entries.length, truncated, unreadable });
  },
});
