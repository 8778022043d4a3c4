import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

type Mode = 'overwrite' | 'append' | 'create';

interface Args {
  path: string;
  content: string;
  mode?: Mode;
  create_dirs?: boolean;
  encoding?: 'utf8' | 'base64';
}

interface Output {
  path: string;
  mode: Mode;
  bytes_written: number;
  size: number;
  created: boolean;
  dirs_created: boolean;
}

/** Decoded content above this is refused; the schema bounds the text, this bounds the bytes. */
const MAX_BYTES = 8 * 1024 * 1024;
/** Workspace folders no executor writes into, whatever its profile says. */
const RESERVED = ['.audit'];

function failureForCode(error: unknown, path: string): never {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EEXIST') {
    throw new ExecutorFailure('Exists', `${path} already exists; use mode "overwrite" or "append"`);
  }
  if (code === 'ENOENT') {
    throw new ExecutorFailure(
      'NotFound',
      `the folder of ${path} does not exist; pass create_dirs: true to create it`,
    );
  }
  if (code === 'ENOTDIR') {
    throw new ExecutorFailure('NotFound', `a parent of ${path} is a file, not a folder`);
  }
  if (code === 'EISDIR') throw new ExecutorFailure('IsADirectory', `${path} is a directory`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    throw new ExecutorFailure('PermissionDenied', `${path} cannot be written (${code})`);
  }
  throw error;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Writes all of `bytes` through a fresh handle opened with `flags`. */
async function writeWith(path: string, flags: string, bytes: Uint8Array, mode?: number): Promise<void> {
  const handle = await open(path, flags, mode);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const mode = args.mode ?? 'overwrite';
    const bytes =
      args.encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
    if (bytes.length > MAX_BYTES) {
      throw new ExecutorFailure(
        'TooLarge',
        `the content is ${bytes.length} bytes; at most ${MAX_BYTES} are written at once`,
      );
    }
    const path = await resolveAllowedPath(args.path, ctx, {
      roots: ctx.profile.fs.write,
      verb: 'write',
      reserved: RESERVED,
    });
    const shown = displayPath(path, ctx);
    const parent = dirname(path);

    let dirsCreated = false;
    if (args.create_dirs && !(await exists(parent))) {
      await mkdir(parent, { recursive: true }).catch((error: unknown) => failureForCode(error, shown));
      dirsCreated = true;
    }
    const before = await stat(path).catch(() => undefined);
    if (before?.isDirectory()) throw new ExecutorFailure('IsADirectory', `${shown} is a directory`);
    if (before && mode === 'create') {
      throw new ExecutorFailure('Exists', `${shown} already exists; use mode "overwrite" or "append"`);
    }

    if (mode === 'overwrite') {
      // Written beside the target and renamed over it, so readers never see half a file.
      const temp = join(parent, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        await writeWith(temp, 'wx', bytes, before ? before.mode & 0o777 : 0o644);
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        failureForCode(error, shown);
      }
    } else {
      await writeWith(path, mode === 'append' ? 'a' : 'wx', bytes).catch((error: unknown) =>
        failureForCode(error, shown),
      );
    }
    const after = await stat(path);
    return ok({
      path: shown,
      mode,
      bytes_written: bytes.length,
      size: after.size,
      created: before === undefined,
      dirs_created: dirsCreated,
    });
  },
});
