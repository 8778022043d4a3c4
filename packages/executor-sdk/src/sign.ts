import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTEFACTS } from './artefacts.ts';
import { ManifestError } from './errors.ts';
import { loadBlake3 } from './hash.ts';
import type { SigningKey } from './keys.ts';
import { parseManifest } from './manifest.ts';
import { profileHash } from './profile.ts';
import { signStatement } from './signature.ts';
import { checkSchema } from './verify.ts';

let tempCounter = 0;

/**
 * Writes `path` atomically: a temp file beside it, then a rename. The temp file is forced to
 * disk before the rename unless `flush` is false (then the caller makes it durable later).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o644,
  { flush = true }: { flush?: boolean } = {},
): Promise<void> {
  // Unique per call, so two writes of the same file in the same millisecond do not share a temp file.
  const temp = tempPath(path);
  await writeFile(temp, data, { mode, flush });
  await rename(temp, path);
}

/** A temp file name beside `path`, unique per call (two writes in the same millisecond included). */
function tempPath(path: string): string {
  return `${path}.${process.pid}.${Date.now()}.${tempCounter++}.tmp`;
}

/**
 * {@link writeFileAtomic} without leaving the calling thread: for the small state files written
 * at the end of a catalog load, where a trip through libuv's pool for every step (open, write,
 * flush, close, rename) cost more than the writing. A temp file that could not be written whole
 * (a full disk) is removed, and the file at `path` is left as it was.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = tempPath(path);
  try {
    writeFileSync(temp, data, { mode, flush: true });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Sets `[sandbox].hash` in manifest text, keeping everything else as written. */
export function setSandboxHash(text: string, hash: string, file: string): string {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => /^\s*\[sandbox\]\s*(#.*)?$/.test(line));
  if (header === -1) throw new ManifestError({ file, field: 'sandbox', expected: 'a [sandbox] table' });
  let end = lines.length;
  for (let index = header + 1; index < lines.length; index++) {
    if (/^\s*\[/.test(lines[index]!)) {
      end = index;
      break;
    }
  }
  const hashLine = `hash = "${hash}"`;
  for (let index = header + 1; index < end; index++) {
    if (/^\s*hash\s*=/.test(lines[index]!)) {
      lines[index] = hashLine;
      return lines.join('\n');
    }
  }
  lines.splice(header + 1, 0, hashLine);
  return lines.join('\n');
}

/** What signing produced. */
export interface SignResult {
  name: string;
  version: string;
  keyId: string;
  profileLock: string;
}

/**
 * Signs an executor version directory with `key`: computes the profile hash,
 * writes it to `[sandbox].hash` and `profile.lock`, then writes `manifest.sig`
 * over the BLAKE3 digests of the four signed artefacts.
 *
 * @example
 * const key = await createKeyStore().load('default');
 * await signExecutor('executors/hello', key);
 */
export async function signExecutor(dir: string, key: SigningKey): Promise<SignResult> {
  const digest = await loadBlake3();
  const manifestPath = join(dir, ARTEFACTS.manifest);
  const originalText = await readFile(manifestPath, 'utf8');
  const manifest = parseManifest(originalText, manifestPath);
  checkSchema(await readFile(join(dir, ARTEFACTS.schema), 'utf8'), manifest, join(dir, ARTEFACTS.schema));
  const lock = await profileHash(manifest.sandbox);
  const manifestText = setSandboxHash(originalText, lock, manifestPath);
  parseManifest(manifestText, manifestPath);
  if (manifestText !== originalText) await writeFileAtomic(manifestPath, manifestText);
  const lockText = `${lock}\n`;
  await writeFileAtomic(join(dir, ARTEFACTS.profileLock), lockText);
  const [codeBytes, schemaBytes] = await Promise.all([
    readFile(join(dir, manifest.executor.entry)),
    readFile(join(dir, ARTEFACTS.schema)),
  ]);
  const signatureText = signStatement(
    {
      name: manifest.executor.name,
      version: manifest.executor.version,
      manifest: digest(manifestText),
      code: digest(codeBytes),
      schema: digest(schemaBytes),
      profileLock: digest(lockText),
    },
    key,
  );
  await writeFileAtomic(join(dir, ARTEFACTS.signature), signatureText);
  return {
    name: manifest.executor.name,
    version: manifest.executor.version,
    keyId: key.keyId,
    profileLock: lock,
  };
}
