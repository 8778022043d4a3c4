import { createAgentRuntime } from '@metnos/planner/agents';
import { createScriptedModel } from '@metnos/planner/test';
import { describe, expect, it } from 'vitest';
import { createApp, type ServerAgents, type ServerEngine } from '../src/app.ts';

const TOKEN = 'a'.repeat(43);

// biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field
type Json = any;

const engine: ServerEngine = {
  runTurn: async () => {
    throw new Error('the engine is not asked when agents are named');
  },
  feedback: async () => ({ recorded: false }) as unknown as Awaited<ReturnType<ServerEngine['feedback']>>,
};

/** One graph, `triage`: a router that hands a billing question to a specialist; a fresh runtime per run. */
const agents: ServerAgents = {
  names: () => ['triage'],
  run: (_name, goal, options = {}) =>
    createAgentRuntime({
      agents: [
        {
          id: 'router',
          systemPrompt: '',
          provider: createScriptedModel([{ text: 'billing' }]),
          executors: [],
        },
        {
          id: 'specialist',
          systemPrompt: '',
          provider: createScriptedModel([
            { toolCalls: [{ name: 'probe_tool', args: {} }] },
            { text: 'Invoice 42: 120 EUR' },
          ]),
          executors: [],
        },
      ],
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    }).run({
      goal,
      plan: {
        entry: 'router',
        edges: [{ from: 'router', to: 'specialist', when: (answer) => answer.includes('billing') }],
        exits: ['specialist'],
      },
    }),
};

const post = (app: ReturnType<typeof createApp>, body: unknown, accept = 'application/json') =>
  app.fetch(
    new Request('http://127.0.0.1/api/turns', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
    }),
  );

describe('POST /api/turns with agents', () => {
  it('runs the named graph and answers with the run, its visits and events, without operator details', async () => {
    const app = createApp({ token: TOKEN, engine, agents });
    const response = await post(app, { request: 'How much is invoice 42?', agents: 'triage' });
    expect(response.status).toBe(200);
    const run: Json = await response.json();
    expect(run).toMatchObject({
      status: 'completed',
      ending: 'exit',
      finalAnswer: 'Invoice 42: 120 EUR',
      visits: [{ agentId: 'router' }, { agentId: 'specialist', turns: 2, toolCalls: 1 }],
    });
    const rejected = run.events.find((event: { type: string }) => event.type === 'agent.tool.rejected');
    expect(rejected).toMatchObject({ data: { code: 'unknown_tool' } });
    expect(JSON.stringify(run)).not.toContain('probe_tool');
  });

  it('streams each trace event as it happens, then the answer', async () => {
    const app = createApp({ token: TOKEN, engine, agents });
    const response = await post(
      app,
      { request: 'How much is invoice 42?', agents: 'triage' },
      'text/event-stream',
    );
    const text = await response.text();
    const names = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(names).toEqual([
      'started',
      'agent.llm.turn',
      'agent.handoff.transition',
      'agent.llm.turn',
      'agent.tool.rejected',
      'agent.llm.turn',
      'answer',
    ]);
  });

  it('refuses a graph the server does not have, and a name that is not one', async () => {
    for (const settings of [{ agents }, {}]) {
      const app = createApp({ token: TOKEN, engine, ...settings });
      const response = await post(app, { request: 'x', agents: 'billing' });
      expect([response.status, ((await response.json()) as Json).message]).toEqual([
        400,
        'this server has no agent graph "billing"',
      ]);
    }
    const app = createApp({ token: TOKEN, engine, agents });
    expect((await post(app, { request: 'x', agents: '../etc' })).status).toBe(400);
  });

  it('documents the field in the OpenAPI document', async () => {
    const app = createApp({ token: TOKEN, engine, agents });
    const document: Json = await (
      await app.fetch(
        new Request('http://127.0.0.1/api/openapi.json', { headers: { authorization: `Bearer ${TOKEN}` } }),
      )
    ).json();
    const body = document.paths['/api/turns'].post.requestBody.content['application/json'].schema;
    expect(body.properties.agents).toMatchObject({ type: 'string' });
    expect(body.required).toEqual(['request']);
  });
});
