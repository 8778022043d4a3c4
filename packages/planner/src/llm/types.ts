/** The three model pointers a runtime component can ask for. */
export type Tier = 'fast' | 'middle' | 'wise';

/** The provider families Metnos talks to through the AI SDK. */
export type ProviderName = 'ollama' | 'openai' | 'anthropic';

/**
 * A tool offered to the model. `parameters` is the JSON Schema of the
 * executor's arguments, taken as is from its `schema.json`.
 */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * A tool call the model asked for. `args` is untrusted: an object when the
 * provider could parse it, the raw text otherwise. Run it through
 * `checkToolCall` / `hardenToolArgs` before use.
 */
export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

/**
 * One message of the conversation the planner keeps. Assistant messages carry
 * the tool calls the model made; `tool` messages carry the observation for one
 * call, matched by `toolCallId`.
 */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

/** One request to a model. */
export interface ChatRequest {
  /** The system prompt; a tier's `prompt` is appended to it by the model. */
  system: string;
  messages: ChatMessage[];
  /** Tools the model may call; an empty list means a plain text answer. */
  tools: ToolSpec[];
  /** Aborts the request (the caller gave up); the model throws `ProviderAbortedError`. */
  signal?: AbortSignal;
  /** Per-request timeout; overrides the model's own. */
  timeoutMs?: number;
  /** Per-request cap on output tokens; overrides the model's own. */
  maxTokens?: number;
  /** Per-request think switch (Ollama); overrides the model's own. */
  think?: boolean;
  /** Sampling temperature (the engine asks 0, so the same prompt tends to the same answer). */
  temperature?: number;
  /** Sampling seed, where the provider honours one (Ollama and OpenAI do). */
  seed?: number;
}

/** Tokens one request consumed. Providers that report nothing give zeros. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * Why the model stopped: `stop` (a final answer), `tool-calls`, `length`
 * (hit max tokens), `content-filter`, `error`, `other`.
 */
export type FinishReason =
  | 'stop'
  | 'length'
  | 'content-filter'
  | 'tool-calls'
  | 'error'
  | 'interrupted'
  | 'other';

/** One model answer. */
export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: TokenUsage;
  /** USD for this request; `undefined` when the model has no known price. Local models cost 0. */
  costUsd?: number;
  /** Always set by the models in this package; optional so hand-written fakes stay short. */
  finishReason?: FinishReason | string;
  /** Wall time of the request in milliseconds (by the injected clock). */
  latencyMs?: number;
}

/**
 * The planner's view of a language model. The AI SDK providers, the scripted
 * and echo models, the recorder and cassette replay all implement it, so the
 * planner loop never knows which one drove a turn.
 *
 * @example
 * const response = await model.generate({ system: 'You are Metnos.', messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * if (response.toolCalls.length === 0) console.log(response.text);
 */
export interface ChatModel {
  /** The model name as the provider knows it, e.g. `qwen3:8b`. */
  readonly id: string;
  /** `ollama`, `openai`, `anthropic`, or a test model's name (`scripted`, `echo`, `cassette`). */
  readonly provider: string;
  /** The tier this model was configured for, when it came from `createTiers`. */
  readonly tier?: Tier;
  generate(request: ChatRequest): Promise<ChatResponse>;
}
