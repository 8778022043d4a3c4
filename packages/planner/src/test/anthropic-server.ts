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

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

let messages = 0;

// Anthropic Messages: content blocks (text, thinking, tool_use); SSE events when `stream` is true.
const anthropicDialect: WireDialect = {
  basePath: '/v1',
  endpoint: '/v1/messages',
  admit(request, options) {
    if (request.headers['anthropic-version'] === undefined) {
      return { status: 400, message: 'anthropic-version: header is required' };
    }
    if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey) {
      return { status: 401, message: 'invalid x-api-key' };
    }
    return undefined;
  },
  errorBody: (status, message) => ({
    type: 'error',
    error: { type: ERROR_TYPES[status] ?? 'api_error', message },
  }),
  reply(step: WireReply, body: WireRequestBody, response: ServerResponse) {
    const id = `msg_${++messages}`;
    const model = body.model ?? 'unknown';
    const usage = usageOf(step);
    const calls = (step.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `toolu_${messages}_${index}`,
      name: call.name,
      call,
    }));
    const stopReason = step.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
    if (body.stream !== true) {
      const content: unknown[] = [];
      if (step.thinking !== undefined)
        content.push({ type: 'thinking', thinking: step.thinking, signature: 'scripted' });
      if (step.text !== undefined && step.text !== '') content.push({ type: 'text', text: step.text });
      for (const { id: callId, name, call } of calls) {
        content.push({ type: 'tool_use', id: callId, name, input: call.args });
      }
      return sendJson(response, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
      });
    }
    const send = startEventStream(response);
    const event = (type: string, data: Record<string, unknown>) => send({ type, ...data }, type);
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, output_tokens: 1 },
      },
    });
    let index = 0;
    const block = (start: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
      event('content_block_start', { index, content_block: start });
      for (const delta of deltas) event('content_block_delta', { index, delta });
      event('content_block_stop', { index });
      index++;
    };
    if (step.thinking !== undefined) {
      block({ type: 'thinking', thinking: '' }, [
        { type: 'thinking_delta', thinking: step.thinking },
        { type: 'signature_delta', signature: 'scripted' },
      ]);
    }
    if (step.text !== undefined && step.text !== '') {
      block(
        { type: 'text', text: '' },
        pieces(step.text).map((text) => ({ type: 'text_delta', text })),
      );
    }
    for (const { id: callId, name, call } of calls) {
      block({ type: 'tool_use', id: callId, name, input: {} }, [
        { type: 'input_json_delta', partial_json: argsText(call) },
      ]);
    }
    event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.outputTokens },
    });
    event('message_stop', {});
    response.end();
  },
};

/**
 * A scripted Anthropic Messages API on 127.0.0.1 (`/v1/messages`, JSON or
 * SSE) with `tool_use` blocks and `usage`. It refuses requests without the
 * `anthropic-version` header, as the real API does; with `options.apiKey`, a
 * wrong `x-api-key` gets 401.
 *
 * @example
 * const anthropic = await startAnthropicServer([{ text: 'hello' }], { apiKey: 'sk-ant-test' });
 * const model = createAnthropicModel({ model: 'claude-sonnet-4-6', apiKey: 'sk-ant-test', baseUrl: anthropic.baseUrl });
 */
export function startAnthropicServer(
  script: WireStep[] = [],
  options: WireServerOptions = {},
): Promise<WireServer> {
  return startWireServer(anthropicDialect, script, options);
}
