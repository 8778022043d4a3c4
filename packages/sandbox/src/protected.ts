import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type ProtectedPath, RUNTIME_DIR } from '@metnos/executor-sdk';
import { HELPER_SOURCE } from './helper.ts';

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** System binaries and libraries, among them those that run outside the sandbox. */
const SYSTEM_SOFTWARE = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Where a package's code sits: its `node_modules` tree, or the monorepo's code folders. */
function installTrees(packageRoot: string): ProtectedPath[] {
  const found: ProtectedPath[] = [{ path: packageRoot, why: "Metnos's own code" }];
  let outermost: string | undefined;
  for (let dir = packageRoot; dirname(dir) !== dir; dir = dirname(dir)) {
    if (basename(dir) === 'node_modules') outermost = dir;
    if (!outermost && existsSync(join(dir, 'pnpm-workspace.yaml'))) {
      for (const tree of ['packages', 'apps', 'node_modules', 'tooling', 'package.json'])
        found.push({ path: join(dir, tree), why: "Metnos's own code and dependencies" });
      break;
    }
  }
  if (outermost) found.push({ path: outermost, why: 'the packages Metnos runs from' });
  return found;
}

/**
 * The host paths that make up Metnos itself and that no executor may write,
 * whatever its profile: the SDK and sandbox code (and the `node_modules` or
 * monorepo folders around them), the Node runtime, the sandbox helper's
 * folder, bwrap, the system software trees (`/usr`, `/bin`, `/lib` …), and the
 * user's Metnos state and data folders (ledgers, memory). The
 * config dir (keys, trust list) is not here: it is masked entirely.
 *
 * @example
 * forbiddenSet({ homes, workspace, protect: metnosOwnPaths({ home, helperPath, nodePath }) });
 */
export function metnosOwnPaths(places: {
  home: string;
  helperPath?: string;
  nodePath: string;
  /** What runs outside or around the sandbox beside Node: `bwrap`, Node's shared libraries. */
  outside?: ReadonlyArray<string | undefined>;
}): ProtectedPath[] {
  const paths: ProtectedPath[] = [
    ...installTrees(real(dirname(RUNTIME_DIR))),
    ...installTrees(real(dirname(dirname(HELPER_SOURCE)))),
  ];
  const node = real(places.nodePath);
  const prefix = dirname(dirname(node));
  paths.push({
    path: existsSync(join(prefix, 'bin', basename(node))) && prefix !== '/' ? prefix : node,
    why: 'the Node runtime that runs Metnos',
  });
  if (places.helperPath) paths.push({ path: dirname(places.helperPath), why: 'the sandbox helper' });
  // bwrap and gcc run outside the sandbox, and a new runner looks them up again: a grant on the
  // system software trees could put its own in their place before the next start
  for (const path of places.outside ?? [])
    if (path) paths.push({ path: real(path), why: 'software Metnos runs outside the sandbox' });
  for (const path of SYSTEM_SOFTWARE)
    paths.push({
      path,
      why: 'system software (bwrap, gcc and the libraries Metnos runs outside the sandbox)',
    });
  const state = process.env.XDG_STATE_HOME || join(places.home, '.local', 'state');
  const data = process.env.XDG_DATA_HOME || join(places.home, '.local', 'share');
  paths.push({ path: join(state, 'metnos'), why: "Metnos's version ledgers and lifecycle state" });
  paths.push({ path: join(data, 'metnos'), why: "Metnos's memory stores and logs" });
  return paths;
}
