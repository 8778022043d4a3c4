import { MetnosError } from '@metnos/executor-sdk';
import type { ChatResponse } from '../model.ts';

const marker = Symbol.for('metnos.error.BudgetExhausted');

/** Which budget a turn spent. */
export type BudgetKind = 'tool_calls' | 'tokens' | 'cost_usd';

/** A turn spent one of its budgets: no further tool or model call runs. */
export class BudgetExhausted extends MetnosError {
  private readonly [marker] = true;
  readonly budget: BudgetKind;
  readonly limit: number;
  readonly spent: number;

  constructor(settings: { budget: BudgetKind; limit: number; spent: number }) {
    const what = { tool_calls: 'tool calls', tokens: 'model tokens', cost_usd: 'USD of model cost' }[
      settings.budget
    ];
    super({
      code: 'budget_exhausted',
      message: `the turn's budget of ${settings.limit} ${what} is spent (${settings.spent})`,
    });
    this.name = 'BudgetExhausted';
    this.budget = settings.budget;
    this.limit = settings.limit;
    this.spent = settings.spent;
  }

  static override isInstance(error: unknown): error is BudgetExhausted {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

/** The limits of one turn; a limit left out is unlimited. */
export interface TurnBudgetLimits {
  /** Executor calls, retries included. */
  toolCalls?: number;
  /** Model tokens, input and output. */
  tokens?: number;
  /** Model cost in USD, where the provider's price is known. */
  costUsd?: number;
}

/**
 * What one turn may spend and has spent, across every layer (intent,
 * Proposer, fillers, the plan's calls, Recovery's). A call that would go
 * over is not made: `chargeToolCall` and `checkModel` answer the
 * {@link BudgetExhausted} instead.
 *
 * @example
 * const budget = createTurnBudget({ toolCalls: 8 });
 * const refused = budget.chargeToolCall(); // undefined until the ninth
 */
export function createTurnBudget(limits: TurnBudgetLimits = {}) {
  const spent = { toolCalls: 0, tokens: 0, costUsd: 0 };
  let exhausted: BudgetExhausted | undefined;
  const over = (budget: BudgetKind, limit: number | undefined, value: number, atLimit: boolean) => {
    if (limit === undefined || (atLimit ? value < limit : value <= limit)) return undefined;
    exhausted ??= new BudgetExhausted({ budget, limit, spent: value });
    return exhausted;
  };
  return {
    limits,
    spent,
    /** Counts one executor call, or refuses it when the tool-call budget is spent. */
    chargeToolCall(): BudgetExhausted | undefined {
      const refused = over('tool_calls', limits.toolCalls, spent.toolCalls, true);
      if (refused) return refused;
      spent.toolCalls++;
      return undefined;
    },
    /** Refuses a model call when the token or cost budget is spent. */
    checkModel(): BudgetExhausted | undefined {
      return (
        over('tokens', limits.tokens, spent.tokens, false) ??
        over('cost_usd', limits.costUsd, spent.costUsd, false)
      );
    },
    /** Counts what a model call used. */
    chargeModel(response: Pick<ChatResponse, 'usage' | 'costUsd'>): void {
      spent.tokens += response.usage.inputTokens + response.usage.outputTokens;
      spent.costUsd += response.costUsd ?? 0;
    },
    /** The budget the turn spent, if any. */
    exhausted: (): BudgetExhausted | undefined => exhausted,
  };
}

export type TurnBudget = ReturnType<typeof createTurnBudget>;
