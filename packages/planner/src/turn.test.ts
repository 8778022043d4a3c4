import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveAll, createWorld, scripted } from './__fixtures__/world.ts';
import type { CallReviewer } from './review.ts';
import { createPlanner, parsePlanText } from './turn.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

function planner(
  model: ReturnType<typeof scripted>,
  extra: Partial<Parameters<typeof createPlanner>[0]> = {},
) {
  return createPlanner({
    catalog: world.catalog,
    invoker: world.invoker,
    models: { fast: model },
    reviewer: approveAll,
    scratchpad: world.scratchpad,
    workspace: world.workspace,
    retry: { sleep: async () => {} },
    ...extra,
  });
}

describe('local mode', () => {
  it('reads a file and answers with the last three lines', async () => {
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'diary.md', tail: 3 } }] },
      { text: 'three\nfour\nfive' },
    ]);
    const result = await planner(model).runTurn('read diary.md and tell me the last three lines');
    expect(result.finalKind).toBe('answer');
    expect(result.finalMessage).toBe('three\nfour\nfive');
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]!.observation).toMatchObject({ ok: true, content: 'three\nfour\nfive' });
    expect(model.requests[0]!.tools.map((tool) => tool.name)).toContain('fs_read');
    const toolMessage = model.requests[1]!.messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', toolName: 'fs_read' });
  });

  it('pipes {{step1.content}} into the next call, also inside a longer string', async () => {
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'diary.md', tail: 1 } }] },
      { calls: [{ name: 'fs_write', args: { path: 'copy.txt', content: 'last: {{step1.content}}' } }] },
      { text: 'wrote {{step2.bytes_written}} bytes' },
    ]);
    const result = await planner(model).runTurn('copy the last line of diary.md to copy.txt');
    expect(result.finalKind).toBe('answer');
    expect(await readFile(join(world.workspace, 'copy.txt'), 'utf8')).toBe('last: five');
    expect(result.steps[1]!.resolved_args).toEqual({ path: 'copy.txt', content: 'last: five' });
  });

  it('tells the model when a reference points at nothing', async () => {
    const model = scripted([
      { calls: [{ name: 'fs_write', args: { path: 'x.txt', content: '{{step4.content}}' } }] },
      { text: 'sorry' },
    ]);
    const result = await planner(model).runTurn('write x');
    expect(result.steps[0]!.observation).toMatchObject({ ok: false, error: { class: 'BadReference' } });
  });

  it('answers "tool unavailable" for an unknown tool without echoing its name', async () => {
    const model = scripted([{ calls: [{ name: 'secret_probe_tool', args: {} }] }, { text: 'done' }]);
    const result = await planner(model).runTurn('read diary.md');
    const message = model.requests[1]!.messages.at(-1)!;
    expect(message.role).toBe('tool');
    const content = message.role === 'tool' ? message.content : '';
    expect(content).toContain('tool unavailable');
    expect(content).not.toContain('secret_probe_tool');
    expect(result.steps[0]!.tool).toBeNull();
    expect(result.finalKind).toBe('answer');
  });

  it('strips prototype keys from model arguments', async () => {
    const args = JSON.parse('{"path":"diary.md","__proto__":{"polluted":true}}');
    const model = scripted([{ calls: [{ name: 'fs_read', args }] }, { text: 'ok' }]);
    const result = await planner(model).runTurn('read diary.md');
    expect(result.steps[0]!.observation.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers a repeated read from history instead of running it again', async () => {
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'diary.md' } }] },
      { calls: [{ name: 'fs_read', args: { path: 'diary.md' } }] },
      { text: 'done' },
    ]);
    const result = await planner(model).runTurn('read diary.md');
    expect(result.steps[1]!.observation.content).toContain('already have this data at step 1');
    expect(result.steps[1]!.result).toBe('duplicate');
  });

  it('stops at the step cap', async () => {
    const model = scripted(
      Array.from({ length: 8 }, (_, index) => ({
        calls: [{ name: 'fs_read', args: { path: `missing-${index}.md` } }],
      })),
    );
    const result = await planner(model, { caps: { steps: 5, sameExecutor: 10 } }).runTurn('read the files');
    expect(result.finalKind).toBe('cap_steps');
    expect(result.steps).toHaveLength(5);
  });

  it('stops when one executor is called too often', async () => {
    const model = scripted(
      Array.from({ length: 4 }, (_, index) => ({
        calls: [{ name: 'fs_read', args: { path: `missing-${index}.md` } }],
      })),
    );
    const result = await planner(model).runTurn('read the files');
    expect(result.finalKind).toBe('cap_same_executor');
    expect(result.finalMessage).toContain('fs_read');
  });

  it('stops when the token budget is spent', async () => {
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'diary.md' } }] },
      { calls: [{ name: 'fs_read', args: { path: 'other.md' } }] },
    ]);
    const result = await planner(model, { budget: { tokens: 150 } }).runTurn('read diary.md');
    expect(result.finalKind).toBe('budget');
  });

  it('keeps large observations in the scratchpad and offers scratchpad_read', async () => {
    await writeFile(join(world.workspace, 'big.log'), `${'x'.repeat(6000)}\nLAST_LINE`);
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'big.log' } }] },
      {
        calls: [{ name: 'scratchpad_read', args: { scratchpad_id: 'PLACEHOLDER', mode: 'tail', chars: 9 } }],
      },
      { text: 'LAST_LINE' },
    ]);
    const turn = planner(model);
    const original = model.generate.bind(model);
    model.generate = async (request) => {
      const response = await original(request);
      const stored = request.messages.find(
        (message) => message.role === 'tool' && message.content.includes('scratchpad_id'),
      );
      if (stored && stored.role === 'tool') {
        const id = JSON.parse(stored.content).scratchpad_id as string;
        for (const call of response.toolCalls)
          if (call.name === 'scratchpad_read') (call.args as Record<string, unknown>).scratchpad_id = id;
      }
      return response;
    };
    const result = await turn.runTurn('read big.log and tell me the last line');
    expect(result.steps[0]!.observation).toMatchObject({ ok: true, kind: 'text' });
    expect(String(result.steps[0]!.observation.summary)).toContain('characters omitted');
    expect(model.requests[1]!.tools.map((tool) => tool.name)).toContain('scratchpad_read');
    expect(model.requests[0]!.tools.map((tool) => tool.name)).not.toContain('scratchpad_read');
    expect(result.steps[1]!.observation).toMatchObject({ ok: true, content: 'LAST_LINE' });
  });
});

