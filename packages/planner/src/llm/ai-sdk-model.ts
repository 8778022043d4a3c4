import type { SharedV4ProviderOptions } from '@ai-sdk/provider';
import {
  generateText,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  stepCountIs,
  type Tool,
  type ToolSet,
} from 'ai';
import { costOf, type Price } from './pricing.ts';
import { callProvider } from './provider-errors.ts';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, Tier, ToolSpec } from './types.ts';

/** Default per-request timeout: generous, because a local model may first have to load. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Provider-specific call options derived from one request. */
export interface CallOptions {
  maxOutputTokens?: number;
  /** Per-provider options, e.g. `{ ollama: { think: false } }`. */
  providerOptions?: SharedV4ProviderOptions;
}

/** Settings of {@link createAiSdkModel}. */
export interface AiSdkModelSettings {
  /** An AI SDK language model, e.g. `createOllama(...)('qwen3:8b')`. Build it with a fetch that caps error bodies. */
  languageModel: LanguageModel;
  /** The provider's short name, used in errors and hints (`ollama`, `openai`, `anthropic`). */
  provider: string;
  /** The model name as the provider knows it. */
  id: string;
  /** The base URL the model talks to, for error messages. */
  baseUrl: string;
  tier?: Tier;
  /** Appended to every request's system prompt (a tier's own voice). */
  prompt?: string;
  /** Per-request timeout; a request's own `timeoutMs` wins. */
  timeoutMs?: number;
  /** Output-token cap; a request's own `maxTokens` wins. */
  maxTokens?: number;
  /** The think switch (Ollama); a request's own `think` wins. */
  think?: boolean;
  /** The model's price; `undefined` reports `costUsd: undefined`. */
  price?: Price;
  /** Maps the resolved `maxTokens`/`think` to the provider's options. Default: `maxOutputTokens` only. */
  callOptions?: (resolved: { maxTokens?: number; think?: boolean }) => CallOptions;
  /** Clock in epoch milliseconds, for latency and Retry-After dates. Default `Date.now`. */
  now?: () => number;
}

function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  return messages.map((message): ModelMessage => {
    if (message.role === 'user') return { role: 'user', content: message.content };
    if (message.role === 'tool') {
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            output: { type: 'text', value: message.content },
          },
        ],
      };
    }
    const calls = message.toolCalls ?? [];
    if (calls.length === 0) return { role: 'assistant', content: message.content };
    return {
      role: 'assistant',
      content: [
        ...(message.content === '' ? [] : [{ type: 'text' as const, text: message.content }]),
        ...calls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.id,
          toolName: call.name,
          input: call.args,
        })),
      ],
    };
  });
}

function toToolSet(tools: ToolSpec[]): ToolSet {
  // No `execute`: the SDK hands every call back to us and the planner runs its own loop.
  return Object.fromEntries(
    tools.map((spec): [string, Tool] => [
      spec.name,
      {
        description: spec.description,
        inputSchema: jsonSchema(spec.parameters as Parameters<typeof jsonSchema>[0]),
      },
    ]),
  );
}

/**
 * Adapts any AI SDK language model to the Metnos `ChatModel`: one
 * `generateText` step (the planner runs its own loop), tools declared from
 * their JSON Schemas without `execute` so calls come back to the caller, no
 * SDK retries (retry policy belongs to `withRetry`), a per-request timeout
 * and abort, token and cost accounting, and every failure mapped to a typed
 * provider error.
 *
 * @example
 * const model = createAiSdkModel({ languageModel: createOllama({ baseURL })('qwen3:8b'), provider: 'ollama', id: 'qwen3:8b', baseUrl });
 * const { text } = await model.generate({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] });
 */
export function createAiSdkModel(settings: AiSdkModelSettings): ChatModel {
  const now = settings.now ?? Date.now;
  const callOptions =
    settings.callOptions ??
    ((resolved: { maxTokens?: number }): CallOptions => ({ maxOutputTokens: resolved.maxTokens }));

  async function generate(request: ChatRequest): Promise<ChatResponse> {
    const timeoutMs = request.timeoutMs ?? settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const system = [request.system, settings.prompt]
      .filter((part) => part !== undefined && part !== '')
      .join('\n\n');
    const providerCall = {
      provider: settings.provider,
      model: settings.id,
      baseUrl: settings.baseUrl,
      timeoutMs,
      signal: request.signal,
      now,
    };
    return callProvider(providerCall, async (abortSignal) => {
      const started = now();
      const result = await generateText({
        model: settings.languageModel,
        ...(system === '' ? {} : { instructions: system }),
        messages: toModelMessages(request.messages),
        ...(request.tools.length === 0 ? {} : { tools: toToolSet(request.tools) }),
        stopWhen: stepCountIs(1),
        maxRetries: 0,
        abortSignal,
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.seed === undefined ? {} : { seed: request.seed }),
        ...callOptions({
          maxTokens: request.maxTokens ?? settings.maxTokens,
          think: request.think ?? settings.think,
        }),
      });
      const usage = {
        inputTokens: result.usage.inputTokens ?? 0,
        outputTokens: result.usage.outputTokens ?? 0,
      };
      return {
        text: result.text,
        toolCalls: result.toolCalls.map((call) => ({
          id: call.toolCallId,
          name: call.toolName,
          args: call.input,
        })),
        usage,
        costUsd: costOf(settings.price, usage),
        finishReason: result.finishReason,
        latencyMs: now() - started,
      };
    });
  }

  return {
    id: settings.id,
    provider: settings.provider,
    ...(settings.tier ? { tier: settings.tier } : {}),
    generate,
  };
}
