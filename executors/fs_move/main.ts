import type { Stats } from 'node:fs';
import { cp, lstat, mkdir, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { defineExecutor, type ExecutorContext, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

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

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The real path of `path`, or of its deepest existing ancestor with the rest appended. */
async function realpathLenient(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(await realpathLenient(parent), basename(path));
  }
}

/**
 * Resolves a caller's path against the workspace and keeps it inside the
 * profile's write roots. The last component is not followed, so a symbolic
 * link is handled as the link itself; every folder above it is. An allowed
 * root itself may be a destination (move into it) but never a source.
 */
async function resolveAllowed(
  input: string,
  ctx: ExecutorContext,
  roots: readonly string[],
  allowRoot: boolean,
): Promise<string> {
  if (input.includes('\0')) throw new ExecutorFailure('PermissionDenied', 'the path contains a NUL byte');
  const absolute = resolve(ctx.workspace, input);
  if (!roots.some((root) => isInside(resolve(root), absolute))) {
    throw new ExecutorFailure('PermissionDenied', `${input} is outside the folders this executor may change`);
  }
  const real = join(await realpathLenient(dirname(absolute)), basename(absolute));
  const realRoots = await Promise.all(roots.map((root) => realpathLenient(resolve(root))));
  if (!realRoots.some((root) => isInside(root, real) && (allowRoot || real !== root))) {
    throw new ExecutorFailure('PermissionDenied', `${input} is outside the folders this executor may change`);
  }
  const workspace = await realpathLenient(resolve(ctx.workspace));
  for (const reserved of RESERVED) {
    if (isInside(join(workspace, reserved), real)) {
      throw new ExecutorFailure(
        'PermissionDenied',
        `${reserved}/ is reserved to Metnos and never changed by executors`,
      );
    }
  }
  return real;
}

function displayPath(absolute: string, ctx: ExecutorContext): string {
  const workspace = resolve(ctx.workspace);
  return isInside(workspace, absolute) ? relative(workspace, absolute) || '.' : absolute;
}

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
    const source = await resolveAllowed(args.source, ctx, roots, false);
    let destination = await resolveAllowed(args.destination, ctx, roots, true);
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
