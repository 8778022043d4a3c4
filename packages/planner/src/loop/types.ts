import type { Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatMessage, ChatModel, ToolCall } from '../model.ts';
import type { ChainComposer, PassageRecorder } from '../passages.ts';
import type { PrefilterSettings } from '../prefilter.ts';
import type { ApprovalChecker, CallReviewer } from '../review.ts';
import type { Scratchpad } from '../scratchpad.ts';
import type { TurnLog, TurnLogStep } from '../turn-log.ts';

/** How a turn ended. */
export type FinalKind =
  | 'answer'
  | 'cap_steps'
  | 'cap_same_executor'
  | 'budget'
  | 'error'
  | 'pending_approval';

/** The planner modes: `local` (ReAct, one model call per step), `online` (one call plans everything), `hybrid` (a router picks). */
export type PlannerMode = 'local' | 'online' | 'hybrid';

/** Rules that send a hybrid turn to online mode. */
export interface HybridRules {
  /** Escalate when a top candidate has one of these capabilities (e.g. `code:exec`). */
  escalateOnCapabilities?: string[];
  /** Escalate when the request contains one of these words. */
  escalateOnKeywords?: string[];
  /** Escalate when the pre-filter is this unsure (confidence below). */
  escalateBelowConfidence?: number;
}

/** Settings of `createPlanner`. */
export interface PlannerSettings {
  catalog: { executors(): VerifiedExecutor[] };
  invoker: Pick<Invoker, 'invoke'>;
  /** Tier models; `fast` is required, the others alias down (wise → middle → fast). */
  models: { fast: ChatModel; middle?: ChatModel; wise?: ChatModel };
  reviewer: CallReviewer;
  approvals?: ApprovalChecker;
  scratchpad: Scratchpad;
  turnLog?: TurnLog;
  workspace: string;
  home?: string;
  mode?: PlannerMode;
  hybrid?: HybridRules;
  /** Which tier each mode uses. Default: local → fast, online → wise. */
  tiers?: { local?: 'fast' | 'middle' | 'wise'; online?: 'fast' | 'middle' | 'wise' };
  caps?: { steps?: number; sameExecutor?: number };
  budget?: { toolCalls?: number; tokens?: number; costUsd?: number };
  prefilter?: PrefilterSettings;
  /** Per-executor settings passed as `ctx.config`. */
  executorConfig?: Record<string, Record<string, unknown>>;
  /** Executors whose repeated call on the same path/url is answered from history. */
  duplicateReadGuard?: string[];
  /** Extra system prompt text (e.g. the tier's prompt). */
  systemPrompt?: string;
  /**
   * The mnestome (`createMnestome` from `@metnos/mnestome`): piped passages
   * between executors and proto-mnests for unknown tools are recorded there,
   * and what usually follows the last step ranks higher in the next one.
   */
  mnestome?: PassageRecorder;
  /** Reactive compose (`createComposer` from `@metnos/synt`), asked when a proto-mnest is registered. */
  composer?: ChainComposer;
  retry?: {
    attempts?: number;
    baseDelayMs?: number;
    sleep?: (ms: number) => Promise<void>;
    random?: () => number;
  };
  modelTimeoutMs?: number;
  clock?: () => Date;
  ids?: () => string;
}

/** One executed (or refused) step. */
export interface StepRecord extends TurnLogStep {
  observation: Record<string, unknown>;
}

/** What a turn returns. */
export interface TurnResult {
  turnId: string;
  finalKind: FinalKind;
  finalMessage: string;
  mode: PlannerMode;
  routedMode: 'local' | 'online';
  candidates: string[];
  steps: StepRecord[];
  tokens: { input: number; output: number };
  costUsd: number | undefined;
  /** Set when the turn paused for a reinforced confirmation. */
  pending?: { approvalId: string; callHash: string; expiresAt: string; executor: string; args: unknown };
}

/** Everything a loop turn carries from step to step (and across a pause for approval). */
export interface TurnState {
  turnId: string;
  request: string;
  tsStart: number;
  mode: PlannerMode;
  routedMode: 'local' | 'online';
  candidates: VerifiedExecutor[];
  history: ChatMessage[];
  observations: Record<string, unknown>[];
  steps: StepRecord[];
  calls: Map<string, number>;
  reads: Map<string, number>;
  toolCallsUsed: number;
  tokens: { input: number; output: number };
  costUsd: number | undefined;
  /** A tool call the model made that waits for approval, with its remaining siblings. */
  waiting?: { call: ToolCall; rest: ToolCall[]; approvalId: string };
  /** Online mode: the plan and the next step to run. */
  plan?: { steps: Array<{ tool: string; args: unknown }>; answer?: string; next: number };
}
