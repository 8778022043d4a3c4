// The fenced code blocks of a README and what their markers ask the docs check to do.
//
// Convention (also in AGENTS.md):
//   ```sh runnable        run with bash from the repository root, in a temp HOME
//   ```ts runnable        typechecked (strict) and run with Node 24 from the repository root
//   ```ts typecheck       typechecked only
//   <!-- docs-setup: name -->   on the line right above the fence: a fixture (fixtures.ts)
//   <!-- not run: why -->        on the lines right above the fence: required for every sh or ts
//                                block that is not `runnable`

/** Info-string languages the check can run. */
export const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);
export const TYPESCRIPT_LANGUAGES = new Set(['ts', 'typescript']);
/** Languages whose blocks are commands or code a reader might run, so each needs a marker or a note. */
const COMMAND_LANGUAGES = new Set([
  ...SHELL_LANGUAGES,
  ...TYPESCRIPT_LANGUAGES,
  'js',
  'javascript',
  'console',
]);

export type BlockMode = 'run' | 'typecheck' | 'none';

/** One fenced block of a markdown file. */
export interface MarkdownBlock {
  /** The markdown file, relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  mode: BlockMode;
  /** The fixture named by `<!-- docs-setup: name -->`, if any. */
  setup: string | undefined;
  /** The reason given by `<!-- not run: why -->`, if any. */
  notRun: string | undefined;
  code: string;
}

/** Where a README's blocks break the convention; each entry names file and line. */
export interface ConventionProblem {
  file: string;
  line: number;
  message: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const COMMENT = /^\s*<!--\s*(docs-setup|not run):\s*(.*?)\s*-->\s*$/;

/**
 * Every fenced block of `text`, with the comments directly above its fence.
 *
 * @example
 * extractBlocks('README.md', '```sh runnable\nmetnos --version\n```\n')[0];
 * // { file: 'README.md', line: 1, language: 'sh', mode: 'run', code: 'metnos --version\n', … }
 */
export function extractBlocks(file: string, text: string): MarkdownBlock[] {
  const lines = text.split('\n');
  const blocks: MarkdownBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]!);
    if (!open) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const end = lines.findIndex((line, at) => at > index && closes(line, fence));
    const close = end === -1 ? lines.length : end;
    const body = lines
      .slice(index + 1, close)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line));
    const [language = '', ...flags] = info.trim().split(/\s+/);
    const comments = commentsAbove(lines, index);
    blocks.push({
      file,
      line: index + 1,
      language: language.toLowerCase(),
      mode: flags.includes('runnable') ? 'run' : flags.includes('typecheck') ? 'typecheck' : 'none',
      setup: comments.get('docs-setup'),
      notRun: comments.get('not run'),
      code: body.length > 0 ? `${body.join('\n')}\n` : '',
    });
    index = close;
  }
  return blocks;
}

/** A closing fence: the opening fence's character, at least as many times, and nothing else. */
function closes(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= fence.length && trimmed === fence[0]!.repeat(trimmed.length);
}

/** The `docs-setup` and `not run` comments on the lines right above line `fence`. */
function commentsAbove(lines: string[], fence: number): Map<string, string> {
  const found = new Map<string, string>();
  for (let at = fence - 1; at >= 0; at--) {
    const comment = COMMENT.exec(lines[at]!);
    if (!comment) break;
    found.set(comment[1]!, comment[2]!);
  }
  return found;
}

/**
 * What breaks the convention: a command block neither marked nor explained, a marker the
 * check cannot honour, a fixture that does not exist.
 */
export function conventionProblems(
  blocks: MarkdownBlock[],
  fixtureNames: ReadonlySet<string>,
): ConventionProblem[] {
  const problems: ConventionProblem[] = [];
  const problem = (block: MarkdownBlock, message: string) =>
    problems.push({ file: block.file, line: block.line, message });
  for (const block of blocks) {
    const shell = SHELL_LANGUAGES.has(block.language);
    const typescript = TYPESCRIPT_LANGUAGES.has(block.language);
    if (block.mode === 'run' && !shell && !typescript)
      problem(block, `"runnable" on a ${block.language || 'plain'} block: only sh and ts blocks run`);
    if (block.mode === 'typecheck' && !typescript) problem(block, '"typecheck" is for ts blocks');
    if (block.setup !== undefined && !fixtureNames.has(block.setup))
      problem(block, `no fixture "${block.setup}" (tooling/scripts/docs/fixtures.ts)`);
    if (block.setup !== undefined && block.mode === 'none')
      problem(block, 'a docs-setup on a block that is not checked');
    if (block.mode !== 'run' && COMMAND_LANGUAGES.has(block.language) && !block.notRun) {
      problem(
        block,
        `a ${block.language} block that does not run needs "runnable", or a <!-- not run: why --> line right above it`,
      );
    }
    if (block.mode === 'run' && block.notRun) problem(block, 'marked runnable and "not run" at once');
  }
  return problems;
}