describe('failure modes', () => {
  it('ends cleanly when the model is unreachable', async () => {
    const refused = Object.assign(new Error('fetch failed: connect ECONNREFUSED 127.0.0.1:11434'), {
      code: 'ECONNREFUSED',
    });
    const result = await planner(scripted([{ error: refused }])).runTurn('read diary.md');
    expect(result.finalKind).toBe('error');
    expect(result.finalMessage).toMatch(/could not reach the language model/);
  });

  it('reports an executor crash and non-JSON output as observations, and goes on', async () => {
    const model = scripted([
      { calls: [{ name: 'crasher', args: {} }] },
      { calls: [{ name: 'crasher', args: { mode: 'junk' } }] },
      { text: 'the tool is broken' },
    ]);
    const result = await planner(model).runTurn('use crasher');
    expect(result.steps[0]!.observation).toMatchObject({ ok: false, error: { class: 'Crashed' } });
    expect(result.steps[1]!.observation).toMatchObject({ ok: false, error: { class: 'NonJsonOutput' } });
    expect(result.finalKind).toBe('answer');
  });

  it('refuses an executor whose code was modified after signing, and says so', async () => {
    const fresh = await createWorld();
    const { appendFile } = await import('node:fs/promises');
    await appendFile(join(fresh.executors, 'fs_read', 'main.ts'), '\n// edited after signing\n');
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: 'diary.md' } }] },
      { text: 'The file reader is broken.' },
    ]);
    const result = await createPlanner({
      catalog: fresh.catalog,
      invoker: fresh.invoker,
      models: { fast: model },
      reviewer: approveAll,
      scratchpad: fresh.scratchpad,
      workspace: fresh.workspace,
    }).runTurn('read diary.md');
    expect(result.steps[0]!.observation).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });
    expect(String((result.steps[0]!.observation.error as { message: string }).message)).toMatch(
      /main\.ts.*modified after signing|quarantined/,
    );
    expect(result.finalKind).toBe('answer');
    expect(fresh.catalog.list().find((row) => row.name === 'fs_read')?.state).toBe('quarantined');
    fresh.scratchpad.close();
  });

  it('ends cleanly on an empty catalog', async () => {
    const turn = createPlanner({
      catalog: { executors: () => [] },
      invoker: world.invoker,
      models: { fast: scripted([]) },
      reviewer: approveAll,
      scratchpad: world.scratchpad,
      workspace: world.workspace,
    });
    const result = await turn.runTurn('read diary.md');
    expect(result).toMatchObject({ finalKind: 'error' });
    expect(result.finalMessage).toContain('empty catalog');
  });
});

