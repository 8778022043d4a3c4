import { realpathSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import type { ProtectedPath } from './context.ts';
import { KeyError, ManifestError } from './errors.ts';
import { type PublicKey, parsePublicKey, readPublicKey, serializePublicKey } from './keys.ts';
import { resolveConfigDir } from './settings.ts';
import { writeFileAtomic } from './sign.ts';

const trustFileSchema = z.object({ version: z.literal(1), keys: z.array(z.string()) });

/**
 * The user's explicit list of trusted public keys, in
 * `~/.config/metnos/trusted_keys.json`. Nothing is trusted unless it is listed
 * here or in the workspace's `metnos.toml`.
 *
 * @example
 * const trust = createTrustStore();
 * await trust.add(await readPublicKey('friend.pub'));
 * const keys = await trust.list();
 */
export function createTrustStore(settings: { configDir?: string } = {}) {
  const path = join(resolveConfigDir(settings.configDir), 'trusted_keys.json');

  async function read(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return [];
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new KeyError(`${path} is not valid JSON`, error);
    }
    const parsed = trustFileSchema.safeParse(data);
    if (!parsed.success) throw new KeyError(`${path} is not a Metnos trust list`);
    return parsed.data.keys;
  }

  return {
    path,
    async list(): Promise<PublicKey[]> {
      return Promise.all((await read()).map((text, index) => parsePublicKey(text, `${path}#${index}`)));
    },
    async add(key: PublicKey): Promise<boolean> {
      const existing = await read();
      const keys = await Promise.all(existing.map((text, index) => parsePublicKey(text, `${path}#${index}`)));
      if (keys.some((candidate) => candidate.keyId === key.keyId)) return false;
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFileAtomic(
        path,
        `${JSON.stringify({ version: 1, keys: [...existing, serializePublicKey(key)] }, null, 2)}\n`,
        0o600,
      );
      return true;
    },
    async remove(keyId: string): Promise<boolean> {
      const existing = await read();
      const kept: string[] = [];
      for (const [index, text] of existing.entries()) {
        if ((await parsePublicKey(text, `${path}#${index}`)).keyId !== keyId) kept.push(text);
      }
      if (kept.length === existing.length) return false;
      await writeFileAtomic(path, `${JSON.stringify({ version: 1, keys: kept }, null, 2)}\n`, 0o600);
      return true;
    },
  };
}

/** The workspace file `metnos.toml`, as far as the SDK needs it. */
export const workspaceConfigSchema = z
  .object({
    workspace: z
      .object({
        root: z.string().default('.'),
        executors: z.string().default('executors'),
        trusted_keys: z.array(z.string()).default([]),
      })
      .passthrough()
      .default({ root: '.', executors: 'executors', trusted_keys: [] }),
  })
  .passthrough();

/** Where a workspace lives and what it trusts, with paths made absolute. */
export interface WorkspaceConfig {
  /** The folder holding `metnos.toml`. */
  configDir: string;
  root: string;
  executors: string;
  trustedKeyFiles: string[];
  /** The whole parsed file, for apps to read their own sections. */
  raw: Record<string, unknown>;
}

