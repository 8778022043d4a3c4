import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../test/anthropic-server.ts';
import { startOllamaServer } from '../test/ollama-server.ts';
import { startOpenAiServer } from '../test/openai-server.ts';
import { thrownBy } from '../test/thrown-by.ts';
import type { WireServer, WireStep } from '../test/wire-server.ts';
import {
  ProviderAbortedError,
  ProviderConfigError,
  ProviderHttpError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './errors.ts';
import { createAnthropicModel, createOllamaModel, createOpenAiModel } from './providers.ts';
import { classifyFailure, withRetry } from './retry.ts';
import { checkToolCall, TOOL_UNAVAILABLE } from './tool-args.ts';
import type { ChatMessage, ChatModel, ChatRequest, ToolSpec } from './types.ts';

const READ_TOOL: ToolSpec = {
  name: 'fs_read',
  description: 'Read a file in the workspace.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, tail: { type: 'integer', minimum: 1 } },
    required: ['path'],
    additionalProperties: false,
  },
};

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  system: 'You are Metnos.',
  messages: [{ role: 'user', content }],
  tools: [READ_TOOL],
  ...extra,
});

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface ProviderCase {
  name: 'ollama' | 'openai' | 'anthropic';
  model: string;
  start(script: WireStep[], options?: { apiKey?: string }): Promise<WireServer>;
  create(settings: { baseUrl: string; apiKey?: string; timeoutMs?: number; model?: string }): ChatModel;
  /** Expected cost of 1000 input + 200 output tokens. */
  cost: number;
}

const KEY = 'sk-test-key';

const providers: ProviderCase[] = [
  {
    name: 'ollama',
    model: 'qwen3:8b',
    start: (script) => startOllamaServer(script),
    create: ({ baseUrl, timeoutMs, model }) =>
      createOllamaModel({ model: model ?? 'qwen3:8b', baseUrl, timeoutMs, think: false }),
    cost: 0,
  },
  {
    name: 'openai',
    model: 'gpt-4o',
    start: (script, options) => startOpenAiServer(script, options),
    create: ({ baseUrl, apiKey, timeoutMs, model }) =>
      createOpenAiModel({ model: model ?? 'gpt-4o', apiKey: apiKey ?? KEY, baseUrl, timeoutMs }),
    cost: (1000 * 2.5 + 200 * 10) / 1e6,
  },
  {
    name: 'anthropic',
    model: 'claude-sonnet-4-6',
    start: (script, options) => startAnthropicServer(script, options),
    create: ({ baseUrl, apiKey, timeoutMs, model }) =>
      createAnthropicModel({
        model: model ?? 'claude-sonnet-4-6',
        apiKey: apiKey ?? KEY,
        baseUrl,
        timeoutMs,
      }),
    cost: (1000 * 3 + 200 * 15) / 1e6,
  },
];

async function serve(provider: ProviderCase, script: WireStep[], options?: { apiKey?: string }) {
  const server = await provider.start(script, options);
  servers.push(server);
  return server;
}