describe('online mode', () => {
  it('plans once and runs the plan with piping', async () => {
    const model = scripted([
      {
        text: '```json\n{"steps":[{"tool":"fs_read","args":{"path":"diary.md","tail":2}}],"answer":"The end: {{step1.content}}"}\n```',
      },
    ]);
    const result = await planner(model, { mode: 'online' }).runTurn('read diary.md');
    expect(result.routedMode).toBe('online');
    expect(result.finalMessage).toBe('The end: four\nfive');
    expect(model.requests).toHaveLength(1);
  });

  it('refuses an unreadable plan with a clear message', async () => {
    const result = await planner(scripted([{ text: 'sure! I will read it' }]), { mode: 'online' }).runTurn(
      'read diary.md',
    );
    expect(result.finalKind).toBe('error');
    expect(result.finalMessage).toContain('plan');
    expect(parsePlanText('{"steps": "nope"}').ok).toBe(false);
  });

  it('blocks the whole plan when the reviewer blocks one step', async () => {
    const reviewer: CallReviewer = {
      evaluate: (call) =>
        call.executor.name === 'fs_write'
          ? { approved: false, reason: 'no', score: 0, blocked_by: 'guard' }
          : { approved: true, reason: 'ok', score: 1, blocked_by: null },
    };
    const model = scripted([
      {
        text: '{"steps":[{"tool":"fs_read","args":{"path":"diary.md"}},{"tool":"fs_write","args":{"path":"y","content":"{{step1.content}}"}}]}',
      },
    ]);
    const result = await planner(model, { mode: 'online', reviewer }).runTurn('copy');
    expect(result.finalKind).toBe('error');
    expect(result.finalMessage).toContain('step 2');
    expect(result.steps).toHaveLength(0);
  });

  it('routes a hybrid turn online when a rule fires', async () => {
    const model = scripted([{ text: '{"steps":[],"answer":"nothing to do"}' }]);
    const result = await planner(model, {
      mode: 'hybrid',
      hybrid: { escalateOnKeywords: ['carefully'] },
    }).runTurn('carefully read diary.md');
    expect(result.routedMode).toBe('online');
  });
});

describe('reinforced confirmation', () => {
  it('pauses before a side-effecting call and runs it only after approval of that exact call', async () => {
    const pendingIds: string[] = [];
    const reviewer: CallReviewer = {
      evaluate: (call) => {
        if (call.executor.name !== 'fs_write')
          return { approved: true, reason: 'ok', score: 1, blocked_by: null };
        pendingIds.push('approval-1');
        return {
          approved: false,
          reason: 'needs confirmation',
          score: 1,
          blocked_by: 'confirmation',
          pending: { id: 'approval-1', callHash: 'h', expiresAt: 'later' },
        };
      },
    };
    const approvals = {
      check: (id: string, call: { args: unknown }) =>
        id === 'approval-1' && JSON.stringify(call.args).includes('approved.txt')
          ? { ok: true as const }
          : { ok: false as const, reason: 'different call' },
    };
    const model = scripted([
      { calls: [{ name: 'fs_write', args: { path: 'approved.txt', content: 'yes' } }] },
      { text: 'written' },
    ]);
    const turn = planner(model, { reviewer, approvals });
    const paused = await turn.runTurn('write approved.txt');
    expect(paused.finalKind).toBe('pending_approval');
    expect(paused.pending).toMatchObject({ approvalId: 'approval-1', executor: 'fs_write' });
    await expect(readFile(join(world.workspace, 'approved.txt'), 'utf8')).rejects.toThrow();
    const resumed = await turn.resume(paused.turnId, { approved: true });
    expect(resumed.finalKind).toBe('answer');
    expect(await readFile(join(world.workspace, 'approved.txt'), 'utf8')).toBe('yes');
  });
});
