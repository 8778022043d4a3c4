export {
  type AiSdkModelSettings,
  type CallOptions,
  createAiSdkModel,
  DEFAULT_TIMEOUT_MS,
} from './ai-sdk-model.ts';
export { isLoopbackHost, safeBaseUrl } from './base-url.ts';
export {
  type AiSdkEmbedderSettings,
  createAiSdkEmbedder,
  createOllamaEmbedder,
  createOpenAiEmbedder,
  DEFAULT_EMBEDDING_TIMEOUT_MS,
  DEFAULT_OLLAMA_EMBEDDING_MODEL,
  type OpenAiEmbedderSettings,
  type RemoteEmbedderSettings,
} from './embedder.ts';
export { type Environment, loadApiKey } from './env.ts';
export {
  ProviderAbortedError,
  ProviderConfigError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './errors.ts';
export {
  createEmbedderWithFallback,
  createMemoryEmbedder,
  type FallbackEmbedderSettings,
  MEMORY_EMBEDDER_KINDS,
  type MemoryEmbedderKind,
  type MemoryEmbedderResult,
  type MemoryEmbedderSettings,
} from './memory-embedder.ts';
export {
  ANTHROPIC_PRICING,
  costOf,
  lookupPrice,
  OPENAI_PRICING,
  type Price,
  type PricingTable,
} from './pricing.ts';
export { cappedErrorBodyFetch, parseRetryAfter } from './provider-errors.ts';
export {
  type ChatModelSettings,
  createAnthropicModel,
  createChatModel,
  createOllamaModel,
  createOpenAiModel,
  DEFAULT_ANTHROPIC_BASE_URL,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_OLLAMA_BASE_URL,
  DEFAULT_OPENAI_BASE_URL,
  type KeyedModelSettings,
  type ModelSettings,
  type OllamaModelSettings,
  PROVIDER_NAMES,
} from './providers.ts';
export { isReceipted, type ModelReceiptLabels, withReceipts } from './receipts.ts';
export {
  classifyFailure,
  type FailureClass,
  POLICY_ERROR_CLASSES,
  type RetryAttempt,
  type RetryEvent,
  type RetryOptions,
  TRANSIENT_ERROR_CLASSES,
  withRetry,
} from './retry.ts';
export {
  createModelFromConfig,
  createTiers,
  createTiersFromToml,
  type LlmConfig,
  llmConfigSchema,
  pricingConfigSchema,
  type TierConfig,
  type TierOptions,
  type Tiers,
  tierConfigSchema,
} from './tiers.ts';
export {
  type CheckedToolCall,
  checkToolCall,
  type HardenedArgs,
  hardenToolArgs,
  MAX_ARGS_DEPTH,
  TOOL_UNAVAILABLE,
  type ToolArgsFailureCode,
} from './tool-args.ts';
export type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  FinishReason,
  ProviderName,
  Tier,
  TokenUsage,
  ToolCall,
  ToolSpec,
} from './types.ts';
