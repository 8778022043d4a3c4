import { describe, expect, it, vi } from 'vitest';
import { createScriptedModel, type ScriptStep } from '../test/scripted-model.ts';
import { AgentConfigError, ToolArgError } from './errors.ts';
import { createAgentRuntime } from './runtime.ts';
import type { AgentDefinition, AgentEvent, CustomTool, HandoffPlan } from './types.ts';

const say = (text: string): ScriptStep => ({ text, usage: { inputTokens: 10, outputTokens: 5 } });
const call = (name: string, args: unknown): ScriptStep => ({
  toolCalls: [{ name, args }],
  usage: { inputTokens: 10, outputTokens: 5 },
});

function agent(id: string, steps: ScriptStep[], extra: Partial<AgentDefinition> = {}): AgentDefinition {
  return {
    id,
    systemPrompt: `You are ${id}.`,
    provider: createScriptedModel(steps, { id }),
    executors: [],
    ...extra,
  };
}

/** A custom tool that records what it was given. */
function echoTool(name = 'util_echo'): CustomTool & { seen: Array<Record<string, unknown>> } {
  const seen: Array<Record<string, unknown>> = [];
  return {
    name,
    description: 'Echo the arguments.',
    schema: { type: 'object', properties: { text: { type: 'string' } } },
    seen,
    invoke(args) {
      seen.push(args);
      return { echoed: args };
    },
  };
}

const types = (events: AgentEvent[]) => events.map((event) => event.type);

describe('the handoff graph', () => {
  it('runs the first agent alone without a plan, and writes its answer to shared memory', async () => {
    const runtime = createAgentRuntime({ agents: [agent('solo', [say('hello')]), agent('other', [])] });
    const result = await runtime.run({ goal: 'greet me', runId: 'run-1' });
    expect(result).toMatchObject({ status: 'completed', ending: 'single', finalAnswer: 'hello' });
    expect(result.visits.map((visit) => visit.agentId)).toEqual(['solo']);
    expect(await runtime.memory('run-1').get('shared', 'agent:solo:answer')).toBe('hello');
  });

  it('follows the first edge whose `when` matches, hands the answer on, and ends at an exit', async () => {
    const specialist = agent('specialist', [say('invoice 42 is due on 1 June')]);
    const plan: HandoffPlan = {
      entry: 'router',
      edges: [
        { from: 'router', to: 'fallback', when: (answer) => answer.includes('unrelated') },
        { from: 'router', to: 'specialist', when: (answer) => answer.includes('billing') },
        { from: 'router', to: 'fallback' },
        { from: 'specialist', to: 'actor' },
        { from: 'fallback', to: 'actor' },
      ],
      exits: ['actor'],
    };
    const runtime = createAgentRuntime({
      agents: [
        agent('router', [say('a billing question')]),
        specialist,
        agent('fallback', [say('never asked')]),
        agent('actor', [say('mailed it')]),
      ],
    });
    const result = await runtime.run({ goal: 'when is invoice 42 due?', plan });
    expect(result.visits.map((visit) => visit.agentId)).toEqual(['router', 'specialist', 'actor']);
    expect(result).toMatchObject({ status: 'completed', ending: 'exit', finalAnswer: 'mailed it' });
    const handed = (specialist.provider as ReturnType<typeof createScriptedModel>).requests[0]!.messages[0];
    expect(handed).toMatchObject({ role: 'user', content: expect.stringContaining('a billing question') });
    const transitions = result.events.filter((event) => event.type === 'agent.handoff.transition');
    expect(transitions.map((event) => [event.data.from, event.data.to, event.data.edge])).toEqual([
      ['router', 'specialist', 1],
      ['specialist', 'actor', 3],
    ]);
  });

  it('enters an agent again below the cap without calling it a cycle (visits are counted)', async () => {
    const plan: HandoffPlan = {
      entry: 'a',
      edges: [
        { from: 'a', to: 'd' },
        { from: 'd', to: 'b', when: (_answer, context) => context.visits.d === 1 },
        { from: 'b', to: 'd' },
      ],
      exits: [],
      maxAgentVisits: 2,
    };
    const runtime = createAgentRuntime({
      agents: [agent('a', [say('a')]), agent('b', [say('b')]), agent('d', [say('d1'), say('d2')])],
    });
    const result = await runtime.run({ goal: 'diamond', plan });
    expect(result.visits.map((visit) => `${visit.agentId}${visit.visit}`)).toEqual(['a1', 'd1', 'b1', 'd2']);
    expect(result.ending).toBe('no_edge');
    expect(types(result.events)).not.toContain('agent.handoff.cycle');
  });

  it('stops a cycle at the visit cap with agent.handoff.cycle', async () => {
    const loop = Array.from({ length: 20 }, (_, index) => say(`round ${index}`));
    const runtime = createAgentRuntime({ agents: [agent('ping', loop), agent('pong', loop)] });
    const result = await runtime.run({
      goal: 'bounce',
      plan: {
        entry: 'ping',
        edges: [
          { from: 'ping', to: 'pong' },
          { from: 'pong', to: 'ping' },
        ],
        maxAgentVisits: 3,
      },
    });
    expect(result.visits).toHaveLength(6);
    expect(result).toMatchObject({ status: 'completed', ending: 'cycle' });
    const cycle = result.events.find((event) => event.type === 'agent.handoff.cycle')!;
    expect(cycle).toMatchObject({
      capability: 'agent:control',
      agentId: 'ping',
      data: { from: 'pong', to: 'ping', visits: 3, max_agent_visits: 3 },
    });
  });

  it('refuses a plan naming an agent it does not have, before any model is asked', async () => {
    const router = agent('router', [say('x')]);
    const runtime = createAgentRuntime({ agents: [router] });
    await expect(
      runtime.run({ goal: 'x', plan: { entry: 'router', edges: [{ from: 'router', to: 'ghost' }] } }),
    ).rejects.toSatisfy((error) => AgentConfigError.isInstance(error) && error.field === 'edges[0].to');
    expect((router.provider as ReturnType<typeof createScriptedModel>).requests).toHaveLength(0);
  });
});

