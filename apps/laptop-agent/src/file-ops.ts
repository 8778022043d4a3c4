import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, lstat, mkdir, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The SHA-256 of a file's bytes as `sha256:<hex>`, read as a stream.
 *
 * @example
 * await hashFile('/home/ada/Pictures/IMG_0001.jpg'); // 'sha256:…'
 */
export function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(`sha256:${hash.digest('hex')}`));
  });
}

/** `device:inode` of a path (not followed), or undefined when nothing is there. */
export async function identityOf(path: string): Promise<string | undefined> {
  const info = await lstat(path, { bigint: true }).catch(() => undefined);
  return info ? `${info.dev}:${info.ino}` : undefined;
}

/** Is something (a file, a link, a folder) at `path`? */
export async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}

/**
 * Moves a file to a place where nothing is: a hard link then an unlink, so
 * the move never replaces a file that appeared in between (`EEXIST`), and a
 * crash between the two leaves both names of the same inode, which a resumed
 * move recognises. Where hard links are not possible (another file system, a
 * file system without them) it copies then unlinks, or renames after a check.
 */
export async function moveNoReplace(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EXDEV') {
      await copyFile(from, to, 1 /* COPYFILE_EXCL */);
    } else if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EMLINK') {
      if (await exists(to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
      await rename(from, to);
      return;
    } else throw error;
  }
  await unlink(from);
}
