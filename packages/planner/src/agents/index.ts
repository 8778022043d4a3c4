export { runVisit, type VisitSettings } from './agent-loop.ts';
export { createAgentBudget, DEFAULT_AGENT_BUDGET, type Exhaustion } from './budget.ts';
export {
  type AgentGraphConfig,
  type AgentGraphModels,
  type AgentsConfig,
  agentGraphConfigSchema,
  agentGraphFromConfig,
  agentsConfigSchema,
  type WhenConfig,
  whenConfigSchema,
  whenPredicate,
} from './config.ts';
export { AgentConfigError, ToolArgError } from './errors.ts';
export { AGENT_EVENT_CAPABILITIES } from './events.ts';
export { type CheckedPlan, checkPlan, DEFAULT_MAX_AGENT_VISITS, nextEdge } from './graph.ts';
export {
  createInMemoryRuntimeMemory,
  MAX_MEMORY_VALUE_BYTES,
  type MemoryAddress,
  type MemoryScope,
  MemoryScopeError,
  type RuntimeMemoryAdapter,
  type ScopedMemory,
  scopedMemory,
} from './memory.ts';
export { createSqliteRuntimeMemory } from './memory-sqlite.ts';
export {
  type AgentRuntime,
  createAgentRuntime,
  DEFAULT_MAX_OBSERVATION_CHARS,
  handoffInput,
} from './runtime.ts';
export { type AgentTool, agentTools, RESERVED_TOOL_NAMES, TOOL_NAME, toolResultText } from './tools.ts';
export type {
  AgentBudget,
  AgentDefinition,
  AgentEvent,
  AgentEventCapability,
  AgentEventType,
  AgentExecutors,
  AgentProvider,
  AgentRunOptions,
  AgentRunResult,
  AgentRuntimeSettings,
  AgentVisit,
  AgentVisitStatus,
  BudgetExhaustedReason,
  CustomTool,
  CustomToolContext,
  HandoffContext,
  HandoffEdge,
  HandoffPlan,
  RunEnding,
} from './types.ts';