describe('budgets', () => {
  const looping = (count: number, usage = { inputTokens: 10, outputTokens: 5 }, costUsd?: number) =>
    Array.from({ length: count }, () => ({
      toolCalls: [{ name: 'util_echo', args: { text: 'again' } }],
      usage,
      ...(costUsd === undefined ? {} : { costUsd }),
    }));

  it('stops an agent at 50 turns by default, with a typed reason, and hands on as if it had answered', async () => {
    const runtime = createAgentRuntime({
      agents: [
        agent('worker', [...looping(60)], { customTools: [echoTool()] }),
        agent('next', [say('took over')]),
      ],
    });
    const result = await runtime.run({
      goal: 'loop',
      plan: { entry: 'worker', edges: [{ from: 'worker', to: 'next' }], exits: ['next'] },
    });
    expect(result.visits[0]).toMatchObject({
      status: 'budget_exhausted',
      budgetExhausted: 'turns',
      turns: 50,
    });
    expect(result).toMatchObject({ status: 'completed', ending: 'exit', finalAnswer: 'took over' });
    expect(result.events.find((event) => event.type === 'agent.budget.exhausted')).toMatchObject({
      capability: 'agent:policy',
      agentId: 'worker',
      data: { reason: 'turns', limit: 50, spent: 50 },
    });
  });

  it('stops on tool calls, tokens and cost, each with its reason', async () => {
    const many = { toolCalls: Array.from({ length: 5 }, () => ({ name: 'util_echo', args: {} })) };
    const cases: Array<[AgentDefinition['budget'], ScriptStep[], string]> = [
      [{ maxToolCalls: 3 }, [many, many], 'toolCalls'],
      [{ maxTokens: 40 }, looping(10, { inputTokens: 15, outputTokens: 5 }), 'tokens'],
      [{ maxCostUsd: 0.05 }, looping(10, { inputTokens: 1, outputTokens: 1 }, 0.02), 'costUsd'],
    ];
    for (const [budget, steps, reason] of cases) {
      const runtime = createAgentRuntime({
        agents: [agent('a', steps, { budget, customTools: [echoTool()] })],
      });
      const result = await runtime.run({ goal: 'spend' });
      expect([reason, result.visits[0]!.status, result.visits[0]!.budgetExhausted]).toEqual([
        reason,
        'budget_exhausted',
        reason,
      ]);
    }
  });
});

