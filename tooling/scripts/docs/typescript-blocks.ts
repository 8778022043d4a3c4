// TypeScript blocks: written as modules inside the checkout, typechecked together (strict), run one by one.
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { REPO } from './environment.ts';
import { fixtureNamed } from './fixtures.ts';
import type { MarkdownBlock } from './markdown-blocks.ts';
import { type ProcessOutcome, runProcess } from './run-process.ts';

/** A block written to disk, and how many lines the docs check put before its first line. */
export interface WrittenBlock {
  block: MarkdownBlock;
  path: string;
  preludeLines: number;
}

/** The folders of the workspace packages a README may import (`@metnos/*`). */
async function workspacePackages(): Promise<Array<{ name: string; dir: string }>> {
  const found: Array<{ name: string; dir: string }> = [];
  const candidates = ['executors', 'tooling'];
  for (const group of ['packages', 'apps']) {
    for (const entry of await readdir(join(REPO, group), { withFileTypes: true })) {
      if (entry.isDirectory()) candidates.push(join(group, entry.name));
    }
  }
  for (const dir of candidates) {
    const manifest = await readFile(join(REPO, dir, 'package.json'), 'utf8').catch(() => undefined);
    const name = manifest && (JSON.parse(manifest) as { name?: string }).name;
    if (name?.startsWith('@metnos/')) found.push({ name, dir: join(REPO, dir) });
  }
  return found;
}

/**
 * Prepares `runDir` (inside the checkout): `@metnos/*` linked to the workspace packages, as an
 * install would link them, a module package.json, the fixtures, and a tsconfig that extends the
 * repository's strict base.
 */
export async function prepareTypeScriptDir(runDir: string): Promise<void> {
  await mkdir(join(runDir, 'node_modules', '@metnos'), { recursive: true });
  for (const pkg of await workspacePackages()) {
    await symlink(pkg.dir, join(runDir, 'node_modules', pkg.name), 'dir');
  }
  await writeFile(join(runDir, 'package.json'), '{ "private": true, "type": "module" }\n');
  await copyFile(join(import.meta.dirname, 'fixtures.ts'), join(runDir, 'fixtures.ts'));
}

function slug(block: MarkdownBlock): string {
  return `${block.file.replace(/\.md$/i, '').replaceAll(/[^A-Za-z0-9]+/g, '_')}-L${block.line}.ts`;
}

/** The lines the docs check puts before a block: its fixture's bindings. */
function prelude(block: MarkdownBlock): string[] {
  const lines = [`// ${block.file}:${block.line}, written by tooling/scripts/docs-check.ts`];
  lines.push("import { fixtures as docsFixtures, teardown as docsTeardown } from '../fixtures.ts';");
  const fixture = fixtureNamed(block.setup);
  if (fixture?.setup) {
    lines.push(`const { ${(fixture.names ?? []).join(', ')} } = await docsFixtures.${block.setup}.setup();`);
  }
  return lines;
}

/** Writes each block as `<runDir>/blocks/<file>-L<line>.ts`, then the tsconfig that lists them. */
export async function writeTypeScriptBlocks(
  runDir: string,
  blocks: MarkdownBlock[],
): Promise<WrittenBlock[]> {
  await mkdir(join(runDir, 'blocks'), { recursive: true });
  const written: WrittenBlock[] = [];
  for (const block of blocks) {
    const head = prelude(block);
    const path = join(runDir, 'blocks', slug(block));
    await writeFile(path, `${head.join('\n')}\n${block.code};\nawait docsTeardown();\nexport {};\n`);
    written.push({ block, path, preludeLines: head.length });
  }
  const tsconfig = {
    extends: relative(runDir, join(REPO, 'tsconfig.base.json')),
    compilerOptions: { noEmit: true, types: ['node'] },
    files: ['fixtures.ts', ...written.map((entry) => relative(runDir, entry.path))],
  };
  await writeFile(join(runDir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  return written;
}

/** One tsc diagnostic, placed on the README line it comes from. */
export interface TypeProblem {
  file: string;
  line: number;
  message: string;
}

/** What tsc said: about the blocks (and the fixtures), and how many errors it found in package sources. */
export interface TypecheckOutcome {
  problems: TypeProblem[];
  /** Errors in the packages' own files: theirs to fix (`pnpm typecheck`), not the READMEs'. */
  elsewhere: number;
}

/** Typechecks every written block in one tsc run; problems point at README lines. */
export async function typecheckBlocks(runDir: string, written: WrittenBlock[]): Promise<TypecheckOutcome> {
  if (written.length === 0) return { problems: [], elsewhere: 0 };
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const outcome = await runProcess(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
    cwd: runDir,
    env: process.env,
    timeoutMs: 120_000,
  });
  if (outcome.code === 0) return { problems: [], elsewhere: 0 };
  const byPath = new Map(written.map((entry) => [relative(runDir, entry.path), entry]));
  const problems: TypeProblem[] = [];
  let elsewhere = 0;
  for (const printed of outcome.output.split('\n')) {
    const match = /^(.+?)\((\d+),\d+\): (error .*)$/.exec(printed);
    if (!match) continue;
    const [, file = '', at = '', message = ''] = match;
    const entry = byPath.get(file);
    if (entry) {
      // file line preludeLines + 1 is the block's first line, the one after the fence
      problems.push({
        file: entry.block.file,
        line: entry.block.line + Number(at) - entry.preludeLines,
        message,
      });
    } else if (file === 'fixtures.ts') {
      problems.push({ file: 'tooling/scripts/docs/fixtures.ts', line: Number(at), message });
    } else elsewhere++;
  }
  if (problems.length === 0 && elsewhere === 0) {
    problems.push({ file: relative(REPO, runDir), line: 0, message: outcome.output.trim() });
  }
  return { problems, elsewhere };
}

/** Runs one written block with this Node, from the repository root, in the README's environment. */
export function runTypeScriptBlock(entry: WrittenBlock, env: NodeJS.ProcessEnv): Promise<ProcessOutcome> {
  return runProcess(
    process.execPath,
    ['--conditions=metnos-source', '--disable-warning=ExperimentalWarning', entry.path],
    { cwd: REPO, env, timeoutMs: 120_000 },
  );
}
