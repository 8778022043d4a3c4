import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTEFACTS, type PublicKey, type VerifiedExecutor, verifyExecutor } from '@metnos/executor-sdk';
import { RemoteError } from './protocol/errors.ts';

/** The files an update may carry: the signed artefacts and the code file. */
const UPDATE_FILE = /^(manifest\.toml|manifest\.sig|schema\.json|profile\.lock|[A-Za-z0-9_-]+\.(ts|mjs|js))$/;
const NAME = /^[a-z][a-z0-9_]{1,63}$/;

/**
 * The laptop's copy of the remote executors it runs, one folder each, checked
 * against the signed manifest at every call: the signature with the keys the
 * server trusted at pairing, and every artefact's digest. An update from the
 * server is written beside the copy, verified, and only then put in its place.
 *
 * @example
 * const cache = createExecutorCache({ dir: join(stateDir, 'cache'), trustedKeys });
 * const executor = await cache.verify('photo_organize'); // throws VerificationError on drift
 */
export function createExecutorCache(settings: { dir: string; trustedKeys: readonly PublicKey[] }) {
  const folder = (name: string) => {
    if (!NAME.test(name))
      throw new RemoteError({ code: 'bad_frame', message: `"${name}" is not an executor name` });
    return join(settings.dir, name);
  };
  const verify = (name: string): Promise<VerifiedExecutor> =>
    verifyExecutor(folder(name), { trustedKeys: settings.trustedKeys });
  return {
    dir: settings.dir,
    verify,
    /** The cached executors that verify now: name, version and code digest, as the hello frame lists them. */
    async list(): Promise<Array<{ name: string; version: string; code: string }>> {
      const names = await readdir(settings.dir).catch(() => [] as string[]);
      const found: Array<{ name: string; version: string; code: string }> = [];
      for (const name of names.filter((entry) => NAME.test(entry)).sort()) {
        const executor = await verify(name).catch(() => undefined);
        if (executor) found.push({ name, version: executor.version, code: executor.digests.code });
      }
      return found;
    },
    /**
     * Installs the files the server pushed for `name` when they verify as
     * `name@version`; the copy before is kept until the new one is in place.
     */
    async install(
      name: string,
      version: string,
      files: Readonly<Record<string, string>>,
    ): Promise<VerifiedExecutor> {
      const target = folder(name);
      await mkdir(settings.dir, { recursive: true, mode: 0o700 });
      const staging = join(settings.dir, `.staging-${name}-${randomBytes(6).toString('hex')}`);
      await mkdir(staging, { mode: 0o700 });
      try {
        for (const [file, content] of Object.entries(files)) {
          if (!UPDATE_FILE.test(file))
            throw new RemoteError({
              code: 'bad_update',
              message: `an update may not carry "${file.slice(0, 64)}"`,
            });
          await writeFile(join(staging, file), Buffer.from(content, 'base64'), { mode: 0o600 });
        }
        const executor = await verifyExecutor(staging, { trustedKeys: settings.trustedKeys });
        if (executor.name !== name || executor.version !== version)
          throw new RemoteError({
            code: 'bad_update',
            message: `the update for ${name}@${version} verifies as ${executor.name}@${executor.version}`,
          });
        const old = join(settings.dir, `.old-${name}-${randomBytes(6).toString('hex')}`);
        await rename(target, old).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        await rename(staging, target);
        await rm(old, { recursive: true, force: true });
        return verify(name);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    },
  };
}

export type ExecutorCache = ReturnType<typeof createExecutorCache>;

/** The files of a verified executor folder an update carries (its tests stay on the server). */
export const UPDATE_ARTEFACTS = [
  ARTEFACTS.manifest,
  ARTEFACTS.signature,
  ARTEFACTS.schema,
  ARTEFACTS.profileLock,
] as const;
