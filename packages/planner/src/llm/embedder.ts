import { createOpenAI } from '@ai-sdk/openai';
import { type Embedder, normalizeVector } from '@metnos/autopath';
import { type EmbeddingModel, embed, embedMany } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { safeBaseUrl } from './base-url.ts';
import { type Environment, loadApiKey } from './env.ts';
import { ProviderConfigError, ProviderResponseError } from './errors.ts';
import { callProvider, cappedErrorBodyFetch } from './provider-errors.ts';
import { DEFAULT_OLLAMA_BASE_URL, DEFAULT_OPENAI_BASE_URL } from './providers.ts';

/** The Ollama embedding model Metnos asks for when none is configured (multilingual, 1024-d). */
export const DEFAULT_OLLAMA_EMBEDDING_MODEL = 'bge-m3';
/** Per-request timeout of an embedding call: long enough for a local model to load first. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 30_000;
/** The text embedded once at creation to learn the model's dimension. */
const PROBE_TEXT = 'metnos';

/** Settings of {@link createAiSdkEmbedder}. */
export interface AiSdkEmbedderSettings {
  /** An AI SDK embedding model, e.g. `createOllama(...).embedding('bge-m3')`. */
  embeddingModel: EmbeddingModel;
  /** The provider's short name, for the id, errors and hints (`ollama`, `openai`). */
  provider: string;
  /** The model name as the provider knows it. */
  model: string;
  /** The base URL the model talks to, for error messages. */
  baseUrl: string;
  timeoutMs?: number;
  /** Clock in epoch milliseconds, for Retry-After dates. Default `Date.now`. */
  now?: () => number;
}

