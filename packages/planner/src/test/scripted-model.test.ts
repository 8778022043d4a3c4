import { describe, expect, it } from 'vitest';
import { ProviderAbortedError, ProviderHttpError } from '../llm/errors.ts';
import { createEchoModel, createScriptedModel, ScriptExhaustedError } from './scripted-model.ts';

const request = (content: string) => ({
  system: 'sys',
  messages: [{ role: 'user' as const, content }],
  tools: [],
});

describe('createScriptedModel', () => {
  it('answers in order with text and tool calls, and records what it was asked', async () => {
    const model = createScriptedModel([
      {
        toolCalls: [
          { name: 'fs_read', args: { path: 'a' } },
          { id: 'mine', name: 'fs_list', args: {} },
        ],
      },
      { text: 'done', usage: { inputTokens: 7, outputTokens: 2 }, costUsd: 0.01 },
    ]);
    const controller = new AbortController();
    const first = await model.generate({ ...request('one'), signal: controller.signal, timeoutMs: 5 });
    expect(first.toolCalls).toEqual([
      { id: 'call_0_0', name: 'fs_read', args: { path: 'a' } },
      { id: 'mine', name: 'fs_list', args: {} },
    ]);
    expect(first.finishReason).toBe('tool-calls');
    const second = await model.generate(request('two'));
    expect(second).toMatchObject({
      text: 'done',
      toolCalls: [],
      usage: { inputTokens: 7, outputTokens: 2 },
      costUsd: 0.01,
      finishReason: 'stop',
    });
    expect(model.requests.map((seen) => seen.messages[0]!.content)).toEqual(['one', 'two']);
    expect(model.requests[0]).toEqual({ ...request('one'), timeoutMs: 5 });
    expect(model.remaining()).toBe(0);
  });

  it('throws a scripted error, then ScriptExhaustedError past the end', async () => {
    const rateLimited = new ProviderHttpError({
      status: 429,
      bodySnippet: '',
      providerName: 'scripted',
      hint: 'rate-limited',
      retryAfterMs: 10,
    });
    const model = createScriptedModel([{ error: rateLimited }]);
    await expect(model.generate(request('a'))).rejects.toBe(rateLimited);
    const exhausted = await model.generate(request('b')).catch((error: unknown) => error);
    expect(ScriptExhaustedError.isInstance(exhausted)).toBe(true);
  });

  it('builds a step from the request when given a function', async () => {
    const model = createScriptedModel([(seen, turn) => ({ text: `${turn}:${seen.messages.at(-1)!.role}` })]);
    expect((await model.generate(request('x'))).text).toBe('0:user');
  });

  it('refuses an aborted signal like a provider would', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await createScriptedModel([{ text: 'never' }])
      .generate({ ...request('x'), signal: controller.signal })
      .catch((caught: unknown) => caught);
    expect(ProviderAbortedError.isInstance(error)).toBe(true);
  });
});

describe('createEchoModel', () => {
  it('echoes the last user message and never calls tools', async () => {
    const model = createEchoModel({ tier: 'fast' });
    const response = await model.generate({
      system: '',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'ping' },
      ],
      tools: [{ name: 't', description: '', parameters: {} }],
    });
    expect(response.text).toBe('received: ping');
    expect(response.toolCalls).toEqual([]);
    expect(model.tier).toBe('fast');
    expect(model.requests).toHaveLength(1);
  });
});
