import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultEmbedder } from '@metnos/autopath';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  createCatalog,
  createInvoker,
  createProcessRunner,
  createReceiptChain,
  generateSigningKey,
  receiptsDirOf,
  verifyReceiptChain,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createGapLog, withReceipts } from '@metnos/planner';
import { createScriptedModel } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schedule } from '../src/scheduler/schedule.ts';
import { createScheduledFire } from '../src/scheduler/wiring.ts';

// The scheduler's firings take the same receipted path as a turn: the invoker signs a receipt per
// invocation (caller scheduler, the schedule's id) and the engine's models one per model call.

let root: string;
let key: Awaited<ReturnType<typeof generateSigningKey>>;
let fire: ReturnType<typeof createScheduledFire>;
const closers: Array<() => void> = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-scheduler-receipts-'));
  const workspace = join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'diary.md'), 'dear diary, the code is 4711\n');
  const signer = await generateSigningKey();
  await writeSignedExecutor({
    root: join(root, 'executors'),
    name: 'fs_read',
    key: signer,
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
  const catalog = createCatalog({ root: join(root, 'executors'), trustedKeys: [signer] });
  await catalog.load();
  key = await generateSigningKey();
  const receipts = createReceiptChain({ dir: receiptsDirOf(workspace), key });
  const invoker = createInvoker({ catalog, runner: createProcessRunner(), receipts });
  const plan = JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
    final_message: '${step1.content}',
  });
  const fastpath = createFastpathStore({ path: ':memory:' });
  const autopath = createAutopathStore({ path: ':memory:' });
  const gaps = createGapLog({ path: ':memory:' });
  closers.push(
    () => fastpath.close(),
    () => autopath.close(),
    () => gaps.close(),
  );
  const engine = createEngine({
    catalog,
    invoker,
    reviewer: { evaluate: () => ({ approved: true, reason: 'ok', score: 1, blocked_by: null }) },
    models: {
      fast: withReceipts(createScriptedModel([]), receipts),
      wise: withReceipts(createScriptedModel([{ text: plan }]), receipts),
    },
    embedder: createDefaultEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace,
  });
  fire = createScheduledFire({ engine, invoker, workspace });
});
afterAll(async () => {
  for (const close of closers) close();
  await rm(root, { recursive: true, force: true });
});

const schedule = (id: string, target: Schedule['target']) =>
  ({ id, target, channel: null }) as unknown as Schedule;

describe('receipts of scheduled firings', () => {
  it('signs a receipt for a scheduled executor and for every model call and invocation of a scheduled request', async () => {
    const at = new Date('2026-05-04T07:00:00Z');
    const direct = await fire(
      schedule('sch_read', { kind: 'executor', executor: 'fs_read', args: { path: 'diary.md' } }),
      {
        scheduleId: 'sch_read',
        at,
        attempt: 1,
      },
    );
    expect(direct.ok).toBe(true);
    const turn = await fire(schedule('sch_turn', { kind: 'request', text: 'read diary.md' }), {
      scheduleId: 'sch_turn',
      at,
      attempt: 1,
    });
    expect(turn).toMatchObject({ ok: true, summary: expect.stringContaining('dear diary') });
    const dir = receiptsDirOf(join(root, 'workspace'));
    const files = (await readdir(dir)).filter((file) => file.endsWith('.jsonl'));
    const text = (await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))).join('');
    const receipts = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; data: Record<string, unknown> });
    expect(receipts[0]).toMatchObject({
      kind: 'executor',
      data: {
        executor: 'fs_read',
        caller: 'scheduler',
        schedule: 'sch_read',
        trace_id: 'sched:sch_read:2026-05-04T07:00:00.000Z',
      },
    });
    expect(receipts.slice(1).map((receipt) => receipt.kind)).toContain('model');
    expect(receipts.slice(1).find((receipt) => receipt.kind === 'executor')).toMatchObject({
      data: { turn_id: 'sched:sch_turn:2026-05-04T07:00:00.000Z:1' },
    });
    expect(text).not.toContain('4711');
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok' });
  });
});
