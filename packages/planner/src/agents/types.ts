import type { HlcTimestamp, Invoker, ReceiptSink, VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel } from '../llm/types.ts';
import type { CallReviewer } from '../review.ts';
import type { RuntimeMemoryAdapter, ScopedMemory } from './memory.ts';

/**
 * A model an agent drives: any `ChatModel` (a tier of `[runtime.llm]`, a
 * provider built by hand, a scripted test model), with an optional `destroy`
 * the runtime calls when it is destroyed (token pools, loaded models).
 */
export type AgentProvider = ChatModel & { destroy?: () => void | Promise<void> };

/** An agent's caps; a cap left out takes the default ({@link DEFAULT_AGENT_BUDGET}). */
export interface AgentBudget {
  /** Model turns (default 50). */
  maxTurns?: number;
  /** Tool calls, rejected ones included (default 200). */
  maxToolCalls?: number;
  /** Input and output tokens (default unlimited). */
  maxTokens?: number;
  /** USD of model cost, where the provider's price is known (default unlimited). */
  maxCostUsd?: number;
}

/** Which cap an agent spent. */
export type BudgetExhaustedReason = 'turns' | 'toolCalls' | 'tokens' | 'costUsd';

/** What a custom tool's `invoke` receives beside its arguments. */
export interface CustomToolContext {
  /** Torn down when the run is aborted or the runtime destroyed: pass it to fetch, spawn, … */
  signal: AbortSignal;
  /** The agent whose model asked for the call. */
  agentId: string;
  runId: string;
  /** The run's memory as this agent sees it: `agent:{id}` (its own), `shared`, `global`. */
  memory: ScopedMemory;
}

/**
 * A tool the caller brings, beside the executors. `invoke` is trusted code;
 * its arguments come from a model and are not: they arrive hardened
 * (prototype keys dropped, depth ≤ 64, an object). Throw `ToolArgError` for
 * arguments it cannot use (the model sees only "tool unavailable"); any other
 * error's message is shown to the model as it is, so never put a secret in one.
 */
export interface CustomTool {
  /** `/^[a-zA-Z_][a-zA-Z0-9_-]*$/`, unique, not an executor's name: prefer a domain prefix (`slack_post`). */
  name: string;
  /** Sent to the model verbatim. */
  description: string;
  /** The JSON Schema of the arguments, sent to the model verbatim. */
  schema: Record<string, unknown>;
  invoke(args: Record<string, unknown>, context: CustomToolContext): unknown | Promise<unknown>;
}

/** One agent of a runtime. */
export interface AgentDefinition {
  /** `/^[a-zA-Z_][a-zA-Z0-9_-]*$/`, unique in the runtime. */
  id: string;
  systemPrompt: string;
  provider: AgentProvider;
  /**
   * Executors of the catalog this agent may call, by name. Left out: every
   * executor without side effects (read only). An executor with side effects
   * is offered only when listed here by name: the opt-in. `[]`: none.
   */
  executors?: string[];
  customTools?: CustomTool[];
  budget?: AgentBudget;
}

/** What a `when` predicate sees of the agent that just finished. */
export interface HandoffContext {
  /** The agent the edge leaves. */
  from: string;
  /** How often each agent has been entered so far in this run. */
  visits: Readonly<Record<string, number>>;
  /** The agent stopped on a cap rather than answering. */
  budgetExhausted?: BudgetExhaustedReason;
}

/** One edge of the handoff graph; without `when` it always matches. */
export interface HandoffEdge {
  from: string;
  to: string;
  when?: (finalAnswer: string, context: HandoffContext) => boolean;
}

/** The handoff graph of a run: where it starts, which edges lead on (first match fires), where it ends. */
export interface HandoffPlan {
  entry: string;
  edges: HandoffEdge[];
  /** Agents after which the run ends, whatever edges leave them. */
  exits?: string[];
  /** How often one agent may be entered in a run (default 8); one more entry is a cycle and ends the run. */
  maxAgentVisits?: number;
}

