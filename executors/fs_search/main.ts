import type { Dirent } from 'node:fs';
import { opendir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  query: string;
  path?: string;
  regex?: boolean;
  case_sensitive?: boolean;
  include?: string;
  include_hidden?: boolean;
  max_results?: number;
  max_file_bytes?: number;
}

interface Match {
  file: string;
  line: number;
  column: number;
  text: string;
}

interface Output {
  matches: Match[];
  count: number;
  files_searched: number;
  files_skipped: number;
  truncated: boolean;
}

const LINE_WINDOW = 400;
const ALWAYS_SKIPPED = new Set(['node_modules']);

/** Compiles a file-name glob: `*`, `?`, `{a,b}` and `[...]`. */
function globToRegExp(glob: string): RegExp {
  let source = '';
  let braces = 0;
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!;
    if (char === '*') {
      source += '.*';
    } else if (char === '?') {
      source += '.';
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
      if (close === -1)
        throw new ExecutorFailure('BadPattern', `include "${glob}" has a "[" without its "]"`);
      source += `[${glob
        .slice(index + 1, close)
        .replace(/^!/, '^')
        .replace(/[\\\]]/g, '\\$&')}]`;
      index = close;
    } else {
      source += char.replace(/[.+^$(){}|\\\]/]/g, '\\$&');
    }
  }
  if (braces > 0) throw new ExecutorFailure('BadPattern', `include "${glob}" has a "{" without its "}"`);
  try {
    return new RegExp(`^${source}$`, 'u');
  } catch (error) {
    throw new ExecutorFailure(
      'BadPattern',
      `include "${glob}" is not a usable glob: ${(error as Error).message}`,
    );
  }
}

function compileQuery(args: Args): RegExp {
  const flags = args.case_sensitive ? '' : 'i';
  if (!args.regex) return new RegExp(args.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), `${flags}u`);
  try {
    return new RegExp(args.query, `${flags}u`);
  } catch {
    try {
      // Patterns written for non-Unicode mode (e.g. "\-" outside a class) still deserve a chance.
      return new RegExp(args.query, flags);
    } catch (error) {
      throw new ExecutorFailure(
        'BadPattern',
        `"${args.query}" is not a valid regular expression: ${(error as Error).message}`,
      );
    }
  }
}

/** The line, or a window of it around the match when it is very long. */
function excerpt(line: string, index: number): string {
  if (line.length <= LINE_WINDOW) return line;
  const start = Math.max(0, Math.min(index - LINE_WINDOW / 4, line.length - LINE_WINDOW));
  return `${start > 0 ? '…' : ''}${line.slice(start, start + LINE_WINDOW)}${start + LINE_WINDOW < line.length ? '…' : ''}`;
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const pattern = compileQuery(args);
    const include = args.include === undefined ? undefined : globToRegExp(args.include);
    const maxResults = args.max_results ?? 100;
    const maxFileBytes = args.max_file_bytes ?? 4 * 1024 * 1024;
    const root = await resolveAllowedPath(args.path ?? '.', ctx, {
      roots: ctx.profile.fs.read,
      verb: 'read',
    });
    const shownRoot = displayPath(root, ctx);
    const rootStats = await stat(root).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new ExecutorFailure('NotFound', `${shownRoot} does not exist`);
      }
      if (code === 'EACCES' || code === 'EPERM') {
        throw new ExecutorFailure('PermissionDenied', `${shownRoot} cannot be read`);
      }
      throw error;
    });

    const matches: Match[] = [];
    let searched = 0;
    let skipped = 0;
    let truncated = false;

    const searchFile = async (file: string, size: number): Promise<void> => {
      if (size > maxFileBytes) {
        skipped++;
        return;
      }
      const bytes = await readFile(file).catch(() => undefined);
      if (bytes === undefined || bytes.subarray(0, 8192).includes(0)) {
        skipped++;
        return;
      }
      searched++;
      const shown = displayPath(file, ctx);
      const lines = bytes.toString('utf8').split(/\r?\n/);
      if (lines.at(-1) === '') lines.pop();
      for (let index = 0; index < lines.length; index++) {
        const line = lines[index]!;
        const found = pattern.exec(line);
        if (found === null) continue;
        if (matches.length >= maxResults) {
          truncated = true;
          return;
        }
        matches.push({
          file: shown,
          line: index + 1,
          column: [...line.slice(0, found.index)].length + 1,
          text: excerpt(line, found.index),
        });
      }
    };

    const walk = async (folder: string): Promise<void> => {
      const dirents: Dirent[] = [];
      try {
        for await (const dirent of await opendir(folder)) dirents.push(dirent);
      } catch {
        skipped++;
        return;
      }
      dirents.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
      for (const dirent of dirents) {
        if (truncated) return;
        if (!args.include_hidden && dirent.name.startsWith('.')) continue;
        const path = join(folder, dirent.name);
        if (dirent.isDirectory()) {
          if (!ALWAYS_SKIPPED.has(dirent.name)) await walk(path);
        } else if (dirent.isFile() && (include === undefined || include.test(dirent.name))) {
          const stats = await stat(path).catch(() => undefined);
          if (stats === undefined) skipped++;
          else await searchFile(path, stats.size);
        }
      }
    };

    if (rootStats.isDirectory()) await walk(root);
    else if (rootStats.isFile()) await searchFile(root, rootStats.size);
    else throw new ExecutorFailure('NotFound', `${shownRoot} is neither a file nor a folder`);
    return ok({
      matches,
      count: matches.length,
      files_searched: searched,
      files_skipped: skipped,
      truncated,
    });
  },
});
