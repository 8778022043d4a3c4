import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The folder holding `package.json` at or above `file`, or undefined. */
function packageRootOf(file: string): string | undefined {
  let dir = statSync(file).isDirectory() ? file : dirname(file);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The `node_modules` folder a package sits in (where its own dependencies are linked), else its root. */
function storeOf(root: string): string {
  let dir = root;
  for (;;) {
    if (basename(dir) === 'node_modules') return dir;
    const parent = dirname(dir);
    if (parent === dir) return root;
    dir = parent;
  }
}

/** Where Node would find package `name` from `root`: the first `node_modules/<name>` above it, as a real path. */
function resolvePackage(name: string, root: string): string | undefined {
  if (!/^(@[a-z0-9._~-]+\/)?[a-z0-9._~-]+$/i.test(name)) return undefined;
  let dir = root;
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The folders a Node script needs to read to run, for a sandbox profile:
 * the `node_modules` folder its package sits in and, through its
 * `dependencies` (and optional and peer ones) followed as Node resolves them,
 * the folder of every package it can load. A script in a pnpm store gets the
 * store's `.pnpm` folder (a package there may load what it does not declare,
 * through the store's hoisting folder); a script outside any `node_modules`
 * brings its own package folder.
 *
 * @example
 * nodeReadGrants('/home/ada/project/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
 * // ['/home/ada/project/node_modules']
 */
export function nodeReadGrants(script: string): string[] {
  const real = realpathSync(script);
  const grants = new Set<string>([dirname(real)]);
  const first = packageRootOf(real);
  const queue = first ? [first] : [];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 2000) {
    const root = queue.pop()!;
    if (seen.has(root)) continue;
    seen.add(root);
    grants.add(storeOf(root));
    let manifest: Record<string, unknown>;
    try {
      manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const names = new Set<string>();
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
      const entries = manifest[field];
      if (entries && typeof entries === 'object') for (const name of Object.keys(entries)) names.add(name);
    }
    for (const name of names) {
      const found = resolvePackage(name, root);
      if (found && !seen.has(found)) queue.push(found);
    }
  }
  // pnpm also lets a package load what it does not declare, through the store's hidden hoisting
  // folder (.pnpm/node_modules): a server in a pnpm store gets the store, read-only, as one folder
  const store = /^(.*\/node_modules\/\.pnpm)\//.exec(real)?.[1];
  if (store) for (const dir of [...grants]) if (dir.startsWith(`${store}/`)) grants.delete(dir);
  if (store) grants.add(store);
  // a folder inside another granted folder adds nothing
  const sorted = [...grants].sort((a, b) => a.length - b.length);
  return sorted.filter((dir, index) => !sorted.slice(0, index).some((outer) => dir.startsWith(`${outer}/`)));
}
