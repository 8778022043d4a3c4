// Reading one executor artefact with the identity of the very file read: shared by the
// verifier (src/verify.ts) and the threads that read beside it (verify-helper.mjs,
// signature-helper.mjs), which must describe the same bytes the same way. node: built-ins only,
// taken with process.getBuiltinModule: an ES import of node:fs builds its whole namespace, which
// loads fs/promises, streams, watchers and readline into a fresh thread (about 4 ms of its start).
const fs = process.getBuiltinModule('node:fs');

/**
 * Opened without blocking: a FIFO (or a device) put where an artefact belongs would otherwise
 * hold the thread in open() until something writes to it. A regular file reads the same.
 */
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;

/**
 * The path of `file` in a version folder. The folder is used as given (a catalog's folders are
 * already joined): path.join's normalising, done for every artefact of every folder, cost a
 * fresh process more than its own share, in compiling it as well as in running it.
 */
export function artefactPath(dir, file) {
  return dir.endsWith('/') ? dir + file : `${dir}/${file}`;
}

/** A line `entry = "…"` naming the code file, as `metnos executor scaffold` writes it. */
const ENTRY_LINE = /^[ \t]*entry[ \t]*=[ \t]*"([A-Za-z0-9_-]+\.(?:ts|mjs|js))"[ \t]*$/m;

/**
 * The code file a manifest's text names (its `entry = "…"` line, else the default `main.ts`),
 * for the threads that read a folder ahead of the calling thread. Found with a pattern, not
 * parsed: the calling thread parses the manifest and uses what was read only when it names
 * the same file.
 */
export function entryFileOf(manifestText) {
  return ENTRY_LINE.exec(manifestText)?.[1] ?? 'main.ts';
}

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
  return readInto(path, (size) => Buffer.allocUnsafeSlow(size));
}

/** Files up to this size are read into the reused buffer; a larger one gets its own. */
// Stryker disable next-line ArithmeticOperator: a smaller reused buffer only gives more files their own
const SCRATCH_BYTES = 64 * 1024;
const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

/**
 * Like {@link readArtefactFile}, but the bytes are a view of a buffer the next call reuses:
 * for the text artefacts, which are hashed and decoded at once and never kept, so a
 * catalog's load does not leave thousands of buffers behind for the collector.
 */
export function readArtefactView(path) {
  return readInto(path, (size) => (size <= SCRATCH_BYTES ? scratch : Buffer.allocUnsafeSlow(size)));
}

/**
 * Reads the regular file at `path` (as {@link readArtefactFile}) into the buffer `bufferFor`
 * gives for its size, which may be larger; throws when it gives none.
 */
export function readInto(path, bufferFor) {
  const fd = fs.openSync(path, OPEN_FLAGS);
  try {
    const info = fs.fstatSync(fd, { bigint: true });
    if (!info.isFile()) throw new Error('not a regular file');
    const size = Number(info.size);
    const buffer = bufferFor(size);
    if (!buffer) throw new Error('no room for the file');
    let offset = 0;
    // Stryker disable next-line EqualityOperator: one more read at the end reads nothing and ends the loop
    while (offset < size) {
      const read = fs.readSync(fd, buffer, offset, size - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return {
      // Stryker disable next-line ConditionalExpression: a view of the whole buffer holds the same bytes
      bytes: offset === buffer.length ? buffer : buffer.subarray(0, offset),
      stamp: fileStamp(info),
    };
  } finally {
    fs.closeSync(fd);
  }
}
