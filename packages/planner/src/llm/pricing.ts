import type { TokenUsage } from './types.ts';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/** Model name (or name prefix) → price. */
export type PricingTable = Readonly<Record<string, Price>>;

/**
 * OpenAI list prices, USD per million tokens (standard tier, uncached input).
 * Dated variants (`gpt-4o-2024-11-20`) resolve through prefix lookup.
 */
export const OPENAI_PRICING: PricingTable = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
};

/** Anthropic list prices, USD per million tokens (uncached input). */
export const ANTHROPIC_PRICING: PricingTable = {
  'claude-opus-4': { input: 15, output: 75 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
};

const NAME_BOUNDARY = /^[-:@/]/;

/**
 * The price of a model: the exact name first, then the longest table entry
 * the name starts with at a name boundary (`-`, `:`, `@`, `/`), so
 * `claude-sonnet-4-5-20250929` takes the `claude-sonnet-4-5` rate and
 * `gpt-4o-mini-2024-07-18` the `gpt-4o-mini` one. `undefined` when nothing
 * matches.
 *
 * @example
 * lookupPrice(OPENAI_PRICING, 'gpt-4o-2024-11-20'); // { input: 2.5, output: 10 }
 */
export function lookupPrice(table: PricingTable, model: string): Price | undefined {
  if (Object.hasOwn(table, model)) return table[model];
  let best: string | undefined;
  for (const name of Object.keys(table)) {
    const matches = model.startsWith(name) && NAME_BOUNDARY.test(model.slice(name.length));
    if (matches && (best === undefined || name.length > best.length)) best = name;
  }
  return best === undefined ? undefined : table[best];
}

/**
 * USD for one request's usage, or `undefined` without a price.
 *
 * @example
 * costOf({ input: 3, output: 15 }, { inputTokens: 1000, outputTokens: 200 }); // 0.006
 */
export function costOf(price: Price | undefined, usage: TokenUsage): number | undefined {
  if (price === undefined) return undefined;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}
