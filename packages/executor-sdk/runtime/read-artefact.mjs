// Reading one executor artefact with the identity of the very file read: shared by the
// verifier (src/verify.ts) and its helper thread (verify-helper.mjs), which must describe
// the same bytes the same way. node: built-ins only, so the helper starts in milliseconds.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Opened without blocking: a FIFO (or a device) put where an artefact belongs would otherwise
 * hold the thread in open() until something writes to it. A regular file reads the same.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * The identity of a file from a bigint stat: device, inode, size, modification and change
 * times in nanoseconds. Any write or replacement changes it, and ctime cannot be set back.
 */
export function fileStamp(info) {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/**
 * Reads the whole regular file at `path` synchronously and takes its identity from the same
 * open file (fstat), so the stamp always describes the bytes returned. The bytes own their
 * memory (never a slice of a shared pool), so a worker can transfer them. Throws when the
 * file is missing, unreadable or not a regular file.
 */
export function readArtefactFile(path) {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const info = fstatSync(fd, { bigint: true });
    if (!info.isFile()) throw new Error('not a regular file');
    const size = Number(info.size);
    const bytes = Buffer.allocUnsafeSlow(size);
    let offset = 0;
    while (offset < size) {
      const read = readSync(fd, bytes, offset, size - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return { bytes: offset === size ? bytes : bytes.subarray(0, offset), stamp: fileStamp(info) };
  } finally {
    closeSync(fd);
  }
}
