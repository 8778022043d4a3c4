// The machine a README's blocks run on: a fresh home of their own, the checkout's bin/ on PATH.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

export const REPO = join(import.meta.dirname, '..', '..', '..');

/** A temp home and the environment that points every Metnos and XDG folder into it. */
export interface BlockEnvironment {
  home: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A new home for one README: `HOME`, the XDG folders, `TMPDIR`, `METNOS_CONFIG_DIR` and npm's
 * global prefix (`npm install -g`) inside it; the checkout's `bin/`, that prefix's `bin/` and this Node
 * first on PATH. The package managers keep the machine's own caches (npm's cache, pnpm's
 * store), so `npx -p node@24` and `pnpm install` find what is already downloaded instead of
 * fetching it again. What the calling shell or package script set for itself (INIT_CWD, npm_*,
 * pnpm_*, METNOS_*, XDG_*) is dropped.
 */
export async function createBlockEnvironment(): Promise<BlockEnvironment> {
  const home = await mkdtemp(join(tmpdir(), 'metnos-docs-home-'));
  const folders = {
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    // what blocks make with mkdtemp goes when the home goes
    TMPDIR: join(home, 'tmp'),
  };
  for (const dir of Object.values(folders)) await mkdir(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(INIT_CWD$|TMPDIR$|npm_|pnpm_|PNPM_|METNOS_|XDG_|VITEST|TURBO_)/i.test(name)) continue;
    env[name] = value;
  }
  Object.assign(env, folders, {
    HOME: home,
    METNOS_CONFIG_DIR: join(folders.XDG_CONFIG_HOME, 'metnos'),
    PATH: [
      join(REPO, 'bin'),
      join(home, '.npm-global', 'bin'),
      dirname(process.execPath),
      process.env.PATH ?? '',
    ].join(':'),
    NO_COLOR: '1',
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
    npm_config_prefix: join(home, '.npm-global'),
    npm_config_update_notifier: 'false',
  });
  const store = pnpmStoreDir();
  if (store) env.pnpm_config_store_dir = store;
  return { home, env };
}

/** The store this checkout's node_modules was linked from, so an install in the temp home reuses it. */
function pnpmStoreDir(): string | undefined {
  const modules = join(REPO, 'node_modules', '.modules.yaml');
  if (!existsSync(modules)) return undefined;
  const stored = /"?storeDir"?:\s*"?([^"\n]+)"?/.exec(readFileSync(modules, 'utf8'))?.[1];
  if (!stored) return undefined;
  // .modules.yaml names the versioned folder (…/store/v11); the setting is its parent
  return /^v\d+$/.test(basename(stored)) ? dirname(stored) : stored;
}
