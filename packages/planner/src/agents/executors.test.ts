import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createInvoker,
  createProcessRunner,
  createReceiptChain,
  generateSigningKey,
  receiptsDirOf,
  verifyReceiptChain,
} from '@metnos/executor-sdk';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentWorld, recordingReviewer } from '../__fixtures__/agents.ts';
import { createScriptedModel } from '../test/scripted-model.ts';
import { AgentConfigError } from './errors.ts';
import { createAgentRuntime } from './runtime.ts';

let world: Awaited<ReturnType<typeof createAgentWorld>>;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const SECRET = 'note-password-tangerine-4711';

beforeAll(async () => {
  world = await createAgentWorld();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

const executorsOf = (reviewer = recordingReviewer(), extra = {}) => ({
  catalog: world.catalog,
  invoker: world.invoker,
  reviewer,
  workspace: world.workspace,
  ...extra,
});

describe('agents and executors', () => {
  it('offers read-only executors by default and one with side effects only when named', async () => {
    const reader = createScriptedModel([{ text: 'ok' }]);
    const writer = createScriptedModel([{ text: 'ok' }]);
    const runtime = createAgentRuntime({
      agents: [
        { id: 'reader', systemPrompt: '', provider: reader },
        { id: 'writer', systemPrompt: '', provider: writer, executors: ['notes_read', 'notes_append'] },
      ],
      executors: executorsOf(),
    });
    await runtime.run({ goal: 'x' });
    await runtime.run({ goal: 'x', plan: { entry: 'writer', edges: [] } });
    expect(reader.requests[0]!.tools.map((tool) => tool.name)).toEqual(['notes_read']);
    expect(writer.requests[0]!.tools.map((tool) => tool.name)).toEqual(['notes_read', 'notes_append']);
  });

  it('refuses an executor the catalog does not hold, and a custom tool named like an executor', () => {
    const model = createScriptedModel([]);
    expect(() =>
      createAgentRuntime({
        agents: [{ id: 'a', systemPrompt: '', provider: model, executors: ['mail_send'] }],
        executors: executorsOf(),
      }),
    ).toThrow(AgentConfigError);
    const clash = { name: 'notes_read', description: '', schema: {}, invoke: () => null };
    expect(() =>
      createAgentRuntime({
        agents: [{ id: 'a', systemPrompt: '', provider: model, customTools: [clash] }],
        executors: executorsOf(),
      }),
    ).toThrow(/already the name/);
  });

  it('reviews every executor call, runs it through the invoker, and does not run what needs an approval', async () => {
    const reviewer = recordingReviewer({
      approved: false,
      blocked_by: 'confirmation',
      reason: 'side effects',
    });
    const model = createScriptedModel([
      { toolCalls: [{ name: 'notes_append', args: { path: 'notes.md', line: 'paid' } }] },
      { text: 'could not' },
    ]);
    const runtime = createAgentRuntime({
      agents: [{ id: 'actor', systemPrompt: '', provider: model, executors: ['notes_append'] }],
      executors: executorsOf(reviewer),
    });
    const result = await runtime.run({ goal: 'mark it paid' });
    expect(reviewer.seen).toEqual(['notes_append']);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({
      content: expect.stringContaining('NeedsApproval'),
    });
    expect(await readFile(join(world.workspace, 'notes.md'), 'utf8')).not.toContain('paid');
    expect(result.events.find((event) => event.type === 'agent.tool.failed')).toMatchObject({
      data: { tool: 'notes_append', error_class: 'NeedsApproval' },
    });
  });

  it('signs a receipt for every model turn, executor call and custom tool call of a run, and traces it in spans', async () => {
    exporter.reset();
    const key = await generateSigningKey();
    const dir = receiptsDirOf(world.workspace);
    const receipts = createReceiptChain({ dir, key });
    const invoker = createInvoker({ catalog: world.catalog, runner: createProcessRunner(), receipts });
    const lookup = {
      name: 'ledger_lookup',
      description: 'Look up an invoice.',
      schema: {},
      invoke: () => ({ total: 120 }),
    };
    const model = createScriptedModel([
      { toolCalls: [{ name: 'notes_read', args: { path: 'notes.md', password: SECRET } }] },
      {
        toolCalls: [
          { name: 'notes_read', args: { path: 'notes.md' } },
          { name: 'ledger_lookup', args: { id: SECRET } },
        ],
      },
      { text: 'invoice 42 is due on 1 June' },
    ]);
    const runtime = createAgentRuntime({
      agents: [{ id: 'specialist', systemPrompt: '', provider: model, customTools: [lookup] }],
      executors: { ...executorsOf(), invoker },
      receipts,
    });
    const result = await runtime.run({ goal: 'when is invoice 42 due?', runId: 'run-receipts' });
    await runtime.destroy();
    expect(result.finalAnswer).toBe('invoice 42 is due on 1 June');
    const files = (await readdir(dir)).filter((file) => file.endsWith('.jsonl')).sort();
    const text = (await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))).join('');
    const kinds = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; data: Record<string, unknown> });
    // an executor refusal (bad arguments) is receipted too: the invoker signs every invocation
    expect(kinds.map((receipt) => receipt.kind)).toEqual([
      'model',
      'executor',
      'model',
      'executor',
      'tool',
      'model',
    ]);
    expect(kinds[0]!.data).toMatchObject({ agent: 'specialist', run: 'run-receipts', outcome: 'ok' });
    expect(text).not.toContain(SECRET);
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok', receipts: 6 });

    const spans = exporter.getFinishedSpans();
    const agentSpan = spans.find((span) => span.name === 'metnos.agent')!;
    expect(agentSpan.events.map((event) => event.name)).toEqual([
      'agent.llm.turn',
      'agent.tool.failed',
      'agent.llm.turn',
      'agent.tool.invoke',
      'agent.tool.invoke',
      'agent.llm.turn',
    ]);
    expect(agentSpan.events[0]!.attributes).toMatchObject({
      'metnos.agent_id': 'specialist',
      'metnos.hlc': expect.any(String),
    });
    expect(spans.find((span) => span.name === 'metnos.agents.run')!.attributes).toMatchObject({
      'metnos.ending': 'single',
    });
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events]))).not.toContain(SECRET);
  });
});
