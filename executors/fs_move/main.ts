import type { Stats } from 'node:fs';
import { cp, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  isInside,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  source: string;
  destination: string;
  overwrite?: boolean;
  create_dirs?: boolean;
}

type EntryType = 'file' | 'directory' | 'symlink' | 'other';

interface Output {
  from: string;
  to: string;
  type: EntryType;
  overwritten: boolean;
  moved: boolean;
}

/** Workspace folders no executor writes into, whatever its profile says. */
const RESERVED = ['.audit'];

function entryType(stats: Stats): EntryType {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  return 'other';
}

function failureForCode(error: unknown, from: string, to: string): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    throw new ExecutorFailure(
      'NotFound',
      `the folder of ${to} does not exist; pass create_dirs: true to create it`,
    );
  }
  if (code === 'ENOTDIR') {
    throw new ExecutorFailure('InvalidTarget', `a parent of ${to} is a file, not a folder`);
  }
  if (code === 'EEXIST' || code === 'ENOTEMPTY' || code === 'EISDIR') {
    throw new ExecutorFailure('Exists', `${to} already exists and cannot be replaced by ${from}`);
  }
  if (code === 'EINVAL') {
    throw new ExecutorFailure('InvalidTarget', `cannot move ${from} into itself (${to})`);
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'EBUSY') {
    throw new ExecutorFailure('PermissionDenied', `cannot move ${from} to ${to} (${code})`);
  }
  throw error;
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const roots = ctx.profile.fs.write;
    const source = await resolveAllowedPath(args.source, ctx, {
      roots,
      verb: 'change',
      followLast: false,
      allowRoot: false,
      reserved: RESERVED,
    });
    let destination = await resolveAllowedPath(args.destination, ctx, {
      roots,
      verb: 'change',
      followLast: false,
      reserved: RESERVED,
    });
    const from = displayPath(source, ctx);

    const sourceStats = await lstat(source).catch(() => undefined);
    if (sourceStats === undefined) throw new ExecutorFailure('NotFound', `${from} does not exist`);
    const type = entryType(sourceStats);

    const existing = await lstat(destination).catch(() => undefined);
    if (existing?.isDirectory() && destination !== source) {
      destination = join(destination, basename(source));
    }
    const to = displayPath(destination, ctx);
    if (destination === source) return ok({ from, to, type, overwritten: false, moved: false });
    if (isInside(source, destination)) {
      throw new ExecutorFailure('InvalidTarget', `cannot move ${from} into itself (${to})`);
    }

    const target = await lstat(destination).catch(() => undefined);
    if (target) {
      if (!args.overwrite) {
        throw new ExecutorFailure('Exists', `${to} already exists; pass overwrite: true to replace it`);
      }
      if (target.isDirectory()) {
        throw new ExecutorFailure('Exists', `${to} is a folder and is never replaced`);
      }
    }
    if (args.create_dirs) {
      await mkdir(dirname(destination), { recursive: true }).catch((error: unknown) =>
        failureForCode(error, from, to),
      );
    }
    try {
      await rename(source, destination);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') failureForCode(error, from, to);
      // Different mounts (bind mounts count): copy, then remove the original.
      await cp(source, destination, {
        recursive: true,
        force: Boolean(args.overwrite),
        errorOnExist: true,
        verbatimSymlinks: true,
      }).catch((copyError: unknown) => failureForCode(copyError, from, to));
      await rm(source, { recursive: true, force: true });
    }
    return ok({ from, to, type, overwritten: target !== undefined, moved: true });
  },
});
