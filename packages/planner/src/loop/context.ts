import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import type { VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel, ChatResponse } from '../model.ts';
import { executorContract, type ReviewedCall, type ReviewVerdict } from '../review.ts';
import type { TurnLogStep } from '../turn-log.ts';
import type { FinalKind, PlannerSettings, StepRecord, TurnResult, TurnState } from './types.ts';

/** What every turn of a planner shares: its settings, resolved once, and the turns paused for approval. */
export interface LoopContext {
  settings: PlannerSettings;
  clock: () => Date;
  ids: () => string;
  capSteps: number;
  capSame: number;
  /** Executors whose repeated call on the same path or URL is answered from history. */
  guarded: ReadonlySet<string>;
  home: string;
  paused: Map<string, TurnState>;
  models: { fast: ChatModel; middle: ChatModel; wise: ChatModel };
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/** Resolves a planner's settings (defaults, tier aliases) into the context its turns share. */
export function createLoopContext(settings: PlannerSettings): LoopContext {
  return {
    settings,
    clock: settings.clock ?? (() => new Date()),
    ids: settings.ids ?? randomUUID,
    capSteps: settings.caps?.steps ?? 5,
    capSame: settings.caps?.sameExecutor ?? 2,
    guarded: new Set(settings.duplicateReadGuard ?? ['fs_read', 'fs_write', 'web_fetch']),
    home: settings.home ?? homedir(),
    paused: new Map(),
    models: {
      fast: settings.models.fast,
      middle: settings.models.middle ?? settings.models.fast,
      wise: settings.models.wise ?? settings.models.middle ?? settings.models.fast,
    },
    sleep: settings.retry?.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: settings.retry?.random ?? Math.random,
  };
}

/** A fresh turn for a request. */
export function newTurnState(context: LoopContext, request: string, turnId?: string): TurnState {
  return {
    turnId: turnId ?? context.ids(),
    request,
    tsStart: context.clock().getTime() / 1000,
    mode: context.settings.mode ?? 'local',
    routedMode: 'local',
    candidates: [],
    history: [{ role: 'user', content: request }],
    observations: [],
    steps: [],
    calls: new Map(),
    reads: new Map(),
    toolCallsUsed: 0,
    tokens: { input: 0, output: 0 },
    costUsd: undefined,
  };
}

/** Adds a model response's tokens and cost to the turn. */
export function account(state: TurnState, response: ChatResponse): void {
  state.tokens.input += response.usage.inputTokens;
  state.tokens.output += response.usage.outputTokens;
  if (response.costUsd !== undefined) state.costUsd = (state.costUsd ?? 0) + response.costUsd;
}

/** Which budget the turn has spent, if any. */
export function overBudget(context: LoopContext, state: TurnState): string | undefined {
  const budget = context.settings.budget;
  if (!budget) return undefined;
  if (budget.tokens !== undefined && state.tokens.input + state.tokens.output > budget.tokens) {
    return `the token budget (${budget.tokens}) is spent`;
  }
  if (budget.costUsd !== undefined && (state.costUsd ?? 0) > budget.costUsd)
    return `the cost budget ($${budget.costUsd}) is spent`;
  if (budget.toolCalls !== undefined && state.toolCallsUsed >= budget.toolCalls) {
    return `the tool-call budget (${budget.toolCalls}) is spent`;
  }
  return undefined;
}

/** Ends the turn with the budget it spent and its last useful result, when a budget is spent. */
export function stopIfOverBudget(context: LoopContext, state: TurnState): Promise<TurnResult> | undefined {
  const budget = overBudget(context, state);
  if (!budget) return undefined;
  return finishTurn(context, state, 'budget', `I stopped because ${budget}. ${lastUsefulText(state)}`.trim());
}

/** The last successful observation, as a line to end a turn that stopped early with. */
export function lastUsefulText(state: TurnState): string {
  const last = [...state.observations].reverse().find((observation) => observation.ok === true);
  if (!last) return '';
  const content = last.content ?? last.summary;
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return `Last result: ${text.slice(0, 500)}`;
}

/** Records a step (run or refused) and its observation; returns the observation. */
export function record(state: TurnState, step: Omit<StepRecord, 'number'>): Record<string, unknown> {
  const number = state.steps.length + 1;
  state.steps.push({ ...step, number });
  state.observations.push(step.observation);
  return step.observation;
}

/** A call as the vaglio reviews it. */
export function reviewed(state: TurnState, executor: VerifiedExecutor, args: unknown): ReviewedCall {
  return {
    executor: executorContract(executor),
    args,
    request: state.request,
    stepIndex: state.steps.length + 1,
    turnId: state.turnId,
  };
}

/** A verdict as the turn log keeps it. */
export function summarizeVerdict(verdict: ReviewVerdict): TurnLogStep['vaglio'] {
  return {
    approved: verdict.approved,
    blocked_by: verdict.blocked_by,
    score: verdict.score,
    reason: verdict.reason,
  };
}

/**
 * Ends a turn: builds the result, keeps a turn paused for approval (or
 * forgets it), and writes the turn-log line of a turn that ended.
 */
export async function finishTurn(
  context: LoopContext,
  state: TurnState,
  finalKind: FinalKind,
  finalMessage: string,
  pending?: TurnResult['pending'],
): Promise<TurnResult> {
  const result: TurnResult = {
    turnId: state.turnId,
    finalKind,
    finalMessage,
    mode: state.mode,
    routedMode: state.routedMode,
    candidates: state.candidates.map((executor) => executor.name),
    steps: state.steps,
    tokens: state.tokens,
    costUsd: state.costUsd,
    ...(pending ? { pending } : {}),
  };
  if (finalKind === 'pending_approval') context.paused.set(state.turnId, state);
  else context.paused.delete(state.turnId);
  const turnLog = context.settings.turnLog;
  if (turnLog && finalKind !== 'pending_approval') {
    try {
      await turnLog.append({
        turn_id: state.turnId,
        ts_start: state.tsStart,
        ts_end: context.clock().getTime() / 1000,
        user_query: state.request,
        mode: state.mode,
        routed_mode: state.routedMode,
        candidates: result.candidates,
        steps: state.steps.map(({ observation: _observation, ...step }) => step),
        final_message: finalMessage,
        final_kind: finalKind,
        tokens: state.tokens,
        cost_usd: state.costUsd,
      });
    } catch {
      // the turn's answer matters more than its log line
    }
  }
  return result;
}
