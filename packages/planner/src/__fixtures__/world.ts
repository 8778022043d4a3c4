import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, createInvoker, createProcessRunner, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from '../model.ts';
import type { CallReviewer, ReviewVerdict } from '../review.ts';
import { createScratchpad } from '../scratchpad.ts';

const OBJECT_SCHEMA = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** Test executors: small, real, signed, run as real child processes (tier none, said explicitly). */
export async function createWorld() {
  const root = await mkdtemp(join(tmpdir(), 'metnos-planner-'));
  const executors = join(root, 'executors');
  const workspace = join(root, 'workspace');
  const key = await generateSigningKey();
  const sandboxToml = (extra = '') => `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576
${extra}`;
  await writeSignedExecutor({
    root: executors,
    name: 'fs_read',
    key,
    sandboxToml: sandboxToml(),
    errorClasses: ['NotFound'],
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  try { const text = readFileSync(join(ctx.workspace, args.path), 'utf8');
    return ok(args.tail ? text.trimEnd().split('\\n').slice(-args.tail).join('\\n') : text, { path: args.path, bytes: text.length }); }
  catch { return fail('NotFound', 'no such file: ' + args.path); }
} });
`,
    schema: {
      definitions: {
        Input: OBJECT_SCHEMA({ path: { type: 'string' }, tail: { type: 'integer', minimum: 1 } }, ['path']),
        Output: { type: 'string' },
      },
    },
  });
  await writeSignedExecutor({
    root: executors,
    name: 'fs_write',
    key,
    sandboxToml: sandboxToml(),
    errorClasses: ['Failed'],
    code: `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  writeFileSync(join(ctx.workspace, args.path), args.content);
  return ok({ bytes_written: Buffer.byteLength(args.content), path: args.path });
} });
`,
    schema: {
      definitions: {
        Input: OBJECT_SCHEMA({ path: { type: 'string' }, content: { type: 'string' } }, ['path', 'content']),
        Output: OBJECT_SCHEMA({ bytes_written: { type: 'integer' }, path: { type: 'string' } }, [
          'bytes_written',
          'path',
        ]),
      },
    },
  });
  await writeSignedExecutor({
    root: executors,
    name: 'crasher',
    key,
    sandboxToml: sandboxToml(),
    code: `import { defineExecutor } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args) { if (args.mode === 'junk') { process.stdout.write('not json'); process.exit(0); } process.exit(3); } });
`,
  });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'diary.md'), 'one\ntwo\nthree\nfour\nfive\n');
  const catalog = createCatalog({ root: executors, trustedKeys: [key] });
  await catalog.load();
  const invoker = createInvoker({ catalog, runner: createProcessRunner() });
  const scratchpad = createScratchpad({ path: ':memory:' });
  return { root, executors, workspace, key, catalog, invoker, scratchpad };
}

export const approveAll: CallReviewer = {
  evaluate: (): ReviewVerdict => ({
    approved: true,
    reason: 'ok',
    score: 0.7,
    blocked_by: null,
    judge_kind: 'rules',
  }),
};

type Step = { text?: string; calls?: Array<Omit<ToolCall, 'id'>>; error?: Error };

/** A model that answers from a script and keeps every request it saw. */
export function scripted(steps: Step[]): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  let index = 0;
  return {
    id: 'scripted',
    provider: 'test',
    requests,
    async generate(request): Promise<ChatResponse> {
      requests.push(structuredClone(request));
      const step = steps[index++];
      if (!step) throw new Error('script exhausted');
      if (step.error) throw step.error;
      return {
        text: step.text ?? '',
        toolCalls: (step.calls ?? []).map((call, position) => ({ id: `call_${index}_${position}`, ...call })),
        usage: { inputTokens: 100, outputTokens: 10 },
      };
    },
  };
}
