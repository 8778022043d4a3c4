import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createInvoker,
  createProcessRunner,
  createReceiptChain,
  generateSigningKey,
  receiptsDirOf,
  verifyReceiptChain,
} from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentWorld, recordingReviewer } from '../__fixtures__/agents.ts';
import { createAnthropicModel, createOllamaModel, createOpenAiModel } from '../llm/providers.ts';
import { startAnthropicServer } from '../test/anthropic-server.ts';
import { startOllamaServer } from '../test/ollama-server.ts';
import { startOpenAiServer } from '../test/openai-server.ts';
import type { WireServer } from '../test/wire-server.ts';
import { createAgentRuntime } from './runtime.ts';
import type { AgentEvent, HandoffPlan } from './types.ts';

// Router → specialist → actor, each model behind a real wire server on loopback (Ollama, the
// OpenAI protocol, the Anthropic protocol), the executors real and signed, every model turn and
// executor call receipted in one signed chain.

let world: Awaited<ReturnType<typeof createAgentWorld>>;
let servers: { ollama: WireServer; openai: WireServer; anthropic: WireServer };
let runtime: ReturnType<typeof createAgentRuntime>;
let key: Awaited<ReturnType<typeof generateSigningKey>>;
let dir: string;

const plan: HandoffPlan = {
  entry: 'router',
  edges: [
    { from: 'router', to: 'specialist', when: (answer) => /billing/i.test(answer) },
    { from: 'router', to: 'actor' },
    { from: 'specialist', to: 'router', when: (answer) => answer.includes('ask again') },
    { from: 'specialist', to: 'actor' },
  ],
  exits: ['actor'],
  maxAgentVisits: 2,
};

