// Runs the READMEs: every fenced block marked `runnable` runs as written (sh with bash, ts
// typechecked strict and run with Node 24), every other sh or ts block must say why it does
// not run. The convention is in AGENTS.md and tooling/scripts/docs/markdown-blocks.ts.
//
// Usage: pnpm check:docs [README …] [--list] [--verbose] [--keep]
//   README …   only these files (paths from the repository root)
//   --list     print every block and what the check does with it; run nothing
//   --verbose  print what every block printed, not only what a failed one did
//   --keep     leave the generated blocks and the temp homes for a look
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createBlockEnvironment, REPO } from './docs/environment.ts';
import { fixtures } from './docs/fixtures.ts';
import {
  conventionProblems,
  extractBlocks,
  type MarkdownBlock,
  SHELL_LANGUAGES,
} from './docs/markdown-blocks.ts';
import type { ProcessOutcome } from './docs/run-process.ts';
import { runShellBlock } from './docs/shell-blocks.ts';
import {
  prepareTypeScriptDir,
  runTypeScriptBlock,
  typecheckBlocks,
  type WrittenBlock,
  writeTypeScriptBlocks,
} from './docs/typescript-blocks.ts';

const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', 'seeds']);

/** Every README.md of the tree, the root's first; hidden folders and build output left out. */
async function findReadmes(dir = REPO): Promise<string[]> {
  const found: string[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.isFile() && entry.name === 'README.md') found.push(relative(REPO, join(dir, entry.name)));
  }
  for (const entry of entries) {
    if (entry.isDirectory() && !entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name)) {
      found.push(...(await findReadmes(join(dir, entry.name))));
    }
  }
  return found;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function describe(block: MarkdownBlock): string {
  const what = block.mode === 'run' ? 'run' : block.mode === 'typecheck' ? 'typecheck' : 'not run';
  const setup = block.setup ? ` (setup: ${block.setup})` : '';
  const why = block.notRun ? ` — ${block.notRun}` : '';
  return `${`${block.file}:${block.line}`.padEnd(40)} ${block.language.padEnd(5)} ${what}${setup}${why}`;
}

/** The last lines of a block's output (all of them with --verbose), indented under its line. */
function tail(outcome: ProcessOutcome, all = false): string {
  const lines = outcome.output
    .trimEnd()
    .split('\n')
    .slice(all ? 0 : -40);
  const ending = outcome.timedOut ? 'timed out' : `exit ${outcome.code}`;
  return `${lines.map((line) => `      ${line}`).join('\n')}\n      (${ending})`;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { list: { type: 'boolean' }, verbose: { type: 'boolean' }, keep: { type: 'boolean' } },
});
const started = performance.now();
const files =
  positionals.length > 0
    ? positionals.map((file) => relative(REPO, resolve(REPO, file)))
    : await findReadmes();
const blocks = (
  await Promise.all(files.map(async (file) => extractBlocks(file, await readFile(join(REPO, file), 'utf8'))))
).flat();

if (values.list) {
  for (const block of blocks) console.log(describe(block));
  process.exit(0);
}

const problems = conventionProblems(blocks, new Set(Object.keys(fixtures)));
for (const problem of problems) console.log(`FAIL ${problem.file}:${problem.line}  ${problem.message}`);

await mkdir(join(REPO, '.docs-check'), { recursive: true });
const runDir = await mkdtemp(join(REPO, '.docs-check', 'run-'));
const homes: string[] = [];
let failures = problems.length;
try {
  await prepareTypeScriptDir(runDir);
  const typescript = blocks.filter((block) => block.mode !== 'none' && !SHELL_LANGUAGES.has(block.language));
  const written = await writeTypeScriptBlocks(runDir, typescript);
  const typeStart = performance.now();
  const typecheck = await typecheckBlocks(runDir, written);
  for (const problem of typecheck.problems)
    console.log(`FAIL ${problem.file}:${problem.line}  ${problem.message}`);
  failures += typecheck.problems.length;
  console.log(`typecheck  ${written.length} ts blocks  ${seconds(performance.now() - typeStart)}`);
  if (typecheck.elsewhere > 0) {
    console.log(
      `           (and ${typecheck.elsewhere} error(s) in package sources: not the READMEs', pnpm typecheck names them)`,
    );
  }

  const byPath = new Map<MarkdownBlock, WrittenBlock>(written.map((entry) => [entry.block, entry]));
  for (const file of files) {
    const runnable = blocks.filter((block) => block.file === file && block.mode === 'run');
    if (runnable.length === 0) continue;
    const environment = await createBlockEnvironment();
    homes.push(environment.home);
    for (const block of runnable) {
      const entry = byPath.get(block);
      const outcome = entry
        ? await runTypeScriptBlock(entry, environment.env)
        : await runShellBlock(block, runDir, environment.env);
      const ok = outcome.code === 0 && !outcome.timedOut;
      console.log(
        `${ok ? 'ok  ' : 'FAIL'} ${`${block.file}:${block.line}`.padEnd(40)} ${block.language.padEnd(3)} ${seconds(outcome.ms).padStart(7)}`,
      );
      if (!ok) failures++;
      if (!ok || values.verbose) console.log(tail(outcome, values.verbose));
    }
  }
} finally {
  if (!values.keep) {
    await rm(runDir, { recursive: true, force: true });
    for (const home of homes) await rm(home, { recursive: true, force: true });
  } else console.log(`kept ${relative(REPO, runDir)} and ${homes.join(' ')}`);
}

console.log('');
for (const file of files) {
  const own = blocks.filter((block) => block.file === file);
  const count = (test: (block: MarkdownBlock) => boolean) => String(own.filter(test).length).padStart(2);
  console.log(
    [
      file.padEnd(36),
      `${count((block) => block.mode === 'run')} run`,
      `${count((block) => block.mode === 'typecheck')} typecheck only`,
      `${count((block) => block.mode === 'none' && block.notRun !== undefined)} not run`,
      `${count((block) => block.mode === 'none' && block.notRun === undefined)} data or output`,
    ].join('  '),
  );
}
console.log(
  `\n${failures === 0 ? 'docs check passed' : `docs check FAILED: ${failures} problem(s)`} in ${seconds(performance.now() - started)}`,
);
process.exitCode = failures === 0 ? 0 : 1;
