import type { ServerResponse } from 'node:http';
import {
  argsText,
  pieces,
  sendJson,
  startEventStream,
  startWireServer,
  usageOf,
  type WireDialect,
  type WireReply,
  type WireRequestBody,
  type WireServer,
  type WireServerOptions,
  type WireStep,
} from './wire-server.ts';

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

let completions = 0;

/**
 * OpenAI chat completions: one JSON body, or SSE `data:` chunks ending in `[DONE]` when `stream`
 * is true. Exported for the embeddings dialect, which shares its key check and error bodies.
 */
export const openAiDialect: WireDialect = {
  basePath: '/v1',
  endpoint: '/v1/chat/completions',
  admit(request, options) {
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return { status: 401, message: 'Incorrect API key provided.' };
    }
    return undefined;
  },
  errorBody: (status, message) => ({
    error: {
      message,
      type: ERROR_TYPES[status]?.type ?? 'server_error',
      param: null,
      code: ERROR_TYPES[status]?.code ?? null,
    },
  }),
  reply(step: WireReply, body: WireRequestBody, response: ServerResponse) {
    const id = `chatcmpl-${++completions}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? 'unknown';
    const usage = usageOf(step);
    const wireUsage = {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    };
    const calls = (step.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_${completions}_${index}`,
      type: 'function' as const,
      function: { name: call.name, arguments: argsText(call) },
    }));
    const finishReason = step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    if (body.stream !== true) {
      return sendJson(response, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: step.text === undefined && calls.length > 0 ? null : (step.text ?? ''),
              refusal: null,
              ...(calls.length === 0 ? {} : { tool_calls: calls }),
            },
            logprobs: null,
            finish_reason: finishReason,
          },
        ],
        usage: wireUsage,
      });
    }
    const send = startEventStream(response);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      send({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
    chunk({ role: 'assistant', content: '' });
    for (const piece of pieces(step.text ?? '')) chunk({ content: piece });
    calls.forEach((call, index) => {
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      });
      chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
    });
    chunk({}, finishReason);
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage === true)
      send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: wireUsage });
    send('[DONE]');
    response.end();
  },
};

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 speaking
 * `/v1/chat/completions` (JSON, or SSE when the client streams) with
 * `tool_calls` and `usage`. With `options.apiKey`, a wrong bearer gets 401.
 *
 * @example
 * const openai = await startOpenAiServer([{ text: 'hello' }], { apiKey: 'sk-test' });
 * const model = createOpenAiModel({ model: 'gpt-4o', apiKey: 'sk-test', baseUrl: openai.baseUrl });
 */
export function startOpenAiServer(
  script: WireStep[] = [],
  options: WireServerOptions = {},
): Promise<WireServer> {
  return startWireServer(openAiDialect, script, options);
}
