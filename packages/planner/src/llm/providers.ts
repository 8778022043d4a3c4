import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { createAiSdkModel } from './ai-sdk-model.ts';
import { safeBaseUrl } from './base-url.ts';
import { type Environment, loadApiKey } from './env.ts';
import { ProviderConfigError } from './errors.ts';
import { ANTHROPIC_PRICING, lookupPrice, OPENAI_PRICING, type PricingTable } from './pricing.ts';
import { cappedErrorBodyFetch } from './provider-errors.ts';
import type { ChatModel, ProviderName, Tier } from './types.ts';

/** Ollama's address when none is configured. */
export const DEFAULT_OLLAMA_BASE_URL = 'http://localhost:11434';
/** OpenAI's API when no OpenAI-compatible endpoint is configured. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Anthropic's API. */
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** Anthropic requires `max_tokens`; this is what Metnos asks for when none is configured. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Settings every provider model takes. */
export interface ModelSettings {
  /** The model name as the provider knows it. Required: there is no default model. */
  model: string;
  /** Where the provider lives; `https://` unless loopback. */
  baseUrl?: string;
  tier?: Tier;
  /** Appended to every system prompt. */
  prompt?: string;
  timeoutMs?: number;
  maxTokens?: number;
  /** Transport; tests and custom gateways inject their own. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Clock in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** Settings of the providers that need a key. */
export interface KeyedModelSettings extends ModelSettings {
  /** The key itself; wins over `apiKeyEnv`. */
  apiKey?: string;
  /** Name of the environment variable holding the key (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`). */
  apiKeyEnv?: string;
  /** The environment to read `apiKeyEnv` from; default `process.env`. */
  env?: Environment;
  /** Prices used for `costUsd`; merged over the provider's own table. */
  pricing?: PricingTable;
}

/** Settings of {@link createOllamaModel}. */
export interface OllamaModelSettings extends ModelSettings {
  /** Ollama's think switch: `false` for fast answers, `true` for deliberate ones. */
  think?: boolean;
}

function requireModel(model: string | undefined, provider: string): string {
  if (typeof model !== 'string' || model.trim() === '') {
    throw new ProviderConfigError({
      field: 'model',
      message: `${provider}: an explicit model name is required (e.g. model = "...")`,
    });
  }
  return model;
}

function transport(settings: ModelSettings): typeof fetch {
  return cappedErrorBodyFetch(settings.fetch ?? globalThis.fetch);
}

function passThrough(settings: ModelSettings) {
  return { tier: settings.tier, prompt: settings.prompt, timeoutMs: settings.timeoutMs, now: settings.now };
}

/**
 * A local Ollama model through `ollama-ai-provider-v2` (`/api/chat`, native
 * tool calling). Free: `costUsd` is always 0. The output cap is sent as
 * `options.num_predict`, the field Ollama reads.
 *
 * @example
 * const fast = createOllamaModel({ model: 'qwen3:8b', think: false });
 */
export function createOllamaModel(settings: OllamaModelSettings): ChatModel {
  const model = requireModel(settings.model, 'ollama');
  const baseUrl = safeBaseUrl(settings.baseUrl ?? DEFAULT_OLLAMA_BASE_URL, 'ollama');
  const apiUrl = baseUrl.endsWith('/api') ? baseUrl : `${baseUrl}/api`;
  const provider = createOllama({ baseURL: apiUrl, fetch: transport(settings) });
  return createAiSdkModel({
    ...passThrough(settings),
    languageModel: provider(model),
    provider: 'ollama',
    id: model,
    baseUrl,
    maxTokens: settings.maxTokens,
    think: settings.think,
    price: { input: 0, output: 0 },
    callOptions: ({ maxTokens, think }) => ({
      providerOptions: {
        ollama: {
          ...(think === undefined ? {} : { think }),
          ...(maxTokens === undefined ? {} : { options: { num_predict: maxTokens } }),
        },
      },
    }),
  });
}

/** What differs between the vendors that need a key. */
interface KeyedVendor {
  provider: 'openai' | 'anthropic';
  keyEnv: string;
  baseUrl: string;
  pricing: PricingTable;
  maxTokens?: number;
  languageModel(
    options: { baseURL: string; apiKey: string; fetch: typeof fetch },
    model: string,
  ): LanguageModel;
}

function createKeyedModel(vendor: KeyedVendor, settings: KeyedModelSettings): ChatModel {
  const model = requireModel(settings.model, vendor.provider);
  const apiKey = loadApiKey({
    apiKey: settings.apiKey,
    envName: settings.apiKeyEnv ?? vendor.keyEnv,
    env: settings.env,
    provider: vendor.provider,
  });
  const baseUrl = safeBaseUrl(settings.baseUrl ?? vendor.baseUrl, vendor.provider);
  return createAiSdkModel({
    ...passThrough(settings),
    languageModel: vendor.languageModel({ baseURL: baseUrl, apiKey, fetch: transport(settings) }, model),
    provider: vendor.provider,
    id: model,
    baseUrl,
    maxTokens: settings.maxTokens ?? vendor.maxTokens,
    price: lookupPrice({ ...vendor.pricing, ...settings.pricing }, model),
  });
}

const OPENAI: KeyedVendor = {
  provider: 'openai',
  keyEnv: 'OPENAI_API_KEY',
  baseUrl: DEFAULT_OPENAI_BASE_URL,
  pricing: OPENAI_PRICING,
  languageModel: (options, model) => createOpenAI(options).chat(model),
};

const ANTHROPIC: KeyedVendor = {
  provider: 'anthropic',
  keyEnv: 'ANTHROPIC_API_KEY',
  baseUrl: DEFAULT_ANTHROPIC_BASE_URL,
  pricing: ANTHROPIC_PRICING,
  maxTokens: DEFAULT_ANTHROPIC_MAX_TOKENS,
  languageModel: (options, model) => createAnthropic(options)(model),
};

/**
 * A model behind OpenAI's chat completions API, or any OpenAI-compatible
 * endpoint (OpenRouter, Together, vLLM, llama.cpp server…) via `baseUrl`.
 * The key is sent as `Authorization: Bearer …` to that host.
 *
 * @example
 * const wise = createOpenAiModel({ model: 'gpt-4o', apiKeyEnv: 'OPENAI_API_KEY' });
 */
export function createOpenAiModel(settings: KeyedModelSettings): ChatModel {
  return createKeyedModel(OPENAI, settings);
}

/**
 * A Claude model through Anthropic's Messages API. The key is sent as
 * `x-api-key`; `max_tokens` defaults to 4096.
 *
 * @example
 * const wise = createAnthropicModel({ model: 'claude-sonnet-4-6', apiKeyEnv: 'ANTHROPIC_API_KEY' });
 */
export function createAnthropicModel(settings: KeyedModelSettings): ChatModel {
  return createKeyedModel(ANTHROPIC, settings);
}

/** Settings of {@link createChatModel}: a provider name plus that provider's settings. */
export type ChatModelSettings =
  | ({ provider: 'ollama' } & OllamaModelSettings)
  | ({ provider: 'openai' } & KeyedModelSettings)
  | ({ provider: 'anthropic' } & KeyedModelSettings);

/** The provider names {@link createChatModel} knows. */
export const PROVIDER_NAMES: readonly ProviderName[] = ['ollama', 'openai', 'anthropic'];

/**
 * Builds a model for any supported provider by name.
 *
 * @example
 * const model = createChatModel({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKeyEnv: 'ANTHROPIC_API_KEY' });
 */
export function createChatModel(settings: ChatModelSettings): ChatModel {
  if (settings.provider === 'ollama') return createOllamaModel(settings);
  if (settings.provider === 'openai') return createOpenAiModel(settings);
  if (settings.provider === 'anthropic') return createAnthropicModel(settings);
  throw new ProviderConfigError({
    field: 'provider',
    message: `unknown provider "${String((settings as { provider?: unknown }).provider)}"; use one of ${PROVIDER_NAMES.join(', ')}`,
  });
}
