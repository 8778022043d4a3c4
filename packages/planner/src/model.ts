export type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall, ToolSpec } from './llm/types.ts';
