import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The file the server's bearer token lives in, inside the config dir. */
export const TOKEN_FILE = 'server.token';

/** The token file is missing, not the user's, readable by others, or not a token. */
export class ServerTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerTokenError';
  }
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function readToken(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ServerTokenError(
      code === 'ENOENT'
        ? `no server token at ${path}: run \`metnos init\``
        : code === 'ELOOP'
          ? `${path} is a symbolic link; the server token must be a plain file`
          : `cannot read ${path}: ${(error as Error).message}`,
    );
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new ServerTokenError(`${path} is not a plain file`);
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      throw new ServerTokenError(`${path} belongs to another user`);
    if ((info.mode & 0o077) !== 0)
      throw new ServerTokenError(
        `${path} is readable by others (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 on it`,
      );
    const token = readFileSync(fd, 'utf8').trim();
    if (!TOKEN.test(token)) throw new ServerTokenError(`${path} does not hold a server token`);
    return token;
  } finally {
    closeSync(fd);
  }
}

/**
 * The local bearer token that guards every route of the server: read from
 * `<configDir>/server.token`, or created there (32 random bytes, base64url,
 * mode 0600, never over an existing file or through a link) when `create`
 * is set, as `metnos init` does. A file that is a link, another user's, or
 * readable by group or others is refused.
 *
 * @example
 * const token = serverToken(configDir, { create: true });
 */
export function serverToken(configDir: string, options: { create?: boolean } = {}): string {
  const path = join(configDir, TOKEN_FILE);
  if (options.create) {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    try {
      const fd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeSync(fd, `${randomBytes(32).toString('base64url')}\n`);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readToken(path);
}

/** Does an `Authorization` header carry the token? Compared in constant time. */
export function bearerMatches(header: string | undefined | null, token: string): boolean {
  const given = /^Bearer ([A-Za-z0-9_-]{1,128})$/.exec(header ?? '')?.[1];
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