describe.each(providers)('$name provider against its loopback server', (provider) => {
  it('returns a text answer with usage, cost and the model it was asked for', async () => {
    const server = await serve(provider, [
      { text: 'Hello from the wire.', usage: { inputTokens: 1000, outputTokens: 200 } },
    ]);
    const model = provider.create({ baseUrl: server.baseUrl });
    const response = await model.generate(ask('say hello'));
    expect(response.text).toBe('Hello from the wire.');
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({ inputTokens: 1000, outputTokens: 200 });
    expect(response.costUsd).toBeCloseTo(provider.cost, 10);
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(model.provider).toBe(provider.name);
    expect(model.id).toBe(provider.model);
    expect((server.requests[0]!.body as { model: string }).model).toBe(provider.model);
    expect(JSON.stringify(server.requests[0]!.body)).toContain('You are Metnos.');
  });

  it('returns a tool call with its arguments parsed, after declaring the tool with its JSON Schema', async () => {
    const server = await serve(provider, [
      { toolCalls: [{ id: 'call_a', name: 'fs_read', args: { path: 'notes/diary.md', tail: 3 } }] },
    ]);
    const response = await provider
      .create({ baseUrl: server.baseUrl })
      .generate(ask('last three lines of my diary'));
    expect(response.finishReason).toBe('tool-calls');
    expect(response.toolCalls).toHaveLength(1);
    expect(response.toolCalls[0]!.name).toBe('fs_read');
    expect(response.toolCalls[0]!.args).toEqual({ path: 'notes/diary.md', tail: 3 });
    const sent = JSON.stringify(server.requests[0]!.body);
    expect(sent).toContain(JSON.stringify(READ_TOOL.parameters.properties));
    expect(sent).toContain('Read a file in the workspace.');
  });

  it('maps 401 to ProviderHttpError with an auth hint and a short body', async () => {
    const server = await serve(
      provider,
      provider.name === 'ollama' ? [{ status: 401, message: 'unauthorized' }] : [],
      { apiKey: KEY },
    );
    const model = provider.create({ baseUrl: server.baseUrl, apiKey: 'sk-wrong' });
    const error = await model.generate(ask('hi')).catch((caught: unknown) => caught);
    expect(ProviderHttpError.isInstance(error)).toBe(true);
    const http = error as ProviderHttpError;
    expect(http.status).toBe(401);
    expect(http.providerName).toBe(provider.name);
    expect(http.hint).toMatch(/auth rejected/);
    expect(http.bodySnippet.length).toBeGreaterThan(0);
    expect(http.bodySnippet.length).toBeLessThanOrEqual(500);
    expect(classifyFailure(error)).toBe('permanent');
  });

  it('maps 429 with Retry-After to retryAfterMs and a transient classification', async () => {
    const server = await serve(provider, [{ status: 429, message: 'slow down', retryAfter: 7 }]);
    const error = await provider
      .create({ baseUrl: server.baseUrl })
      .generate(ask('hi'))
      .catch((caught: unknown) => caught);
    expect(ProviderHttpError.isInstance(error)).toBe(true);
    expect((error as ProviderHttpError).retryAfterMs).toBe(7000);
    expect((error as ProviderHttpError).hint).toMatch(/rate-limited/);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('gets through a 500 with withRetry, using the same idempotency key and no real waiting', async () => {
    const server = await serve(provider, [{ status: 500, message: 'boom' }, { text: 'recovered' }]);
    const model = provider.create({ baseUrl: server.baseUrl });
    const keys: string[] = [];
    const waits: number[] = [];
    const response = await withRetry(
      ({ idempotencyKey }) => {
        keys.push(idempotencyKey);
        return model.generate(ask('hi'));
      },
      {
        attempts: 3,
        baseDelayMs: 100,
        random: () => 0.5,
        sleep: async (ms) => void waits.push(ms),
        idempotencyKey: 'turn-1',
      },
    );
    expect(response.text).toBe('recovered');
    expect(keys).toEqual(['turn-1', 'turn-1']);
    expect(waits).toEqual([75]);
    expect(server.requests).toHaveLength(2);
  });

  it('tears a request down at its timeout with ProviderTimeoutError', async () => {
    const server = await serve(provider, [{ hang: true }]);
    const error = await provider
      .create({ baseUrl: server.baseUrl, timeoutMs: 60_000 })
      .generate(ask('hi', { timeoutMs: 50 }))
      .catch((caught: unknown) => caught);
    expect(ProviderTimeoutError.isInstance(error)).toBe(true);
    expect((error as ProviderTimeoutError).timeoutMs).toBe(50);
    expect(classifyFailure(error)).toBe('transient');
  });

  it("honours the caller's abort signal with ProviderAbortedError", async () => {
    const server = await serve(provider, [{ hang: true }]);
    const controller = new AbortController();
    const pending = provider
      .create({ baseUrl: server.baseUrl })
      .generate(ask('hi', { signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await pending.catch((caught: unknown) => caught);
    expect(ProviderAbortedError.isInstance(error)).toBe(true);
    expect(classifyFailure(error)).toBe('permanent');
  });

  it('reports a refused connection as ProviderUnreachableError', async () => {
    const server = await serve(provider, []);
    const baseUrl = server.baseUrl;
    await server.close();
    const error = await provider
      .create({ baseUrl })
      .generate(ask('hi'))
      .catch((caught: unknown) => caught);
    expect(ProviderUnreachableError.isInstance(error)).toBe(true);
    expect((error as ProviderUnreachableError).networkCode).toBe('ECONNREFUSED');
    expect(classifyFailure(error)).toBe('transient');
    if (provider.name === 'ollama')
      expect((error as ProviderUnreachableError).hint).toContain('ollama serve');
  });

  it('reports a dropped connection as a transient ProviderUnreachableError', async () => {
    const server = await serve(provider, [{ drop: true }]);
    const error = await provider
      .create({ baseUrl: server.baseUrl })
      .generate(ask('hi'))
      .catch((caught: unknown) => caught);
    expect(ProviderUnreachableError.isInstance(error)).toBe(true);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('refuses plain http:// to a non-loopback host and a missing model at construction', () => {
    for (const baseUrl of [
      'http://192.168.1.20:11434',
      'http://models.example.com/v1',
      'ftp://127.0.0.1/v1',
    ]) {
      expect(() => provider.create({ baseUrl })).toThrow(/https:\/\//);
    }
    for (const baseUrl of [
      'http://localhost:9/v1',
      'http://127.0.0.2:9/v1',
      'http://[::1]:9/v1',
      'https://models.example.com/v1',
    ]) {
      expect(() => provider.create({ baseUrl })).not.toThrow();
    }
    const missing = thrownBy(
      () => provider.create({ baseUrl: 'http://localhost:9/v1', model: ' ' }),
      ProviderConfigError.isInstance,
    );
    expect(missing.field).toBe('model');
  });
});

const NOTE_SCRIPT: WireStep[] = [
  { toolCalls: [{ id: 'call_1', name: 'fs_read', args: { path: 'notes.txt' } }] },
  { text: 'It says: buy milk.' },
];

/**
 * Two rounds of the loop: the model calls fs_read, the observation goes back,
 * the model answers. Returns the body of the second request, as sent.
 */
async function roundTrip(model: ChatModel, server: WireServer) {
  const messages: ChatMessage[] = [{ role: 'user', content: 'read notes.txt' }];
  const first = await model.generate({ system: 's', messages, tools: [READ_TOOL] });
  messages.push({ role: 'assistant', content: first.text, toolCalls: first.toolCalls });
  for (const call of first.toolCalls) {
    messages.push({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content: '{"ok":true,"content":"buy milk"}',
    });
  }
  const second = await model.generate({ system: 's', messages, tools: [READ_TOOL] });
  expect(second.text).toBe('It says: buy milk.');
  expect(server.requests).toHaveLength(2);
  return server.requests[1]!;
}

describe('tool results go back in each vendor format', () => {
  it('ollama: assistant tool_calls with object arguments, then a tool message', async () => {
    const server = await serve(providers[0]!, NOTE_SCRIPT);
    const request = await roundTrip(
      createOllamaModel({ model: 'qwen3:8b', baseUrl: server.baseUrl }),
      server,
    );
    const messages = (request.body as { messages: unknown[] }).messages;
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'read notes.txt' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'fs_read', arguments: { path: 'notes.txt' } } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true,"content":"buy milk"}' },
    ]);
  });

  it('openai: assistant tool_calls with JSON-string arguments, then role tool with tool_call_id', async () => {
    const server = await serve(providers[1]!, NOTE_SCRIPT, { apiKey: KEY });
    const request = await roundTrip(
      createOpenAiModel({ model: 'gpt-4o', apiKey: KEY, baseUrl: server.baseUrl }),
      server,
    );
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    const messages = (request.body as { messages: unknown[] }).messages;
    expect(messages).toEqual([
      { role: 'system', content: 's' },
      { role: 'user', content: 'read notes.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'fs_read', arguments: '{"path":"notes.txt"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true,"content":"buy milk"}' },
    ]);
  });

  it('anthropic: tool_use block, then a user message with a tool_result block', async () => {
    const server = await serve(providers[2]!, NOTE_SCRIPT, { apiKey: KEY });
    const request = await roundTrip(
      createAnthropicModel({ model: 'claude-haiku-4-5', apiKey: KEY, baseUrl: server.baseUrl }),
      server,
    );
    expect(request.headers['x-api-key']).toBe(KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    const body = request.body as {
      messages: unknown[];
      system: unknown;
      max_tokens: number;
      tools: unknown[];
    };
    expect(body.max_tokens).toBe(4096);
    expect(body.system).toEqual([{ type: 'text', text: 's' }]);
    expect(body.tools).toEqual([
      { name: 'fs_read', description: READ_TOOL.description, input_schema: READ_TOOL.parameters },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read notes.txt' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_1', name: 'fs_read', input: { path: 'notes.txt' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '{"ok":true,"content":"buy milk"}' },
        ],
      },
    ]);
  });
});

describe('ollama specifics', () => {
  it('sends the think switch and the output cap as num_predict; a request can flip think', async () => {
    const server = await serve(providers[0]!, [
      { text: 'quick' },
      { text: 'pondered', thinking: 'let me think' },
    ]);
    const model = createOllamaModel({
      model: 'qwen3:8b',
      baseUrl: server.baseUrl,
      think: false,
      maxTokens: 256,
      prompt: 'Be brief.',
    });
    await model.generate(ask('fast one'));
    const deep = await model.generate(ask('slow one', { think: true }));
    const [first, second] = server.requests.map((request) => request.body as Record<string, unknown>);
    expect(first!.think).toBe(false);
    expect(first!.options).toEqual({ num_predict: 256 });
    expect(first!.stream).toBe(false);
    expect((first!.messages as Array<{ content: string }>)[0]!.content).toBe('You are Metnos.\n\nBe brief.');
    expect(second!.think).toBe(true);
    expect(deep.text).toBe('pondered');
  });

  it('defaults to http://localhost:11434 and appends /api once', async () => {
    const urls: string[] = [];
    const recordingFetch: typeof fetch = async (input) => {
      urls.push(String(input));
      return new Response(
        JSON.stringify({
          model: 'm',
          created_at: '',
          done: true,
          message: { role: 'assistant', content: 'ok' },
        }),
      );
    };
    await createOllamaModel({ model: 'm', fetch: recordingFetch }).generate(ask('hi', { tools: [] }));
    await createOllamaModel({
      model: 'm',
      baseUrl: 'http://127.0.0.1:11434/api/',
      fetch: recordingFetch,
    }).generate(ask('hi', { tools: [] }));
    expect(urls).toEqual(['http://localhost:11434/api/chat', 'http://127.0.0.1:11434/api/chat']);
  });

  it('hints at `ollama pull` on a 404 for an unknown model', async () => {
    const server = await serve(providers[0]!, [
      { status: 404, message: 'model "nope:1b" not found, try pulling it first' },
    ]);
    const error = await createOllamaModel({ model: 'nope:1b', baseUrl: server.baseUrl })
      .generate(ask('hi'))
      .catch((caught: unknown) => caught);
    expect((error as ProviderHttpError).hint).toContain('ollama pull nope:1b');
    expect((error as ProviderHttpError).bodySnippet).toContain('not found');
  });
});

describe('untrusted tool calls coming back from a provider', () => {
  it('keeps malformed or hostile arguments raw so the loop can harden them, and never names unknown tools', async () => {
    const server = await serve(providers[1]!, [
      {
        toolCalls: [
          { id: 'c1', name: 'fs_read', args: '{"path":"a.txt","__proto__":{"admin":true}}' },
          { id: 'c2', name: 'secret_tool_probe', args: {} },
          { id: 'c3', name: 'fs_read', args: '{"path": "unterminated' },
        ],
      },
    ]);
    const response = await createOpenAiModel({
      model: 'gpt-4o',
      apiKey: KEY,
      baseUrl: server.baseUrl,
    }).generate(ask('go'));
    const [hostile, unknown, broken] = response.toolCalls.map((call) => checkToolCall(call, [READ_TOOL]));
    expect(hostile).toEqual({ ok: true, id: 'c1', name: 'fs_read', args: { path: 'a.txt' } });
    expect(unknown).toMatchObject({ ok: false, message: TOOL_UNAVAILABLE, code: 'unknown_tool' });
    expect(broken).toMatchObject({ ok: false, message: TOOL_UNAVAILABLE, code: 'not_json' });
  });
});

describe('API keys', () => {
  it('are required and read through api_key_env from the injected environment', async () => {
    expect(() => createOpenAiModel({ model: 'gpt-4o', env: {} })).toThrow(/OPENAI_API_KEY/);
    expect(() =>
      createAnthropicModel({ model: 'claude-haiku-4-5', apiKeyEnv: 'MY_KEY', env: { MY_KEY: '  ' } }),
    ).toThrow(/MY_KEY/);
    const server = await serve(providers[2]!, [{ text: 'ok' }], { apiKey: 'from-env' });
    const model = createAnthropicModel({
      model: 'claude-haiku-4-5',
      apiKeyEnv: 'MY_KEY',
      env: { MY_KEY: 'from-env' },
      baseUrl: server.baseUrl,
    });
    expect((await model.generate(ask('hi'))).text).toBe('ok');
  });

  it('refuses credentials inside the base URL', () => {
    expect(() =>
      createOpenAiModel({ model: 'gpt-4o', apiKey: KEY, baseUrl: 'https://user:pass@example.com/v1' }),
    ).toThrow(ProviderConfigError);
  });
});
