import type { Specification } from '../generate/spec-schema.ts';
import type { SyntModel } from '../generate/types.ts';

/** A scripted wise tier: answers in order, keeps every request, throws once the script is spent. */
export interface ScriptedWise extends SyntModel {
  readonly requests: Array<{ system: string; user: string }>;
  remaining(): number;
}

/**
 * A wise-tier stand-in for tests: each call takes the next answer (text, or
 * a function of the request's user message). Asking past the end throws, so
 * a test sees a model call it did not expect.
 *
 * @example
 * const wise = createScriptedWise([JSON.stringify(CSV_SUM_SPEC), csvSumSkeleton()]);
 */
export function createScriptedWise(
  answers: Array<string | ((user: string) => string)>,
  identity: { id?: string; provider?: string } = {},
): ScriptedWise {
  const script = [...answers];
  const requests: Array<{ system: string; user: string }> = [];
  return {
    id: identity.id ?? 'scripted-wise',
    provider: identity.provider ?? 'scripted',
    requests,
    remaining: () => script.length,
    async generate(request) {
      const user = request.messages.map((message) => message.content).join('\n');
      requests.push({ system: request.system, user });
      const next = script.shift();
      if (next === undefined)
        throw new Error(`the wise script is spent after ${requests.length - 1} answers`);
      return {
        text: typeof next === 'function' ? next(user) : next,
        usage: { inputTokens: 100, outputTokens: 50 },
      };
    },
  };
}

/** The spec a wise tier drafts for "sum the amount column of a CSV": text in, a number out, no access. */
export const CSV_SUM_SPEC: Specification = {
  name: 'csv_sum',
  summary: 'Sum the numbers of one column of CSV text.',
  affinity: ['csv', 'sum', 'column', 'total', 'add'],
  input: {
    type: 'object',
    properties: {
      text: {
        type: 'string',
        format: 'text',
        maxLength: 1_000_000,
        description: 'The CSV text, header line first',
      },
      column: { type: 'string', maxLength: 200, description: 'The header of the column to sum' },
    },
    required: ['text', 'column'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      column: { type: 'string' },
      sum: { type: 'number' },
      rows: { type: 'integer' },
    },
    required: ['column', 'sum', 'rows'],
  },
  error_classes: ['ColumnNotFound', 'NotANumber'],
  idempotent: true,
  side_effects: false,
  profile: { fs_read: [], fs_write: [], network: [], max_duration_ms: 2000, max_memory_mb: 128 },
  birth_tests: [
    {
      name: 'sums the amount column',
      files: {},
      args: { text: 'date,amount\n2026-05-01,12.5\n2026-05-02,7.5\n', column: 'amount' },
      expect: { ok: true, content: { column: 'amount', sum: 20, rows: 2 } },
    },
    {
      name: 'a column that is not there is ColumnNotFound',
      files: {},
      args: { text: 'date,amount\n2026-05-01,1\n', column: 'price' },
      expect: { ok: false, error_class: 'ColumnNotFound' },
    },
  ],
};

/** The code a wise tier writes for {@link CSV_SUM_SPEC}. */
export const CSV_SUM_CODE = `import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';

interface Args {
  text: string;
  column: string;
}

interface Result {
  column: string;
  sum: number;
  rows: number;
}

export default defineExecutor<Args, Result>({
  run(args) {
    const lines = args.text.split(/\\r?\\n/).filter((line) => line.trim() !== '');
    const header = (lines[0] ?? '').split(',').map((cell) => cell.trim());
    const index = header.indexOf(args.column);
    if (index === -1) return fail('ColumnNotFound', \`no column \${args.column} in: \${header.join(', ')}\`);
    let sum = 0;
    for (const [row, line] of lines.slice(1).entries()) {
      const cell = (line.split(',')[index] ?? '').trim();
      const value = Number(cell);
      if (cell === '' || Number.isNaN(value)) return fail('NotANumber', \`row \${row + 2}: "\${cell}" is not a number\`);
      sum += value;
    }
    return ok({ column: args.column, sum: Math.round(sum * 100) / 100, rows: lines.length - 1 });
  },
});
`;

/** A skeleton answer: main.ts and schema.json as the two fenced blocks stage 3 asks for. */
export function skeletonAnswer(spec: Specification, code: string): string {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: { Input: spec.input, Output: spec.output },
  };
  return `Here is the executor.\n\n\`\`\`ts\n${code}\`\`\`\n\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\`\n`;
}

/** The spec of an executor that sums a CSV file's column, offered `$WORKSPACE/data` to read. */
export const CSV_FILE_SUM_SPEC: Specification = {
  ...CSV_SUM_SPEC,
  name: 'csv_file_sum',
  summary: 'Sum one column of a CSV file in the data folder.',
  input: {
    type: 'object',
    properties: {
      path: { type: 'string', maxLength: 500, description: 'The CSV file, relative to the workspace' },
      column: { type: 'string', maxLength: 200, description: 'The header of the column to sum' },
    },
    required: ['path', 'column'],
    additionalProperties: false,
  },
  profile: {
    fs_read: ['$WORKSPACE/data'],
    fs_write: [],
    network: [],
    max_duration_ms: 2000,
    max_memory_mb: 128,
  },
  error_classes: ['ColumnNotFound', 'NotANumber', 'NotFound'],
  birth_tests: [
    {
      name: 'sums the amount column of data/expenses.csv',
      files: {
        'data/expenses.csv': 'date,amount\n2026-05-01,12.5\n2026-05-02,7.5\n',
        'ledger/expenses.csv': 'date,amount\n2026-05-01,1\n',
      },
      args: { path: 'data/expenses.csv', column: 'amount' },
      expect: { ok: true, content: { sum: 20 } },
    },
  ],
};

/**
 * Code for {@link CSV_FILE_SUM_SPEC} that reaches outside what it was
 * offered: it reads `ledger/` beside the file it was given (to "cross-check"),
 * a folder its profile never grants. Outside the sandbox it would work.
 */
export const OVERREACHING_CODE = `import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineExecutor, fail, ok, resolveAllowedPath } from '@metnos/executor-sdk/define';

interface Args {
  path: string;
  column: string;
}

export default defineExecutor<Args, { column: string; sum: number; rows: number }>({
  async run(args, ctx) {
    const file = await resolveAllowedPath(args.path, ctx, { roots: ctx.profile.fs.read, verb: 'read' });
    const text = await readFile(file, 'utf8').catch(() => undefined);
    const ledger = await readFile(join(ctx.workspace, 'ledger', 'expenses.csv'), 'utf8').catch((error) => error);
    if (text === undefined) return fail('NotFound', \`cannot read \${args.path}\`);
    if (ledger instanceof Error) return fail('NotFound', \`cannot cross-check against ledger/expenses.csv: \${ledger.message}\`);
    const lines = text.split('\\n').filter((line) => line.trim() !== '');
    const index = lines[0]!.split(',').indexOf(args.column);
    if (index === -1) return fail('ColumnNotFound', \`no column \${args.column}\`);
    const sum = lines.slice(1).reduce((total, line) => total + Number(line.split(',')[index]), 0);
    return ok({ column: args.column, sum, rows: lines.length - 1 });
  },
});
`;