describe('custom tools', () => {
  it('refuses bad or colliding names when the runtime is built', () => {
    const build = (tools: CustomTool[]) => () =>
      createAgentRuntime({ agents: [agent('a', [], { customTools: tools })] });
    for (const name of ['9lives', 'has space', 'dot.ted', '', 'scratchpad_read'])
      expect(build([echoTool(name)]), name).toThrow(AgentConfigError);
    expect(build([echoTool('db_get'), echoTool('db_get')])).toThrow(/already the name/);
    expect(build([echoTool('db_get'), echoTool('_my-tool')])).not.toThrow();
  });

  it('scrubs prototype keys, refuses arguments deeper than 64 levels, and never echoes an unknown name', async () => {
    const tool = echoTool();
    let deep: unknown = { leaf: 1 };
    for (let level = 0; level < 70; level++) deep = { deeper: deep };
    const model = createScriptedModel([
      call(
        'util_echo',
        '{"text":"hi","__proto__":{"polluted":true},"nested":{"constructor":{"prototype":1},"ok":2}}',
      ),
      call('util_echo', deep),
      call('secret_admin_tool', { text: 'x' }),
      say('done'),
    ]);
    const runtime = createAgentRuntime({
      agents: [{ id: 'a', systemPrompt: 'p', provider: model, executors: [], customTools: [tool] }],
    });
    const result = await runtime.run({ goal: 'probe' });
    expect(tool.seen).toEqual([{ text: 'hi', nested: { ok: 2 } }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const observations = model.requests[3]!.messages.filter((message) => message.role === 'tool');
    expect(observations.map((message) => message.content)).toEqual([
      '{"echoed":{"text":"hi","nested":{"ok":2}}}',
      'tool unavailable',
      'tool unavailable',
    ]);
    expect(observations[2]!.content).not.toContain('secret_admin_tool');
    const rejected = result.events.find((event) => event.type === 'agent.tool.rejected')!;
    expect(rejected).toMatchObject({ data: { code: 'unknown_tool' } });
    expect(JSON.stringify(rejected.data)).not.toContain('secret_admin_tool');
    expect(rejected.detail).toContain('secret_admin_tool');
    expect(result.events.find((event) => event.type === 'agent.tool.failed')).toMatchObject({
      data: { tool: 'util_echo', code: 'too_deep' },
    });
  });

  it('maps a ToolArgError to "tool unavailable", forwards any other error, and serialises odd results', async () => {
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    const tools: CustomTool[] = [
      {
        name: 'strict_tool',
        description: '',
        schema: {},
        invoke: () => {
          throw new ToolArgError('password hunter2 refused');
        },
      },
      {
        name: 'domain_tool',
        description: '',
        schema: {},
        invoke: () => {
          throw new Error('the ledger is closed');
        },
      },
      {
        name: 'odd_tool',
        description: '',
        schema: {},
        invoke: () => ({ big: 10n, circular, fn: () => 1, sym: Symbol('s') }),
      },
    ];
    const model = createScriptedModel([
      {
        toolCalls: [
          { name: 'strict_tool', args: {} },
          { name: 'domain_tool', args: {} },
          { name: 'odd_tool', args: {} },
        ],
      },
      say('ok'),
    ]);
    const runtime = createAgentRuntime({
      agents: [{ id: 'a', systemPrompt: '', provider: model, executors: [], customTools: tools }],
    });
    const result = await runtime.run({ goal: 'x' });
    const contents = model.requests[1]!.messages.filter((message) => message.role === 'tool').map(
      (message) => message.content,
    );
    expect(contents).toEqual([
      'tool unavailable',
      'error: the ledger is closed',
      '{"big":"10","circular":{"name":"loop","self":"[Circular]"}}',
    ]);
    expect(JSON.stringify(model.requests)).not.toContain('hunter2');
    expect(
      result.events
        .filter((event) => event.type === 'agent.tool.failed')
        .map((event) => event.data.error_class),
    ).toEqual(['ToolArgError', 'Error']);
  });
});

describe('abort and destroy', () => {
  it('aborts an in-flight custom tool and model call through the run signal', async () => {
    const seenSignals: AbortSignal[] = [];
    const slow: CustomTool = {
      name: 'slow_tool',
      description: '',
      schema: {},
      invoke: (_args, context) =>
        new Promise((_resolve, reject) => {
          seenSignals.push(context.signal);
          context.signal.addEventListener('abort', () => reject(new Error('torn down')));
        }),
    };
    const controller = new AbortController();
    const model = createScriptedModel([call('slow_tool', {}), say('never')]);
    const runtime = createAgentRuntime({
      agents: [{ id: 'a', systemPrompt: '', provider: model, executors: [], customTools: [slow] }],
    });
    const running = runtime.run({ goal: 'wait', signal: controller.signal });
    // abort once the tool is under way (a fixed sleep raced the tool's start on a loaded machine)
    await vi.waitFor(() => expect(seenSignals).toHaveLength(1), { timeout: 10_000 });
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ status: 'aborted', ending: 'aborted' });
    expect(seenSignals[0]!.aborted).toBe(true);
    expect(model.requests).toHaveLength(1);
    expect(types(result.events)).toContain('agent.run.aborted');
  });

  it('destroy() aborts runs under way, calls each provider destroy once and reports failures as events', async () => {
    let calls = 0;
    let generating = 0;
    const hanging = {
      id: 'hang',
      provider: 'test',
      generate: (request: { signal?: AbortSignal }) => {
        generating++;
        return new Promise<never>((_resolve, reject) =>
          request.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      },
      destroy: () => {
        calls++;
      },
    };
    const failing = { ...createScriptedModel([]), destroy: () => Promise.reject(new Error('pool stuck')) };
    const runtime = createAgentRuntime({
      agents: [
        { id: 'a', systemPrompt: '', provider: hanging, executors: [] },
        { id: 'b', systemPrompt: '', provider: hanging, executors: [] },
        { id: 'c', systemPrompt: '', provider: failing, executors: [] },
      ],
    });
    const running = runtime.run({ goal: 'x' });
    await vi.waitFor(() => expect(generating).toBeGreaterThan(0), { timeout: 10_000 });
    const events = await runtime.destroy();
    expect((await running).status).toBe('aborted');
    expect(calls).toBe(1);
    expect(events).toMatchObject([
      {
        type: 'agent.provider.destroy.failed',
        capability: 'agent',
        agentId: 'c',
        data: { error_class: 'Error' },
      },
    ]);
    await expect(runtime.run({ goal: 'again' })).rejects.toSatisfy(AgentConfigError.isInstance);
  });
});

describe('trace events', () => {
  it('stamps every event with an HLC that rises even when the wall clock steps back', async () => {
    let wall = 50_000;
    const clock = () => (wall -= 1000);
    const runtime = createAgentRuntime({
      agents: [agent('a', [call('util_echo', {}), say('done')], { customTools: [echoTool()] })],
      now: clock,
    });
    const result = await runtime.run({ goal: 'x' });
    expect(types(result.events)).toEqual(['agent.llm.turn', 'agent.tool.invoke', 'agent.llm.turn']);
    const stamps = result.events.map((event) => event.hlc);
    for (let index = 1; index < stamps.length; index++) {
      const [a, b] = [stamps[index - 1]!, stamps[index]!];
      expect(b.ms > a.ms || (b.ms === a.ms && b.c > a.c)).toBe(true);
    }
  });
});
