// Shell blocks: run with bash from the repository root, stopping at the first command that fails.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './environment.ts';
import { fixtureNamed } from './fixtures.ts';
import type { MarkdownBlock } from './markdown-blocks.ts';
import { type ProcessOutcome, runProcess } from './run-process.ts';

/**
 * Runs `block` as a bash script (`set -eo pipefail`, so each line must succeed, as a reader
 * would expect of it) after the lines of its fixture, from the repository root.
 */
export async function runShellBlock(
  block: MarkdownBlock,
  scriptDir: string,
  env: NodeJS.ProcessEnv,
): Promise<ProcessOutcome> {
  const fixture = fixtureNamed(block.setup);
  const script = join(scriptDir, `${block.file.replaceAll(/[^A-Za-z0-9]+/g, '_')}-L${block.line}.sh`);
  await writeFile(script, `set -eo pipefail\n${fixture?.shell ? `${fixture.shell}\n` : ''}${block.code}`);
  return runProcess('bash', [script], { cwd: REPO, env, timeoutMs: 480_000 });
}