/** The trace events of a run, as seed 002 tables them, and the run's own `aborted` and `failed`. */
export type AgentEventType =
  | 'agent.llm.turn'
  | 'agent.llm.error'
  | 'agent.tool.invoke'
  | 'agent.tool.failed'
  | 'agent.tool.rejected'
  | 'agent.handoff.transition'
  | 'agent.handoff.cycle'
  | 'agent.budget.exhausted'
  | 'agent.provider.destroy.failed'
  | 'agent.run.aborted'
  | 'agent.run.failed';

/** The capability an event belongs to. */
export type AgentEventCapability = 'agent:llm' | 'agent:tool' | 'agent:control' | 'agent:policy' | 'agent';

/**
 * One trace event. `data` holds names, counts, classes and reasons; `detail`
 * (when present) is for operators only — it may name what a model asked for —
 * and is never sent to a model or to OpenTelemetry.
 */
export interface AgentEvent {
  type: AgentEventType;
  capability: AgentEventCapability;
  hlc: HlcTimestamp;
  runId: string;
  agentId?: string;
  data: Record<string, string | number | boolean | null>;
  detail?: string;
}

/** How one visit of an agent ended. */
export type AgentVisitStatus = 'completed' | 'budget_exhausted' | 'aborted' | 'failed';

/** One visit of an agent in a run. */
export interface AgentVisit {
  agentId: string;
  /** 1 for the first entry of this agent in the run. */
  visit: number;
  status: AgentVisitStatus;
  finalAnswer: string;
  budgetExhausted?: BudgetExhaustedReason;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
  costUsd: number | undefined;
  /** Set when the visit failed: the class of what failed. */
  errorClass?: string;
}

/** Why a run ended: at an exit, with no edge to follow, alone (no plan), on a cycle, aborted, or failed. */
export type RunEnding = 'exit' | 'no_edge' | 'single' | 'cycle' | 'aborted' | 'failed';

/** What `run` resolves to. It never rejects on what agents or models do. */
export interface AgentRunResult {
  runId: string;
  status: 'completed' | 'aborted' | 'failed';
  ending: RunEnding;
  /** The last visit's answer (possibly partial when a cap or an abort stopped it). */
  finalAnswer: string;
  visits: AgentVisit[];
  events: AgentEvent[];
}

/** The executors side of a runtime: what an agent's executor calls go through. */
export interface AgentExecutors {
  catalog: { executors(): VerifiedExecutor[] };
  invoker: Pick<Invoker, 'invoke'>;
  /** The vaglio: every executor call is reviewed before it runs. */
  reviewer: CallReviewer;
  workspace: string;
  home?: string;
  /** Asked when the vaglio wants the person's confirmation; without it such calls do not run. */
  approved?: (call: { agentId: string; tool: string; args: unknown }) => boolean | Promise<boolean>;
  /** Per-executor settings passed as `ctx.config`. */
  config?: Record<string, Record<string, unknown>>;
}

/** Settings of `createAgentRuntime`. */
export interface AgentRuntimeSettings {
  agents: AgentDefinition[];
  /** Needed when any agent calls executors (all but `executors: []` with only custom tools). */
  executors?: AgentExecutors;
  /** Where `agent:{id}`, `shared` and `global` live; default in memory. */
  memory?: RuntimeMemoryAdapter;
  /** The signed receipt chain: a receipt per model turn and per custom tool call (executors write theirs). */
  receipts?: ReceiptSink;
  /** Told every trace event as it happens. */
  onEvent?: (event: AgentEvent) => void;
  /** Physical clock of the events' HLC, in epoch ms (default `Date.now`). */
  now?: () => number;
  /** Run ids (default `randomUUID`). */
  ids?: () => string;
  /** The longest tool observation sent back to a model, in characters (default 16 000). */
  maxObservationChars?: number;
}

/** What `run` takes. */
export interface AgentRunOptions {
  goal: string;
  /** The handoff graph; without one the first agent runs alone. */
  plan?: HandoffPlan;
  /** Aborts the run: in-flight model and executor calls are torn down. */
  signal?: AbortSignal;
  /** Told this run's events as they happen (besides the runtime's `onEvent`). */
  onEvent?: (event: AgentEvent) => void;
  runId?: string;
}
