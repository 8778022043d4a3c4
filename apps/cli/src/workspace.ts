import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  CredentialError,
  type CredentialSet,
  createCatalog,
  defaultStateDir,
  findWorkspaceConfig,
  loadCredentials,
  loadTrustedKeys,
  openVerificationCache,
  type ProtectedPath,
  type PublicKey,
  resolveConfigDir,
  trustPaths,
  type WorkspaceConfig,
} from '@metnos/executor-sdk';
import { CliFailure } from './output.ts';

/** Where the CLI works: the user's directory, the workspace config, the executors folder. */
export interface CliPlace {
  /** The directory the user ran the command from. */
  cwd: string;
  config: WorkspaceConfig | undefined;
  /** The executors folder: `--executors`, else metnos.toml's, else `./executors` when present, else the cwd. */
  executors: string;
  /** The workspace root (audit log, files executors may touch). */
  workspace: string;
  configDir: string | undefined;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** Resolves a user-supplied path against the directory the user ran the command from. */
export function userPath(place: { cwd: string }, path: string): string {
  return isAbsolute(path) ? path : resolve(place.cwd, path);
}

/** The default place of `metnos init`: beside, never inside, Metnos's own data folder. */
export function defaultInitDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'metnos-workspace');
}

/**
 * The folder the person ran the command in. `pnpm metnos` runs from the repository root and
 * leaves that folder in INIT_CWD; npx also sets INIT_CWD, to where npx started, which a shell
 * inside `npx -c '…'` may have left: under npx the process's own folder is the truth.
 */
export function userCwd(env: NodeJS.ProcessEnv = process.env): string {
  if (env.INIT_CWD && env.npm_lifecycle_event !== 'npx') return env.INIT_CWD;
  return process.cwd();
}

/** Reads the environment once, at the edge. */
export async function resolvePlace(options: {
  executors?: string;
  workspace?: string;
  configDir?: string;
}): Promise<CliPlace> {
  const cwd = userCwd();
  // the nearest metnos.toml above the current folder, else the workspace `metnos init` made by default
  const config =
    (await findWorkspaceConfig(cwd)) ??
    (existsSync(join(defaultInitDir(), 'metnos.toml'))
      ? await findWorkspaceConfig(defaultInitDir())
      : undefined);
  let executors: string;
  if (options.executors) executors = userPath({ cwd }, options.executors);
  else if (config) executors = config.executors;
  else if (await isDirectory(join(cwd, 'executors'))) executors = join(cwd, 'executors');
  else executors = cwd;
  const workspace = options.workspace ? userPath({ cwd }, options.workspace) : (config?.root ?? cwd);
  return { cwd, config, executors, workspace, configDir: options.configDir };
}

/**
 * What no executor may write for this place: its `metnos.toml`, the keys it
 * trusts, its executors folder, and the user's config dir (trust list, keys).
 */
export function placeProtection(place: CliPlace, dataDir?: string): ProtectedPath[] {
  return [
    // the memory stores, logs and approvals: an executor that wrote them could approve its own calls
    ...(dataDir ? [{ path: dataDir, why: "Metnos's memory, logs and approvals" }] : []),
    ...trustPaths(place.config),
    { path: place.executors, why: 'the executors folder Metnos loads' },
    { path: resolveConfigDir(place.configDir), why: "the user's Metnos keys and trust list" },
  ];
}

/**
 * The person's credentials for executors' handles (`<config dir>/credentials.toml`),
 * read at the edge; a file that is refused stops the command with its one-line
 * reason, which names the field and never a value.
 */
export async function placeCredentials(place: CliPlace): Promise<CredentialSet> {
  try {
    return await loadCredentials({ configDir: resolveConfigDir(place.configDir), env: process.env });
  } catch (error) {
    if (CredentialError.isInstance(error)) throw new CliFailure(`credentials: ${error.message}`);
    throw error;
  }
}

/** Trusted keys for this place: metnos.toml's list plus the user's trust list. */
export function trustedKeys(place: CliPlace, start?: string): Promise<PublicKey[]> {
  return loadTrustedKeys(start ?? place.cwd, { configDir: place.configDir });
}

/**
 * The catalog of this place's executors, with the verification cache beside
 * its ledger in the user's state dir (`defaultStateDir`, never inside the
 * executors folder; the cache's secret is in the config dir), so a start after
 * the first re-hashes every artefact but does not redo the checks of bytes
 * already checked on this machine.
 */
export async function placeCatalog(
  place: CliPlace,
  keys: PublicKey[],
  ledger: 'update' | 'check' = 'update',
) {
  const stateDir = defaultStateDir(place.executors);
  const verificationCache =
    ledger === 'update'
      ? await openVerificationCache({
          file: join(stateDir, 'verification-cache.json'),
          configDir: place.configDir,
        })
      : undefined;
  return createCatalog({ root: place.executors, trustedKeys: keys, stateDir, ledger, verificationCache });
}
