import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCatalog, createInvoker, type HostService, signExecutor } from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createSandboxRunner } from '@metnos/sandbox';
import { beforeAll, describe, expect, it } from 'vitest';
import { engineOver, engineSettings, openStores, turnOf } from '../__fixtures__/engine.ts';
import { approveAll, createWorld, scripted } from '../__fixtures__/world.ts';
import type { ChatModel, ChatRequest } from '../model.ts';
import { createTurnBudget } from './budget.ts';
import { BROKERED_SYSTEM_PROMPT, createModelService } from './host-model.ts';
import { recordingModel } from './lineage.ts';
import type { Plan } from './plan.ts';
import { createReplayStore, type ReplayBundle, replayTurn } from './replay.ts';
import type { EngineSettings } from './types.ts';

// The `model` host service: one fast-tier completion per request, capped per call, counted in
// the turn's budget, recorded in its lineage and answered from the record by a replay. The
// engine cases run a signed executor that asks http://metnos.host/model under the real sandbox.

let world: Awaited<ReturnType<typeof createWorld>>;
let sandboxed: { catalog: ReturnType<typeof createCatalog>; invoker: ReturnType<typeof createInvoker> };

/** A fast model that answers brokered requests `echo:<prompt>` and fails everything else (the intent falls back to rules). */
function echoFast(): ChatModel & { asked: ChatRequest[] } {
  const asked: ChatRequest[] = [];
  return {
    id: 'echo-fast',
    provider: 'test',
    asked,
    async generate(request) {
      if (request.system !== BROKERED_SYSTEM_PROMPT) throw new Error('not a brokered request');
      asked.push(request);
      return {
        text: `echo:${request.messages[0]?.content}`,
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: 10 },
      };
    },
  };
}

/** One request to a model service, as the sandbox's dispatch would make it. */
const ask = (service: HostService, body: unknown, traceId = 't:1') =>
  service({
    service: 'model',
    body,
    executor: { name: 'x', version: '1.0.0' },
    traceId,
    caller: { kind: 'test' },
    signal: new AbortController().signal,
  });

/** A turn over the sandboxed catalog with these engine settings, and the fast model it asks. */
function sandboxedTurn(extra: Partial<EngineSettings>) {
  const stores = openStores(world);
  const fast = echoFast();
  const settings = engineSettings(
    world,
    stores,
    { wise: scripted([]), fast },
    { catalog: sandboxed.catalog, invoker: sandboxed.invoker, ...extra },
  );
  return { turn: turnOf(settings, 'ask the model three things'), fast, stores };
}

const ASKS_MODEL = `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ async run(args) {
  const answers = [];
  for (const prompt of args.prompts) {
    const response = await fetch('http://metnos.host/model', { method: 'POST', body: JSON.stringify({ prompt, max_tokens: 16 }) });
    const body = await response.json();
    answers.push(response.status === 200 ? body.text : body.error.class);
  }
  return ok({ answers });
} });
`;

const asks = (...prompts: string[]): Plan =>
  ({
    steps: [{ tool: 'asks_model', args: { prompts } }],
    final_message: 'Answers: ${step1.content.answers}',
  }) as unknown as Plan;

beforeAll(async () => {
  world = await createWorld();
  const root = join(world.root, 'sandboxed');
  const { dir } = await writeSignedExecutor({
    root,
    name: 'asks_model',
    key: world.key,
    code: ASKS_MODEL,
    sandboxToml: `[sandbox]
profile = "test"
min_tier = "full"
max_duration_ms = 10000
max_memory_mb = 128
max_output_bytes = 65536

[sandbox.fs]
read = []
write = []

[sandbox.exec]
mode = "none"

[sandbox.network]
mode = "none"
`,
    schema: {
      definitions: {
        Input: {
          type: 'object',
          properties: {
            prompts: {
              type: 'array',
              items: { type: 'string', format: 'text' },
              description: 'What to ask.',
            },
          },
          required: ['prompts'],
          additionalProperties: false,
        },
        Output: {
          type: 'object',
          properties: { answers: { type: 'array', items: { type: 'string' } } },
          required: ['answers'],
          additionalProperties: false,
        },
      },
    },
  });
  const manifest = await readFile(join(dir, 'manifest.toml'), 'utf8');
  await writeFile(
    join(dir, 'manifest.toml'),
    manifest.replace('capabilities = []', 'capabilities = ["host:model"]'),
  );
  await signExecutor(dir, world.key);
  const catalog = createCatalog({ root, trustedKeys: [world.key] });
  await catalog.load();
  sandboxed = { catalog, invoker: createInvoker({ catalog, runner: createSandboxRunner({ audit: false }) }) };
});

