import { lstat, realpath } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { forbiddenSet, metnosOwnPaths } from '@metnos/sandbox';
import { RemoteError } from './protocol/errors.ts';
import { relativePathSchema } from './protocol/files.ts';

/** True when `path` is `root` or inside it (both absolute and normalised). */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * The laptop runtime's own check, before every operation on a file: the path
 * is relative and stays inside the granted folder as written and after every
 * symbolic link in its folders, the file itself is not a link and has no
 * second name, and neither lies in a core forbidden path (a home's `.ssh`,
 * `.gnupg` …, the Metnos config dir, the system trees) or a path Metnos keeps
 * for itself (its state, ledger and trash). The sandbox checked the call's
 * arguments; this checks what the executor proposes, a second layer that does
 * not trust the first.
 *
 * @example
 * const guard = await createGuard({ grant: '/home/ada/Pictures', home: '/home/ada', configDir });
 * const place = await guard.source('IMG_0001.jpg'); // '/home/ada/Pictures/IMG_0001.jpg'
 */
export async function createGuard(settings: {
  grant: string;
  home: string;
  configDir: string;
  stateDir: string;
}) {
  const grant = await realpath(settings.grant);
  const forbidden = forbiddenSet({
    homes: [settings.home],
    workspace: grant,
    secrets: [settings.configDir],
    protect: [
      ...metnosOwnPaths({ home: settings.home, nodePath: process.execPath }),
      { path: settings.stateDir, why: "the laptop agent's ledger, cache and trash" },
    ],
  });
  const refuse = (code: string, message: string): never => {
    throw new RemoteError({ code, message });
  };

  /** The real path of `path`'s deepest existing folder, with the rest of the path after it. */
  async function realPlace(path: string): Promise<string> {
    let folder = dirname(path);
    const rest: string[] = [path.slice(folder.length + 1)];
    for (;;) {
      const real = await realpath(folder).catch(() => undefined);
      if (real !== undefined) return join(real, ...rest.reverse());
      rest.push(folder.slice(dirname(folder).length + 1));
      const parent = dirname(folder);
      if (parent === folder) return path;
      folder = parent;
    }
  }

  async function place(relativePath: string): Promise<string> {
    if (!relativePathSchema.safeParse(relativePath).success)
      refuse('outside_grant', `"${relativePath.slice(0, 200)}" is not a path inside the granted folder`);
    const written = join(grant, relativePath);
    const real = await realPlace(written);
    if (!within(real, grant))
      refuse('outside_grant', `${relativePath} leads outside the granted folder (through a link)`);
    for (const candidate of [written, real]) {
      const tree = [...forbidden.trees, ...forbidden.protect].find((root) => within(candidate, root));
      if (tree) refuse('forbidden_path', `${relativePath} is inside the core forbidden path ${tree}`);
    }
    return real;
  }

  /** A plain file of one name at `path`, or a refusal. */
  async function plainFile(path: string, shown: string): Promise<void> {
    const info = await lstat(path).catch(() => undefined);
    if (!info) refuse('not_found', `${shown} is not there`);
    if (!info!.isFile())
      refuse('forbidden_path', `${shown} is not a plain file (a link, a folder or a device)`);
    if (info!.nlink > 1)
      refuse('forbidden_path', `${shown} has a second name (a hard link), which could be one of a secret`);
  }

  return {
    /** The granted folder's real path. */
    grant,
    /** A file an operation reads, moves or deletes: its real path, checked. */
    async source(relativePath: string): Promise<string> {
      const path = await place(relativePath);
      await plainFile(path, relativePath);
      return path;
    },
    /** Where an operation puts a file: its real path, checked; `replace` allows a plain file there. */
    async target(
      relativePath: string,
      options: { replace?: boolean } = {},
    ): Promise<{ path: string; taken: boolean }> {
      const path = await place(relativePath);
      const info = await lstat(path).catch(() => undefined);
      if (info && !options.replace) refuse('exists', `${relativePath} already exists`);
      if (info) await plainFile(path, relativePath);
      return { path, taken: info !== undefined };
    },
    /** A real path inside the grant as the manifests write it. */
    relative(path: string): string {
      return relative(grant, path).split(sep).join('/');
    },
  };
}

export type Guard = Awaited<ReturnType<typeof createGuard>>;
