/** A tool offered to the model: its JSON Schema comes straight from the executor's schema.json. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call the model asked for; `args` is untrusted and hardened before use. */
export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

/** The conversation the planner keeps with the model. */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

/** One model request. */
export interface ChatRequest {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** One model answer. */
export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: { inputTokens: number; outputTokens: number };
  costUsd?: number;
  finishReason?: string;
  latencyMs?: number;
}

/**
 * The planner's view of a language model. The AI SDK providers, the scripted
 * and echo models and cassette replay all implement it.
 */
export interface ChatModel {
  readonly id: string;
  readonly provider: string;
  generate(request: ChatRequest): Promise<ChatResponse>;
}
