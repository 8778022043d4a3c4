// The approvals flow's own guards, on a real approval store and a real catalog of a signed
// executor with side effects: an approval is consumed only inside its own re-run, for its call.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, generateSigningKey } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { type EngineResult, executorContract } from '@metnos/planner';
import { createApprovalStore, type ProposedCall } from '@metnos/vaglio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalsFlow } from '../src/approvals-flow.ts';
import { createPendingCalls } from '../src/routes/approvals.ts';

let root: string;
let catalog: ReturnType<typeof createCatalog>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-approvals-flow-'));
  const key = await generateSigningKey();
  await writeSignedExecutor({
    root: join(root, 'executors'),
    name: 'note_write',
    key,
    contract: { idempotent: false, side_effects: true },
    code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return ok('written'); } });
`,
  });
  catalog = createCatalog({ root: join(root, 'executors'), trustedKeys: [key] });
  await catalog.load();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * An engine as the flow sees it: the first turn of a request stops at `note_write` (its approval
 * opened in the store, as the vaglio does); every later turn asks the flow's `approved` hook for
 * the same call, and answers whether it ran.
 */
function setup() {
  const approvals = createApprovalStore();
  const args = { path: 'a.md', text: 'hi' };
  let turns = 0;
  let flow: ReturnType<typeof createApprovalsFlow> | undefined;
  const asked: boolean[] = [];
  const engine = {
    async runTurn(request: string): Promise<EngineResult> {
      const turnId = `t${++turns}`;
      const base: Pick<EngineResult, 'turnId' | 'layer' | 'language' | 'steps' | 'modelCalls' | 'latencyMs'> =
        {
          turnId,
          layer: 'engine',
          language: 'en',
          steps: [],
          modelCalls: 0,
          latencyMs: 1,
        };
      if (turns === 1) {
        const call: ProposedCall = {
          executor: executorContract(catalog.get('note_write')!),
          args,
          request,
          stepIndex: 1,
          turnId,
        };
        const opened = await approvals.request(call);
        return {
          ...base,
          finalKind: 'pending_approval',
          finalMessage: 'approve it to continue',
          pending: { approvalId: opened.id, tool: 'note_write', args, step: 1 },
        };
      }
      const granted = await flow!.approved({ tool: 'note_write', args, step: 1 });
      asked.push(granted);
      return { ...base, finalKind: 'answer', finalMessage: granted ? 'written' : 'not run' };
    },
  };
  const pending = createPendingCalls();
  flow = createApprovalsFlow({ engine, approvals, catalog, pending });
  return { flow, approvals, pending, engine, asked };
}

describe('the approvals flow', () => {
  it('holds the call with its hash, and lets only the re-run of its approval consume it, once', async () => {
    const { flow, approvals, pending, asked } = setup();
    const first = await flow.runTurn('write a.md', {}, { kind: 'telegram', chatId: 42 });
    const id = first.pending!.approvalId;
    const held = flow.held(id)!;
    expect(held.callHash).toBe((await approvals.get(id))!.callHash);
    expect(pending.list().map((entry) => entry.approvalId)).toEqual([id]);

    // approved in the store, but a call outside the approval's re-run gets nothing from it
    expect((await approvals.approve(id, held.call)).ok).toBe(true);
    expect(await flow.approved({ tool: 'note_write', args: held.call.args, step: 1 })).toBe(false);
    expect((await approvals.get(id))!.state).toBe('approved');

    const decided = await flow.onDecision({ approvalId: id, approved: true, call: held.call });
    expect(decided?.resumed.finalMessage).toBe('written');
    expect(asked).toEqual([true]);
    expect((await approvals.get(id))!.state).toBe('used');
    expect(pending.list()).toEqual([]);
  });

  it('refuses a Telegram decision from another chat, or for another hash, and decides nothing', async () => {
    const { flow, approvals } = setup();
    const first = await flow.runTurn('write a.md', {}, { kind: 'telegram', chatId: 42 });
    const id = first.pending!.approvalId;
    const { callHash } = flow.held(id)!;
    const reply = (input: { callHash: string; chatId: number }) =>
      flow.telegram.resolveApproval({ approvalId: id, approved: true, ...input });

    expect(await reply({ callHash, chatId: 7 })).toEqual({
      text: 'Not done: this approval was asked in another place.',
    });
    expect(await reply({ callHash: 'f'.repeat(64), chatId: 42 })).toEqual({
      text: 'Not done: the call is not the one this approval holds.',
    });
    expect((await approvals.get(id))!.state).toBe('pending');
    expect(await reply({ callHash, chatId: 42 })).toEqual({ text: 'written' });
    expect((await approvals.get(id))!.state).toBe('used');
  });
});
