// The authoring surface of an executor's code file. Zero dependencies beside
// Node built-ins: the harness maps `@metnos/executor-sdk/define` to this file
// inside the sandbox.
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const EXECUTOR = Symbol.for('metnos.executor.definition');

/**
 * Declares an executor. The code file's default export must be its result.
 *
 * @example
 * export default defineExecutor({
 *   async run(args, ctx) { return ok(`hello ${args.name}`); },
 * });
 */
export function defineExecutor(definition) {
  if (definition === null || typeof definition !== 'object' || typeof definition.run !== 'function') {
    throw new TypeError('defineExecutor expects an object with a run(args, ctx) function');
  }
  return Object.freeze({ ...definition, [EXECUTOR]: true });
}

/** True when `value` came from defineExecutor. */
export function isExecutorDefinition(value) {
  return value !== null && typeof value === 'object' && value[EXECUTOR] === true;
}

/** A successful outcome. */
export function ok(content, metadata) {
  return metadata === undefined ? { ok: true, content } : { ok: true, content, metadata };
}

/** A failed outcome with one of the manifest's error classes. */
export function fail(errorClass, message, metadata) {
  const outcome = { ok: false, error: { class: errorClass, message } };
  return metadata === undefined ? outcome : { ...outcome, metadata };
}

/** Throw this from run() to fail with an error class; the harness turns it into fail(). */
export class ExecutorFailure extends Error {
  constructor(errorClass, message) {
    super(message);
    this.name = 'ExecutorFailure';
    this.errorClass = errorClass;
  }
}

/** True when `target` is `root` or inside it (both absolute). */
export function isInside(root, target) {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The real path of `path`, or of its deepest existing ancestor with the rest appended. */
export async function realpathLenient(path) {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(await realpathLenient(parent), basename(path));
  }
}

/**
 * Resolves a caller's path against the workspace and keeps it inside `roots`
 * (the profile's read or write list), both as written and after following
 * symbolic links; fails with `PermissionDenied` otherwise. The sandbox checks
 * the same before the process starts; this keeps the executor honest on its own.
 *
 * @example
 * const file = await resolveAllowedPath(args.path, ctx, { roots: ctx.profile.fs.read, verb: 'read' });
 */
export async function resolveAllowedPath(input, ctx, options) {
  const { roots, verb = 'read', followLast = true, allowRoot = true, reserved = [] } = options;
  if (input.includes('\0')) throw new ExecutorFailure('PermissionDenied', 'the path contains a NUL byte');
  const absolute = resolve(ctx.workspace, input);
  if (!roots.some((root) => isInside(resolve(root), absolute))) {
    throw new ExecutorFailure(
      'PermissionDenied',
      `${input} is outside the folders this executor may ${verb}`,
    );
  }
  const real = followLast
    ? await realpathLenient(absolute)
    : join(await realpathLenient(dirname(absolute)), basename(absolute));
  const realRoots = await Promise.all(roots.map((root) => realpathLenient(resolve(root))));
  if (!realRoots.some((root) => isInside(root, real) && (allowRoot || real !== root))) {
    throw new ExecutorFailure(
      'PermissionDenied',
      `${input} leads outside the folders this executor may ${verb}`,
    );
  }
  // A file with a second name may be a secret's other name; the host refuses to name one, and so does this.
  const info = await lstat(real).catch(() => undefined);
  if (info?.isFile() && info.nlink > 1 && ctx.profile?.fs?.hardlinks !== true) {
    throw new ExecutorFailure(
      'PermissionDenied',
      `${input} has ${info.nlink} hard links; executors open no file with more than one name unless their profile sets fs.hardlinks = true`,
    );
  }
  if (reserved.length > 0) {
    const workspace = await realpathLenient(resolve(ctx.workspace));
    for (const name of reserved) {
      if (isInside(join(workspace, name), real)) {
        throw new ExecutorFailure(
          'PermissionDenied',
          `${name}/ is reserved to Metnos and never touched by executors`,
        );
      }
    }
  }
  return real;
}

/** A path as the user should see it: relative to the workspace when inside it. */
export function displayPath(absolute, ctx) {
  const workspace = resolve(ctx.workspace);
  return isInside(workspace, absolute) ? relative(workspace, absolute) || '.' : absolute;
}
