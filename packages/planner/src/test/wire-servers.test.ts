import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, type LanguageModel, streamText } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from './anthropic-server.ts';
import { startOllamaServer } from './ollama-server.ts';
import { startOpenAiServer } from './openai-server.ts';
import type { WireServer, WireStep } from './wire-server.ts';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const dialects: Array<{
  name: string;
  start: (script: WireStep[]) => Promise<WireServer>;
  model: (server: WireServer) => LanguageModel;
}> = [
  {
    name: 'ollama',
    start: startOllamaServer,
    model: (server) => createOllama({ baseURL: `${server.baseUrl}/api` })('qwen3:8b'),
  },
  {
    name: 'openai',
    start: startOpenAiServer,
    model: (server) => createOpenAI({ baseURL: server.baseUrl, apiKey: 'k' }).chat('gpt-4o'),
  },
  {
    name: 'anthropic',
    start: startAnthropicServer,
    model: (server) => createAnthropic({ baseURL: server.baseUrl, apiKey: 'k' })('claude-haiku-4-5'),
  },
];

describe.each(dialects)('$name wire server, streamed', (dialect) => {
  it('streams text deltas, tool calls and usage the AI SDK can read', async () => {
    const server = await dialect.start([
      {
        text: 'Reading the file now.',
        toolCalls: [{ id: 'call_s1', name: 'fs_read', args: { path: 'a.txt' } }],
        usage: { inputTokens: 42, outputTokens: 7 },
      },
    ]);
    servers.push(server);
    const result = streamText({
      model: dialect.model(server),
      prompt: 'read a.txt',
      tools: {
        fs_read: {
          description: 'read',
          inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }),
        },
      },
      maxRetries: 0,
    });
    expect(await result.text).toBe('Reading the file now.');
    const calls = await result.toolCalls;
    expect(calls.map((call) => [call.toolName, call.input])).toEqual([['fs_read', { path: 'a.txt' }]]);
    const usage = await result.usage;
    expect([usage.inputTokens, usage.outputTokens]).toEqual([42, 7]);
    expect((server.requests[0]!.body as { stream: boolean }).stream).toBe(true);
  });
});

describe('wire server bookkeeping', () => {
  it('records every request, answers unknown routes with 404 and an exhausted script with 500', async () => {
    const server = await startOpenAiServer([{ text: 'one' }]);
    servers.push(server);
    const post = (path: string) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model":"m"}',
      });
    expect((await post('/v1/embeddings')).status).toBe(404);
    expect((await post('/v1/chat/completions')).status).toBe(200);
    const exhausted = await post('/v1/chat/completions');
    expect(exhausted.status).toBe(500);
    expect(await exhausted.text()).toContain('exhausted');
    server.push({ text: 'two' });
    expect(server.remaining()).toBe(1);
    expect((await post('/v1/chat/completions')).status).toBe(200);
    expect(server.requests.map((request) => request.path)).toEqual([
      '/v1/embeddings',
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/chat/completions',
    ]);
    expect(server.requests[0]!.body).toEqual({ model: 'm' });
  });

  it('refuses an Anthropic request without the anthropic-version header, as the real API does', async () => {
    const server = await startAnthropicServer([{ text: 'never' }]);
    servers.push(server);
    const response = await fetch(`${server.baseUrl}/messages`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    expect(server.remaining()).toBe(1);
  });

  it('answers after a scripted delay', async () => {
    const server = await startOllamaServer([{ text: 'late', delayMs: 20 }]);
    servers.push(server);
    const response = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      body: '{"model":"m","stream":false}',
    });
    expect(((await response.json()) as { message: { content: string } }).message.content).toBe('late');
  });

  it('listens on the port it is given, and refuses one that is taken', async () => {
    const first = await startOllamaServer();
    const port = Number(new URL(first.url).port);
    await expect(startOllamaServer([], { port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await first.close();
    const again = await startOllamaServer([], { port });
    servers.push(again);
    expect(again.url).toBe(`http://127.0.0.1:${port}`);
  });
});