/** Settings every remote embedder takes. */
export interface RemoteEmbedderSettings {
  /** The model name as the provider knows it. */
  model?: string;
  /** Where the provider lives; `https://` unless loopback. */
  baseUrl?: string;
  /** Per-request timeout; default {@link DEFAULT_EMBEDDING_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Transport; tests and custom gateways inject their own. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  now?: () => number;
}

/** Settings of {@link createOpenAiEmbedder}. */
export interface OpenAiEmbedderSettings extends RemoteEmbedderSettings {
  /** The key itself; wins over `apiKeyEnv`. */
  apiKey?: string;
  /** Name of the environment variable holding the key (default `OPENAI_API_KEY`). */
  apiKeyEnv?: string;
  /** The environment to read `apiKeyEnv` from; default `process.env`. */
  env?: Environment;
}

/** Runs one SDK call under the embedder's timeout, failures mapped to typed provider errors. */
function call<Result>(settings: AiSdkEmbedderSettings, run: (signal: AbortSignal) => Promise<Result>) {
  return callProvider(
    {
      provider: settings.provider,
      model: settings.model,
      baseUrl: settings.baseUrl,
      timeoutMs: settings.timeoutMs ?? DEFAULT_EMBEDDING_TIMEOUT_MS,
      now: settings.now ?? Date.now,
    },
    run,
  );
}

/** Checks one vector off the wire and returns it as a unit-length Float32Array. */
function toUnitVector(values: number[], expected: number | undefined, settings: AiSdkEmbedderSettings) {
  const fail = (what: string) =>
    new ProviderResponseError({
      providerName: settings.provider,
      message: `${settings.model}: the embedding ${what}`,
    });
  if (values.length === 0) throw fail('is empty');
  if (expected !== undefined && values.length !== expected)
    throw fail(`has ${values.length} dimensions where the model first gave ${expected}`);
  const single = Float32Array.from(values);
  if (!single.every(Number.isFinite)) throw fail('holds a value that is not a finite 32-bit number');
  const vector = normalizeVector(single);
  if (vector.every((value) => value === 0)) throw fail('is all zeros');
  return vector;
}

/**
 * Adapts any AI SDK embedding model to the autopath `Embedder`: one `embed`
 * for a single text, `embedMany` for several, no SDK retries, a per-request
 * timeout, every vector checked (length, finite values) and L2-normalised,
 * every failure a typed provider error. Async because it embeds one probe
 * text to learn the dimension, which makes the id:
 * `<provider>:<model>:<dimensions>` (e.g. `ollama:bge-m3:1024`), the key
 * stores and calibrations are kept under.
 *
 * @example
 * const embedder = await createAiSdkEmbedder({ embeddingModel: createOllama({ baseURL }).embedding('bge-m3'), provider: 'ollama', model: 'bge-m3', baseUrl });
 * const [vector] = await embedder.embed(['play some jazz']);
 */
export async function createAiSdkEmbedder(settings: AiSdkEmbedderSettings): Promise<Embedder> {
  const model = settings.embeddingModel;
  const probe = await call(settings, (abortSignal) =>
    embed({ model, value: PROBE_TEXT, maxRetries: 0, abortSignal }),
  );
  const dimensions = toUnitVector(probe.embedding, undefined, settings).length;
  return {
    id: `${settings.provider}:${settings.model}:${dimensions}`,
    dimensions,
    async embed(texts) {
      if (texts.length === 0) return [];
      const embeddings =
        texts.length === 1
          ? [
              (
                await call(settings, (abortSignal) =>
                  embed({ model, value: texts[0]!, maxRetries: 0, abortSignal }),
                )
              ).embedding,
            ]
          : (
              await call(settings, (abortSignal) =>
                embedMany({ model, values: texts, maxRetries: 0, abortSignal }),
              )
            ).embeddings;
      if (embeddings.length !== texts.length)
        throw new ProviderResponseError({
          providerName: settings.provider,
          message: `${settings.model}: ${embeddings.length} embeddings for ${texts.length} texts`,
        });
      return embeddings.map((values) => toUnitVector(values, dimensions, settings));
    },
  };
}

function requireModel(model: string | undefined, provider: string): string {
  if (typeof model !== 'string' || model.trim() === '') {
    throw new ProviderConfigError({
      field: 'embedder_model',
      message: `${provider}: an explicit embedding model name is required (e.g. embedder_model = "...")`,
    });
  }
  return model;
}

/**
 * Embeddings from a local Ollama (`POST {baseUrl}/api/embed`) through
 * `ollama-ai-provider-v2`. Default model `bge-m3` (`ollama pull bge-m3`).
 * Throws `ProviderUnreachableError` when Ollama is not running,
 * `ProviderHttpError` (404 with an `ollama pull` hint) when the model is not
 * pulled, `ProviderResponseError` for an answer of the wrong shape.
 *
 * @example
 * const embedder = await createOllamaEmbedder({ model: 'bge-m3', baseUrl: 'http://localhost:11434' });
 * embedder.id; // 'ollama:bge-m3:1024'
 */
export function createOllamaEmbedder(settings: RemoteEmbedderSettings = {}): Promise<Embedder> {
  const model = requireModel(settings.model ?? DEFAULT_OLLAMA_EMBEDDING_MODEL, 'ollama');
  const baseUrl = safeBaseUrl(settings.baseUrl ?? DEFAULT_OLLAMA_BASE_URL, 'ollama');
  const apiUrl = baseUrl.endsWith('/api') ? baseUrl : `${baseUrl}/api`;
  const fetch = cappedErrorBodyFetch(settings.fetch ?? globalThis.fetch);
  return createAiSdkEmbedder({
    embeddingModel: createOllama({ baseURL: apiUrl, fetch }).embedding(model),
    provider: 'ollama',
    model,
    baseUrl,
    timeoutMs: settings.timeoutMs,
    now: settings.now,
  });
}

/**
 * Embeddings from OpenAI (`POST {baseUrl}/embeddings`) or any
 * OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's `/v1`). The
 * model has no default; the key comes as for the chat models (`apiKey`, else
 * the variable named by `apiKeyEnv`, default `OPENAI_API_KEY`).
 *
 * @example
 * const embedder = await createOpenAiEmbedder({ model: 'text-embedding-3-small', apiKeyEnv: 'OPENAI_API_KEY' });
 */
export function createOpenAiEmbedder(settings: OpenAiEmbedderSettings): Promise<Embedder> {
  const model = requireModel(settings.model, 'openai');
  const apiKey = loadApiKey({
    apiKey: settings.apiKey,
    envName: settings.apiKeyEnv ?? 'OPENAI_API_KEY',
    env: settings.env,
    provider: 'openai',
  });
  const baseUrl = safeBaseUrl(settings.baseUrl ?? DEFAULT_OPENAI_BASE_URL, 'openai');
  const fetch = cappedErrorBodyFetch(settings.fetch ?? globalThis.fetch);
  return createAiSdkEmbedder({
    embeddingModel: createOpenAI({ baseURL: baseUrl, apiKey, fetch }).embedding(model),
    provider: 'openai',
    model,
    baseUrl,
    timeoutMs: settings.timeoutMs,
    now: settings.now,
  });
}
