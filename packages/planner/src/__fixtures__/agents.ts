import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, createInvoker, createProcessRunner, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import type { CallReviewer, ReviewVerdict } from '../review.ts';

const OBJECT = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const SANDBOX = `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576
`;

/**
 * Two real, signed executors for the agent runtime's tests, run as child
 * processes: `notes_read` (read only) and `notes_append` (side effects, not
 * idempotent), over a workspace with `notes.md`.
 */
export async function createAgentWorld() {
  const root = await mkdtemp(join(tmpdir(), 'metnos-agents-'));
  const executors = join(root, 'executors');
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'notes.md'), 'invoice 42: 120 EUR, due 2026-06-01\n');
  const key = await generateSigningKey();
  await writeSignedExecutor({
    root: executors,
    name: 'notes_read',
    key,
    sandboxToml: SANDBOX,
    errorClasses: ['NotFound'],
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  try { return ok({ text: readFileSync(join(ctx.workspace, args.path), 'utf8') }); }
  catch { return fail('NotFound', 'no such note: ' + args.path); }
} });
`,
    schema: {
      definitions: {
        Input: OBJECT({ path: { type: 'string', description: 'the note' } }, ['path']),
        Output: OBJECT({ text: { type: 'string' } }, ['text']),
      },
    },
  });
  await writeSignedExecutor({
    root: executors,
    name: 'notes_append',
    key,
    sandboxToml: SANDBOX,
    contract: { side_effects: true, idempotent: false },
    code: `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  appendFileSync(join(ctx.workspace, args.path), args.line + '\\n');
  return ok({ appended: true });
} });
`,
    schema: {
      definitions: {
        Input: OBJECT(
          {
            path: { type: 'string', description: 'the note' },
            line: { type: 'string', description: 'the line' },
          },
          ['path', 'line'],
        ),
        Output: OBJECT({ appended: { type: 'boolean' } }, ['appended']),
      },
    },
  });
  const catalog = createCatalog({ root: executors, trustedKeys: [key] });
  await catalog.load();
  const invoker = createInvoker({ catalog, runner: createProcessRunner() });
  return { root, workspace, catalog, invoker };
}

/** A reviewer that approves everything, and remembers what it was asked. */
export function recordingReviewer(verdict: Partial<ReviewVerdict> = {}): CallReviewer & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    evaluate: (call): ReviewVerdict => {
      seen.push(call.executor.name);
      return { approved: true, reason: 'ok', score: 0.9, blocked_by: null, ...verdict };
    },
  };
}