/** Walks up from `start` to the nearest `metnos.toml` and parses it; undefined when none. */
export async function findWorkspaceConfig(start: string): Promise<WorkspaceConfig | undefined> {
  let dir = resolve(start);
  for (;;) {
    const file = join(dir, 'metnos.toml');
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      let data: unknown;
      try {
        data = parseToml(text);
      } catch (error) {
        throw new ManifestError({ file, field: '(syntax)', expected: 'valid TOML', cause: error });
      }
      const parsed = workspaceConfigSchema.safeParse(data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new ManifestError({ file, field: issue.path.join('.'), expected: issue.message });
      }
      const at = (path: string) => (isAbsolute(path) ? path : join(dir, path));
      await assertNotInsideAnotherWorkspace(file);
      return {
        configDir: dir,
        root: at(parsed.data.workspace.root),
        executors: at(parsed.data.workspace.executors),
        trustedKeyFiles: parsed.data.workspace.trusted_keys.map(at),
        raw: data as Record<string, unknown>,
      };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * A `metnos.toml` that lies inside the workspace of a `metnos.toml` further up
 * could have been written by an executor of that workspace, so it is not read:
 * it could name other executors or other keys. Throws {@link KeyError}.
 */
async function assertNotInsideAnotherWorkspace(file: string): Promise<void> {
  const own = dirname(file);
  for (let dir = dirname(own); ; dir = dirname(dir)) {
    const outer = join(dir, 'metnos.toml');
    let root: string | undefined;
    try {
      const parsed = workspaceConfigSchema.safeParse(parseToml(await readFile(outer, 'utf8')));
      if (parsed.success) {
        const written = parsed.data.workspace.root;
        root = isAbsolute(written) ? written : join(dir, written);
      }
    } catch {
      root = undefined; // none there, or not one Metnos could read: it names no workspace
    }
    if (root !== undefined && within(own, root)) {
      throw new KeyError(
        `${file} lies inside the workspace ${root} of ${outer}, where executors may write, so Metnos does not read it; ` +
          'move it out of that workspace or remove it',
      );
    }
    if (dirname(dir) === dir) return;
  }
}

/** Where `path` really leads: symlinks followed, a missing tail kept as written under its real parent. */
function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realOf(parent), basename(path));
  }
}

function within(path: string, root: string): boolean {
  const relation = relative(realOf(resolve(root)), realOf(resolve(path)));
  return relation === '' || (!relation.startsWith('..') && !isAbsolute(relation));
}

/**
 * Trust may come from a `metnos.toml` only when neither it nor the key files it
 * lists lie inside its own workspace root: executors write there, so a trust
 * list in that tree could have been written by one. Throws {@link KeyError}.
 *
 * @example
 * assertTrustOutsideWorkspace(await findWorkspaceConfig(cwd));
 */
export function assertTrustOutsideWorkspace(config: WorkspaceConfig): void {
  if (config.trustedKeyFiles.length === 0) return;
  const file = join(config.configDir, 'metnos.toml');
  // compared as real paths: a root that is a symlink to the toml's own folder is that folder
  const inside = [file, ...config.trustedKeyFiles].find((path) => within(path, config.root));
  if (inside) {
    throw new KeyError(
      `${file} lists trusted keys, but ${inside} lies inside its workspace ${config.root}, where executors may write; ` +
        'set [workspace] root to a folder that holds neither, or trust the key with `metnos keys trust`',
    );
  }
}

/**
 * The host files that decide what a workspace trusts and loads: its
 * `metnos.toml`, the key files it lists and its executors folder. Pass them to
 * the invoker's `protect` so no executor can write them.
 */
export function trustPaths(config: WorkspaceConfig | undefined): ProtectedPath[] {
  if (!config) return [];
  return [
    { path: join(config.configDir, 'metnos.toml'), why: 'the workspace configuration Metnos reads' },
    ...config.trustedKeyFiles.map((path) => ({ path, why: 'a key Metnos trusts' })),
    { path: config.executors, why: 'the executors folder Metnos loads' },
  ];
}

/**
 * Every key trusted for `start`: the workspace's `trusted_keys` (nearest
 * `metnos.toml`) plus the user's trust list.
 */
export async function loadTrustedKeys(
  start: string,
  settings: { configDir?: string } = {},
): Promise<PublicKey[]> {
  const workspace = await findWorkspaceConfig(start);
  if (workspace) assertTrustOutsideWorkspace(workspace);
  const fromWorkspace = await Promise.all(
    (workspace?.trustedKeyFiles ?? []).map((file) => readPublicKey(file)),
  );
  const fromUser = await createTrustStore(settings).list();
  const unique = new Map<string, PublicKey>();
  for (const key of [...fromWorkspace, ...fromUser]) unique.set(key.keyId, key);
  return [...unique.values()];
}