describe('the model host service', () => {
  it('refuses the request past its per-call cap, and bad bodies, as data', async () => {
    const fast = echoFast();
    const service = createModelService({ model: () => fast, limits: { requests: 2 } });
    const call = (body: unknown) => ask(service, body);
    expect(await call({ prompt: 'a', max_tokens: 5000 })).toEqual({ ok: true, value: { text: 'echo:a' } });
    expect(fast.asked[0]?.maxTokens).toBe(1024);
    expect(await call({ prompt: 'b' })).toEqual({ ok: true, value: { text: 'echo:b' } });
    expect(await call({ prompt: 'c' })).toEqual({
      ok: false,
      error: { class: 'BudgetExhausted', message: 'this call has made its 2 model requests' },
    });
    expect(fast.asked).toHaveLength(2);
    const fresh = createModelService({ model: () => fast });
    for (const body of [
      null,
      [],
      { prompt: '' },
      { prompt: 'x', max_tokens: 0 },
      { prompt: 'x', model: 'wise' },
    ])
      expect(await ask(fresh, body, 't:2')).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect(fast.asked).toHaveLength(2);
  });

  it('cuts max_tokens to what is left of the per-call tokens, then refuses', async () => {
    const fast = echoFast();
    const service = createModelService({ model: () => fast, limits: { tokens: 150 } });
    const call = () => ask(service, { prompt: 'p', max_tokens: 100 });
    expect((await call()).ok).toBe(true);
    expect((await call()).ok).toBe(true);
    expect(fast.asked.map((request) => request.maxTokens)).toEqual([100, 40]);
    expect(await call()).toMatchObject({ ok: false, error: { class: 'BudgetExhausted' } });
  });

  it('is refused once the turn budget is spent, and the turn counts exactly what was used', async () => {
    const budget = createTurnBudget({ tokens: 150 });
    const calls: Parameters<typeof recordingModel>[2]['calls'] = [];
    const service = createModelService({
      model: (origin) =>
        recordingModel(echoFast(), 'fast', { calls, counter: { calls: 0 }, budget, brokered: origin }),
    });
    const call = () => ask(service, { prompt: 'p' });
    expect((await call()).ok).toBe(true);
    expect((await call()).ok).toBe(true);
    expect(await call()).toMatchObject({ ok: false, error: { class: 'BudgetExhausted' } });
    expect(budget.spent.tokens).toBe(220);
    expect(calls).toHaveLength(2);
  });
});

describe('an executor asks the model through the real sandbox', () => {
  it('gets N answers, the N+1th is refused, and the turn counts and records each brokered call', async () => {
    const { turn, fast, stores } = sandboxedTurn({
      modelService: { requests: 2 },
      budget: { tokens: 10_000 },
    });
    const outcome = await turn.execute(asks('one', 'two', 'three'));
    stores.close();
    expect(outcome.ok).toBe(true);
    expect(outcome.ok && outcome.observations[0]?.content).toEqual({
      answers: ['echo:one', 'echo:two', 'BudgetExhausted'],
    });
    expect(fast.asked).toHaveLength(2);
    expect(turn.budget.spent.tokens).toBe(220);
    expect(turn.modelCalls()).toBe(2);
    expect(turn.modelLog).toHaveLength(2);
    expect(turn.modelLog[0]).toMatchObject({
      tier: 'fast',
      provider: 'test',
      model: 'echo-fast',
      parameters: { temperature: 0, seed: 0, maxTokens: 16 },
      brokered: { executor: 'asks_model', traceId: `${turn.turnId}:1` },
      response: { text: 'echo:one' },
    });
    expect(turn.modelLog[0]?.requestHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stops at the turn budget: the request after it is spent is refused and no model is asked', async () => {
    const { turn, fast, stores } = sandboxedTurn({ budget: { tokens: 150 } });
    const outcome = await turn.execute(asks('one', 'two', 'three'));
    stores.close();
    expect(outcome.ok && outcome.observations[0]?.content).toEqual({
      answers: ['echo:one', 'echo:two', 'BudgetExhausted'],
    });
    expect(fast.asked).toHaveLength(2);
    expect(turn.budget.spent.tokens).toBe(220);
  });

  it('a replay answers the brokered calls from the record and asks no model; a changed record diverges', async () => {
    const store = createReplayStore({ dir: join(world.root, 'replay-brokered') });
    const wise = scripted([{ text: JSON.stringify(asks('one', 'two')) }]);
    const { engine, stores } = engineOver(
      world,
      { wise, fast: echoFast() },
      { catalog: sandboxed.catalog, invoker: sandboxed.invoker, replay: store },
    );
    const result = await engine.runTurn('ask the model two things');
    stores.close();
    expect(result).toMatchObject({ finalKind: 'answer', finalMessage: 'Answers: echo:one, echo:two' });
    const bundle = store.load(result.turnId);
    expect(bundle.modelCalls.filter((call) => call.brokered)).toHaveLength(2);
    const settings = {
      executors: sandboxed.catalog.executors(),
      invoker: sandboxed.invoker,
      reviewer: approveAll,
      workspace: world.workspace,
      home: world.root,
    };
    const report = await replayTurn(bundle, settings);
    expect(report.divergence).toBeUndefined();
    expect(report.matched).toBe(1);

    const edited = structuredClone(bundle) as ReplayBundle;
    const second = edited.modelCalls.filter((call) => call.brokered)[1]!;
    second.requestHash = '0'.repeat(64);
    const diverged = await replayTurn(edited, settings);
    expect(diverged.divergence).toMatchObject({ at: 'model', tool: 'asks_model' });
  });
});
