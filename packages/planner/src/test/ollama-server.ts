import type { ServerResponse } from 'node:http';
import {
  pieces,
  sendJson,
  startWireServer,
  usageOf,
  type WireDialect,
  type WireReply,
  type WireRequestBody,
  type WireServer,
  type WireServerOptions,
  type WireStep,
} from './wire-server.ts';

// Ollama's /api/chat: one JSON object, or NDJSON lines when `stream` is true; tool arguments are objects.
const ollamaDialect: WireDialect = {
  basePath: '',
  endpoint: '/api/chat',
  admit: () => undefined,
  errorBody: (_status, message) => ({ error: message }),
  reply(step: WireReply, body: WireRequestBody, response: ServerResponse) {
    const model = body.model ?? 'unknown';
    const createdAt = new Date().toISOString();
    const usage = usageOf(step);
    const toolCalls = (step.toolCalls ?? []).map((call, index) => ({
      ...(call.id === undefined ? {} : { id: call.id }),
      function: { index, name: call.name, arguments: call.args },
    }));
    const final = {
      model,
      created_at: createdAt,
      done: true,
      done_reason: step.finishReason ?? 'stop',
      total_duration: 1_000_000,
      load_duration: 1000,
      prompt_eval_count: usage.inputTokens,
      prompt_eval_duration: 1000,
      eval_count: usage.outputTokens,
      eval_duration: 1000,
    };
    if (body.stream !== true) {
      const message = {
        role: 'assistant',
        content: step.text ?? '',
        ...(step.thinking === undefined ? {} : { thinking: step.thinking }),
        ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
      };
      return sendJson(response, 200, { ...final, message });
    }
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const line = (message: Record<string, unknown>, extra: Record<string, unknown> = { done: false }) =>
      response.write(
        `${JSON.stringify({ model, created_at: createdAt, message: { role: 'assistant', content: '', ...message }, ...extra })}\n`,
      );
    if (step.thinking !== undefined) line({ thinking: step.thinking });
    for (const piece of pieces(step.text ?? '')) line({ content: piece });
    if (toolCalls.length > 0) line({ tool_calls: toolCalls });
    line({}, final);
    response.end();
  },
};

/**
 * A scripted Ollama on 127.0.0.1 speaking `/api/chat` (JSON, or NDJSON when
 * the client streams), with `tool_calls`, `thinking` and eval counts. Give
 * `baseUrl` to the provider; `requests` shows what it sent (model, messages,
 * tools, `think`, `options`).
 *
 * @example
 * const ollama = await startOllamaServer([{ toolCalls: [{ name: 'fs_read', args: { path: 'a' } }] }, { text: 'done' }]);
 * const model = createOllamaModel({ model: 'qwen3:8b', baseUrl: ollama.baseUrl });
 */
export function startOllamaServer(
  script: WireStep[] = [],
  options: WireServerOptions = {},
): Promise<WireServer> {
  return startWireServer(ollamaDialect, script, options);
}
