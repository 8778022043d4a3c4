import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  type AuditEntry,
  createAuditLog,
  createCatalog,
  createInvoker,
  createProcessRunner,
  generateSigningKey,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createGapLog } from '@metnos/planner';
import { createScriptedModel } from '@metnos/planner/test';

/** A request the scripted model plans as one `fs_read` of diary.md. */
export const DIARY_REQUEST = 'read diary.md';

const readPlan = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
  final_message: '${step1.content}',
});

/**
 * A workspace with three signed executors run in real processes, an audit
 * folder, and an engine whose scripted model plans {@link DIARY_REQUEST}:
 * `fs_read` (reads a workspace file), `note_count` (answers "3 notes" whatever
 * its arguments) and `always_fails`.
 */
export async function setupSchedules() {
  const root = await mkdtemp(join(tmpdir(), 'metnos-schedules-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'diary.md'), 'dear diary\n');
  const key = await generateSigningKey();
  const executors = join(root, 'executors');
  await writeSignedExecutor({
    root: executors,
    name: 'fs_read',
    key,
    code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { return ok(readFileSync(join(ctx.workspace, args.path), 'utf8')); } });
`,
    schema: {
      definitions: {
        Input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        Output: { type: 'string' },
      },
    },
  });
  await writeSignedExecutor({
    root: executors,
    name: 'note_count',
    key,
    code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return ok('3 notes'); } });
`,
    schema: { definitions: { Input: { type: 'object' }, Output: { type: 'string' } } },
  });
  await writeSignedExecutor({
    root: executors,
    name: 'always_fails',
    key,
    code: `import { defineExecutor, fail } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return fail('Failed', 'the mailbox is locked'); } });
`,
  });
  const catalog = createCatalog({ root: executors, trustedKeys: [key] });
  await catalog.load();
  const invoker = createInvoker({
    catalog,
    runner: createProcessRunner(),
    audit: createAuditLog({ workspace }),
  });
  const fastpath = createFastpathStore({ path: join(root, 'fastpath.sqlite') });
  const autopath = createAutopathStore({ path: join(root, 'autopath.sqlite') });
  const gaps = createGapLog({ path: join(root, 'gaps.sqlite') });
  const { createDefaultEmbedder } = (await import('@metnos/autopath')) as unknown as {
    createDefaultEmbedder: () => { id: string; embed(texts: string[]): Promise<Float32Array[]> };
  };
  const engine = createEngine({
    catalog,
    invoker,
    reviewer: { evaluate: () => ({ approved: true, reason: 'ok', score: 1, blocked_by: null }) },
    models: {
      fast: createScriptedModel([]),
      wise: createScriptedModel([{ text: readPlan }, { text: readPlan }]),
    },
    embedder: createDefaultEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace,
  });
  return {
    root,
    workspace,
    engine,
    invoker,
    storePath: join(workspace, '.runtime', 'scheduler.sqlite'),
    /** Every line of the audit folder's executor log, oldest first. */
    async auditLines(): Promise<AuditEntry[]> {
      const dir = join(workspace, '.audit', 'executors');
      const files = (await readdir(dir).catch(() => [] as string[]))
        .filter((f) => f.endsWith('.jsonl'))
        .sort();
      const lines: AuditEntry[] = [];
      for (const file of files)
        for (const line of (await readFile(join(dir, file), 'utf8')).split('\n'))
          if (line.trim()) lines.push(JSON.parse(line) as AuditEntry);
      return lines;
    },
    async close() {
      fastpath.close();
      autopath.close();
      gaps.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export type SchedulesFixture = Awaited<ReturnType<typeof setupSchedules>>;