beforeAll(async () => {
  world = await createAgentWorld();
  servers = {
    ollama: await startOllamaServer(),
    openai: await startOpenAiServer([], { apiKey: 'test-openai-key' }),
    anthropic: await startAnthropicServer([], { apiKey: 'test-anthropic-key' }),
  };
  key = await generateSigningKey();
  dir = receiptsDirOf(world.workspace);
  const receipts = createReceiptChain({ dir, key });
  runtime = createAgentRuntime({
    agents: [
      {
        id: 'router',
        systemPrompt: 'Say "billing" when the request is about an invoice.',
        provider: createOllamaModel({ model: 'qwen3:8b', baseUrl: servers.ollama.baseUrl }),
        executors: [],
      },
      {
        id: 'specialist',
        systemPrompt: 'Answer billing questions from the notes.',
        provider: createOpenAiModel({
          model: 'gpt-4o-mini',
          apiKey: 'test-openai-key',
          baseUrl: servers.openai.baseUrl,
        }),
        executors: ['notes_read'],
        budget: { maxToolCalls: 1 },
      },
      {
        id: 'actor',
        systemPrompt: 'Record the answer in the notes.',
        provider: createAnthropicModel({
          model: 'claude-haiku-4-5',
          apiKey: 'test-anthropic-key',
          baseUrl: servers.anthropic.baseUrl,
        }),
        executors: ['notes_append'],
      },
    ],
    executors: {
      catalog: world.catalog,
      invoker: createInvoker({ catalog: world.catalog, runner: createProcessRunner(), receipts }),
      reviewer: recordingReviewer(),
      workspace: world.workspace,
    },
    receipts,
  });
});
afterAll(async () => {
  await runtime.destroy();
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

const route = (events: AgentEvent[]) =>
  events
    .filter((event) => event.type === 'agent.handoff.transition')
    .map((event) => `${event.data.from}→${event.data.to}`);

async function chainLines(): Promise<{ file: string; lines: string[] }> {
  const [file] = (await readdir(dir))
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .slice(-1);
  return { file: join(dir, file!), lines: (await readFile(join(dir, file!), 'utf8')).trim().split('\n') };
}

describe('router → specialist → actor over the wire', () => {
  it('hands off by `when`, stops the specialist on its tool-call budget with the reason, and ends at the actor', async () => {
    servers.ollama.push({ text: 'This is a billing question.' });
    servers.openai.push(
      {
        text: 'Reading the notes.',
        toolCalls: [{ id: 'c1', name: 'notes_read', args: { path: 'notes.md' } }],
      },
      {
        text: 'Invoice 42 is 120 EUR.',
        toolCalls: [{ id: 'c2', name: 'notes_read', args: { path: 'notes.md' } }],
      },
    );
    servers.anthropic.push(
      {
        toolCalls: [
          { id: 't1', name: 'notes_append', args: { path: 'notes.md', line: 'answered: 120 EUR' } },
        ],
      },
      { text: 'Recorded: invoice 42 is 120 EUR.' },
    );
    const result = await runtime.run({ goal: 'How much is invoice 42?', plan });
    expect(route(result.events)).toEqual(['router→specialist', 'specialist→actor']);
    expect(result).toMatchObject({
      status: 'completed',
      ending: 'exit',
      finalAnswer: 'Recorded: invoice 42 is 120 EUR.',
    });
    expect(result.visits[1]).toMatchObject({
      agentId: 'specialist',
      status: 'budget_exhausted',
      budgetExhausted: 'toolCalls',
    });
    expect(result.events.find((event) => event.type === 'agent.budget.exhausted')).toMatchObject({
      agentId: 'specialist',
      data: { reason: 'toolCalls', limit: 1 },
    });
    expect(await readFile(join(world.workspace, 'notes.md'), 'utf8')).toContain('answered: 120 EUR');
    // the specialist's answer reached the actor as its first message, over the Anthropic wire
    expect(JSON.stringify(servers.anthropic.requests[0]!.body)).toContain('Invoice 42 is 120 EUR.');
  });

  it('stops a router ⇄ specialist cycle at the visit cap', async () => {
    servers.ollama.push({ text: 'billing' }, { text: 'billing again' });
    servers.openai.push({ text: 'ask again: which invoice?' }, { text: 'ask again: still unclear' });
    const result = await runtime.run({ goal: 'Something about a bill', plan });
    expect(result.visits.map((visit) => visit.agentId)).toEqual([
      'router',
      'specialist',
      'router',
      'specialist',
    ]);
    expect(result.ending).toBe('cycle');
    expect(result.events.find((event) => event.type === 'agent.handoff.cycle')).toMatchObject({
      data: { from: 'specialist', to: 'router', visits: 2, max_agent_visits: 2 },
    });
  });

  it('aborts mid-run: the in-flight model request is torn down', async () => {
    servers.ollama.push({ text: 'billing' });
    servers.openai.push({ hang: true });
    const controller = new AbortController();
    const running = runtime.run({ goal: 'How much is invoice 7?', plan, signal: controller.signal });
    while (servers.openai.requests.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ status: 'aborted', ending: 'aborted' });
    expect(result.visits.map((visit) => [visit.agentId, visit.status])).toEqual([
      ['router', 'completed'],
      ['specialist', 'aborted'],
    ]);
  });

  it('left a receipt chain that verifies, and in which one edited byte is found', async () => {
    const report = await verifyReceiptChain({ dir, keys: [key] });
    // 5 + 4 + 2 model turns (the aborted one included), 2 executor calls
    expect(report).toMatchObject({ status: 'ok', receipts: 13 });
    const { file, lines } = await chainLines();
    const kinds = lines.map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds.filter((kind) => kind === 'executor')).toHaveLength(2);
    const original = await readFile(file, 'utf8');
    const at = original.indexOf('"agent":"specialist"') + '"agent":"s'.length;
    await writeFile(file, `${original.slice(0, at)}S${original.slice(at + 1)}`);
    const broken = await verifyReceiptChain({ dir, keys: [key] });
    expect(broken.broken).toMatchObject({ reason: 'bad_signature' });
    await writeFile(file, original);
  });
});
