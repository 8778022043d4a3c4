import { describe, expect, it } from 'vitest';
import { conventionProblems, extractBlocks } from './markdown-blocks.ts';

const FIXTURES = new Set(['workspace']);

describe('README blocks', () => {
  it('reads the marker, the setup and the reason above a fence', () => {
    const text = [
      '# Title',
      '',
      '<!-- docs-setup: workspace -->',
      '```sh runnable',
      'metnos --version',
      '```',
      '',
      '<!-- not run: needs Ollama -->',
      '```ts typecheck',
      "const answer = await fetch('http://localhost:11434');",
      '```',
      '',
      '```toml',
      'a = 1',
      '```',
    ].join('\n');
    const blocks = extractBlocks('README.md', text);
    expect(
      blocks.map(({ line, language, mode, setup, notRun }) => ({ line, language, mode, setup, notRun })),
    ).toEqual([
      { line: 4, language: 'sh', mode: 'run', setup: 'workspace', notRun: undefined },
      { line: 9, language: 'ts', mode: 'typecheck', setup: undefined, notRun: 'needs Ollama' },
      { line: 13, language: 'toml', mode: 'none', setup: undefined, notRun: undefined },
    ]);
    expect(blocks[0]!.code).toBe('metnos --version\n');
    expect(conventionProblems(blocks, FIXTURES)).toEqual([]);
  });

  it('keeps a longer fence open past a shorter one, and strips the indent of a listed block', () => {
    const text = ['- step', '  ````md runnable', '  ```sh', '  echo hi', '  ```', '  ````'].join('\n');
    const [block] = extractBlocks('README.md', text);
    expect(block!.code).toBe('```sh\necho hi\n```\n');
  });

  it('refuses a command block that neither runs nor says why, and a fixture that does not exist', () => {
    const text = [
      '```sh',
      'pnpm test',
      '```',
      '',
      '<!-- docs-setup: nowhere -->',
      '```ts runnable',
      '1;',
      '```',
    ].join('\n');
    const problems = conventionProblems(extractBlocks('README.md', text), FIXTURES);
    expect(problems.map((problem) => [problem.line, problem.message])).toEqual([
      [1, expect.stringContaining('needs "runnable", or a <!-- not run: why --> line')],
      [6, expect.stringContaining('no fixture "nowhere"')],
    ]);
  });
});
