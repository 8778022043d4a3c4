import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { openAiDialect } from './openai-server.ts';
import {
  type RecordedRequest,
  sendJson,
  startWireServer,
  type WireDialect,
  type WireError,
  type WireRequestBody,
  type WireServer,
  type WireServerOptions,
  type WireStep,
} from './wire-server.ts';

/** Options of the embedding servers. */
export interface EmbeddingServerOptions extends WireServerOptions {
  /** Length of every vector the server returns. Default 8. */
  dimensions?: number;
  /** Models the server has; another model gets the vendor's 404. Default: any model. */
  models?: string[];
}

/**
 * The vector the servers return for a text: each word hashed to a coordinate
 * with a sign, so the same text always gets the same vector and texts that
 * share words point the same way. Deliberately not of unit length, so tests
 * see that the client normalises.
 *
 * @example
 * wireEmbedding('play some jazz', 8); // [0, 2, -1, 0, …] (unnormalised word counts)
 */
export function wireEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const digest = createHash('sha256').update(word).digest();
    vector[digest.readUInt32LE(0) % dimensions]! += digest[4]! & 1 ? 2 : -2;
  }
  // An empty or all-cancelling text still gets a direction, as a real model gives one.
  if (!vector.some((value) => value !== 0)) vector[0] = 1;
  return vector;
}

/** `input` as both vendors accept it: one string or an array of strings. */
function inputsOf(body: WireRequestBody): string[] | undefined {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  return undefined;
}

function modelMissing(request: RecordedRequest, options: EmbeddingServerOptions): string | undefined {
  const model = (request.body as WireRequestBody | undefined)?.model;
  if (options.models === undefined || (typeof model === 'string' && options.models.includes(model)))
    return undefined;
  return `model "${String(model)}" not found, try pulling it first`;
}

function ollamaEmbedDialect(options: EmbeddingServerOptions): WireDialect {
  const dimensions = options.dimensions ?? 8;
  const errorBody = (_status: number, message: string) => ({ error: message });
  return {
    basePath: '',
    endpoint: '/api/embed',
    admit(request): WireError | undefined {
      const missing = modelMissing(request, options);
      return missing === undefined ? undefined : { status: 404, message: missing };
    },
    errorBody,
    reply(_step, body, response: ServerResponse) {
      const inputs = inputsOf(body);
      if (inputs === undefined) return sendJson(response, 400, errorBody(400, 'invalid input type'));
      sendJson(response, 200, {
        model: body.model,
        embeddings: inputs.map((text) => wireEmbedding(text, dimensions)),
        total_duration: 1_000_000,
        load_duration: 1000,
        prompt_eval_count: inputs.length,
      });
    },
  };
}

function openAiEmbedDialect(options: EmbeddingServerOptions): WireDialect {
  const dimensions = options.dimensions ?? 8;
  return {
    ...openAiDialect,
    endpoint: '/v1/embeddings',
    admit(request, serverOptions) {
      const rejected = openAiDialect.admit(request, serverOptions);
      if (rejected !== undefined) return rejected;
      const missing = modelMissing(request, options);
      return missing === undefined ? undefined : { status: 404, message: missing };
    },
    reply(_step, body, response: ServerResponse) {
      const inputs = inputsOf(body);
      if (inputs === undefined)
        return sendJson(response, 400, openAiDialect.errorBody(400, "'input' is a required property"));
      sendJson(response, 200, {
        object: 'list',
        data: inputs.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: wireEmbedding(text, dimensions),
        })),
        model: body.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    },
  };
}

/**
 * A scripted Ollama on 127.0.0.1 speaking `POST /api/embed`
 * (`{ model, input: string | string[] }` → `{ model, embeddings: number[][],
 * total_duration, load_duration, prompt_eval_count }`, the fields
 * `ollama-ai-provider-v2` requires). Each request consumes one step: a reply
 * step (`{}`, or `{ delayMs }`) answers with {@link wireEmbedding} of every
 * input; error, `hang` and `drop` steps behave as on the chat servers; an
 * exhausted script answers 500. `options.models` makes other models 404.
 *
 * @example
 * const ollama = await startOllamaEmbedServer([{}, {}], { dimensions: 8, models: ['bge-m3'] });
 * const embedder = await createOllamaEmbedder({ baseUrl: ollama.url });
 */
export function startOllamaEmbedServer(
  script: WireStep[] = [],
  options: EmbeddingServerOptions = {},
): Promise<WireServer> {
  return startWireServer(ollamaEmbedDialect(options), script, options);
}

/**
 * The same for an OpenAI-compatible `POST /v1/embeddings` (`{ model, input }`
 * → `{ data: [{ embedding }], usage }`); with `options.apiKey` a wrong bearer
 * gets 401.
 *
 * @example
 * const server = await startOpenAiEmbedServer([{}], { apiKey: 'sk-test' });
 * const embedder = await createOpenAiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseUrl: server.baseUrl });
 */
export function startOpenAiEmbedServer(
  script: WireStep[] = [],
  options: EmbeddingServerOptions = {},
): Promise<WireServer> {
  return startWireServer(openAiEmbedDialect(options), script, options);
}
