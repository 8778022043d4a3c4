import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/main.ts';
import type { CliIo } from '../../src/output.ts';

/** The repository root, where the seed executors and the release key live. */
export const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');

/** How many seed executors the repository holds (folders of `executors/` with a manifest). */
export function seedCount(): number {
  const root = join(repoRoot, 'executors');
  return readdirSync(root).filter((name) => existsSync(join(root, name, 'manifest.toml'))).length;
}

/** A stack trace line as Node prints one: no mistake a person can make may show one. */
export const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

/** Runs the CLI in-process and captures what it printed. */
export async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (text) => (out += `${text}\n`), err: (text) => (err += `${text}\n`) };
  const code = await runCli(args, io);
  return { code, out, err };
}

/**
 * Writes a `metnos.toml` in `dir`: workspace `dir/workspace`, the seed
 * executors and the release key of this repository, data in `dir/data`, and
 * the fast tier on an Ollama-protocol server at `modelUrl`.
 */
export async function writeWorkspaceConfig(dir: string, modelUrl: string): Promise<void> {
  await writeFile(
    join(dir, 'metnos.toml'),
    `[workspace]
root = "workspace"
executors = "${join(repoRoot, 'executors')}"
trusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]

[runtime]
data_dir = "data"

[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
base_url = "${modelUrl}"
think = false
`,
  );
}
