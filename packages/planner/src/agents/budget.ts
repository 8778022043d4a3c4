import type { ChatResponse } from '../llm/types.ts';
import type { AgentBudget, BudgetExhaustedReason } from './types.ts';

/** An agent's caps when it sets none: 50 model turns, 200 tool calls, tokens and cost unlimited. */
export const DEFAULT_AGENT_BUDGET: Readonly<Required<Pick<AgentBudget, 'maxTurns' | 'maxToolCalls'>>> & {
  readonly maxTokens: number;
  readonly maxCostUsd: number;
} = Object.freeze({
  maxTurns: 50,
  maxToolCalls: 200,
  maxTokens: Number.POSITIVE_INFINITY,
  maxCostUsd: Number.POSITIVE_INFINITY,
});

/** A cap that was hit: which, its limit, what was spent. */
export interface Exhaustion {
  reason: BudgetExhaustedReason;
  limit: number;
  spent: number;
}

/**
 * What one agent may spend in a run, and has spent, across all its visits.
 * A model turn is refused once the turns, tokens or cost are spent; a tool
 * call once the tool calls are. The refusal is data ({@link Exhaustion}), and
 * the agent's loop ends on it as if the agent had answered.
 *
 * @example
 * const budget = createAgentBudget({ maxTurns: 5 });
 * const stop = budget.beforeTurn(); // undefined until five turns were charged
 */
export function createAgentBudget(caps: AgentBudget = {}) {
  const limits = {
    maxTurns: caps.maxTurns ?? DEFAULT_AGENT_BUDGET.maxTurns,
    maxToolCalls: caps.maxToolCalls ?? DEFAULT_AGENT_BUDGET.maxToolCalls,
    maxTokens: caps.maxTokens ?? DEFAULT_AGENT_BUDGET.maxTokens,
    maxCostUsd: caps.maxCostUsd ?? DEFAULT_AGENT_BUDGET.maxCostUsd,
  };
  const spent = { turns: 0, toolCalls: 0, tokens: 0, costUsd: 0 };
  const hit = (reason: BudgetExhaustedReason, limit: number, value: number): Exhaustion | undefined =>
    value >= limit ? { reason, limit, spent: value } : undefined;
  return {
    limits,
    spent,
    /** The cap that forbids another model turn, if any. */
    beforeTurn(): Exhaustion | undefined {
      return (
        hit('turns', limits.maxTurns, spent.turns) ??
        hit('tokens', limits.maxTokens, spent.tokens) ??
        hit('costUsd', limits.maxCostUsd, spent.costUsd)
      );
    },
    /** Counts a model turn and what it used. */
    chargeTurn(response: Pick<ChatResponse, 'usage' | 'costUsd'>): void {
      spent.turns++;
      spent.tokens += response.usage.inputTokens + response.usage.outputTokens;
      spent.costUsd += response.costUsd ?? 0;
    },
    /** Counts a tool call, or refuses it when the tool calls are spent. */
    chargeToolCall(): Exhaustion | undefined {
      const refused = hit('toolCalls', limits.maxToolCalls, spent.toolCalls);
      if (!refused) spent.toolCalls++;
      return refused;
    },
  };
}

/** An agent's budget tracker. */
export type AgentBudgetTracker = ReturnType<typeof createAgentBudget>;
