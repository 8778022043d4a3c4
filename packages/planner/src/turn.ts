import { createLoopContext, finishTurn, newTurnState } from './loop/context.ts';
import { localLoop } from './loop/local-loop.ts';
import { onlinePlan } from './loop/online-plan.ts';
import { route } from './loop/route.ts';
import type { PlannerSettings, TurnResult, TurnState } from './loop/types.ts';
import { hasReferences } from './piping.ts';
import { rankExecutors } from './prefilter.ts';

export { parsePlanText } from './loop/online-plan.ts';
export { classifyExecutorFailure } from './loop/tool-call.ts';
export type {
  FinalKind,
  HybridRules,
  PlannerMode,
  PlannerSettings,
  StepRecord,
  TurnResult,
} from './loop/types.ts';

/**
 * The turn-by-turn planner. A turn: load the catalog, rank it with the
 * pre-filter, then either loop (local: one model call per step, native tool
 * calls) or plan once (online), reviewing every call with the vaglio, piping
 * `{{stepN.field}}` between steps, keeping large observations in the
 * scratchpad, enforcing caps and budgets, and writing one turn-log line.
 * Every ending is a structured result, never an exception. The parts are
 * in `src/loop/`: the context a planner's turns share, the model call, one
 * tool call, the local loop, the online plan and the hybrid router.
 *
 * @example
 * const planner = createPlanner({ catalog, invoker, models: { fast }, reviewer, scratchpad, workspace });
 * const result = await planner.runTurn('read ~/notes/diary.md and tell me the last three lines');
 * result.finalKind; // 'answer'
 */
export function createPlanner(settings: PlannerSettings) {
  const context = createLoopContext(settings);
  const run = async (state: TurnState, signal: AbortSignal | undefined, resumeApproved: boolean) => {
    try {
      return state.routedMode === 'online'
        ? await onlinePlan(context, state, signal, resumeApproved)
        : await localLoop(context, state, signal, resumeApproved);
    } catch (error) {
      return finishTurn(
        context,
        state,
        'error',
        `Something went wrong inside the planner: ${(error as Error)?.message ?? String(error)}`,
      );
    }
  };

  return {
    /** Runs one turn for a request. Always resolves. */
    async runTurn(
      request: string,
      options: { signal?: AbortSignal; turnId?: string } = {},
    ): Promise<TurnResult> {
      const catalog = settings.catalog.executors();
      const state = newTurnState(context, request, options.turnId);
      if (catalog.length === 0) {
        return finishTurn(
          context,
          state,
          'error',
          'I have no executors to work with (empty catalog): add or re-sign executors, then run `metnos executor list`.',
        );
      }
      const ranked = rankExecutors(request, catalog, settings.prefilter);
      state.candidates = ranked.executors;
      state.routedMode = route(context, state, ranked.confidence);
      return run(state, options.signal, false);
    },

    /** Continues a turn that paused for approval, once the user approved it in the approval store. */
    async resume(turnId: string, options: { approved: boolean; signal?: AbortSignal }): Promise<TurnResult> {
      const state = context.paused.get(turnId);
      if (!state?.waiting) {
        return {
          turnId,
          finalKind: 'error',
          finalMessage: 'There is no paused turn with that id (it may have finished or expired).',
          mode: settings.mode ?? 'local',
          routedMode: 'local',
          candidates: [],
          steps: [],
          tokens: { input: 0, output: 0 },
          costUsd: undefined,
        };
      }
      context.paused.delete(turnId);
      if (!options.approved) {
        const { call } = state.waiting;
        state.waiting = undefined;
        return finishTurn(
          context,
          state,
          'answer',
          `Cancelled: ${call.name} did not run because you did not approve it.`,
        );
      }
      return run(state, options.signal, true);
    },

    /** True when a paused turn waits for approval. */
    isPaused(turnId: string): boolean {
      return context.paused.has(turnId);
    },
  };
}

export type Planner = ReturnType<typeof createPlanner>;

/** True when the args contain references (a piping hook for the mnestome). */
export { hasReferences };
