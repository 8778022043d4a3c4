import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import type { Environment } from './env.ts';
import { ProviderConfigError } from './errors.ts';
import type { PricingTable } from './pricing.ts';
import { createChatModel } from './providers.ts';
import type { ChatModel, Tier } from './types.ts';

/** One `[runtime.llm.<tier>]` table. */
export const tierConfigSchema = z
  .object({
    provider: z.enum(['ollama', 'openai', 'anthropic']),
    model: z.string().trim().min(1, 'an explicit model name is required'),
    think: z.boolean().optional(),
    /** Appended to the system prompt of every request this tier serves. */
    prompt: z.string().optional(),
    base_url: z.string().min(1).optional(),
    /** Name of the environment variable that holds the API key (never the key itself). */
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .optional(),
    timeout_ms: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
  })
  .strict();

/** `[runtime.llm.pricing]`: extra prices, model name → USD per million tokens. */
export const pricingConfigSchema = z.record(
  z.string().min(1),
  z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }).strict(),
);

/**
 * The `[runtime.llm]` section. `fast` is required; `middle` and `wise` alias
 * down when missing (wise → middle → fast).
 *
 * @example
 * const section = llmConfigSchema.parse(parseToml(text).runtime.llm);
 */
export const llmConfigSchema = z
  .object({
    fast: tierConfigSchema,
    middle: tierConfigSchema.optional(),
    wise: tierConfigSchema.optional(),
    pricing: pricingConfigSchema.optional(),
  })
  .strict();

/** The parsed `[runtime.llm]` section. */
export type LlmConfig = z.infer<typeof llmConfigSchema>;
/** One parsed tier table. */
export type TierConfig = z.infer<typeof tierConfigSchema>;

/** Options of {@link createTiers}. */
export interface TierOptions {
  /** Transport for every model (tests point it at loopback servers or wrap it). */
  fetch?: typeof fetch;
  /** Where `api_key_env` variables are read; default `process.env`. */
  env?: Environment;
  /** Extra prices, merged under `[runtime.llm.pricing]`. */
  pricing?: PricingTable;
  /** Clock in epoch milliseconds. */
  now?: () => number;
}

/** The three tier models. `aliases` names the tiers that point at a lower one. */
export interface Tiers {
  fast: ChatModel;
  middle: ChatModel;
  wise: ChatModel;
  /** E.g. `{ middle: 'fast', wise: 'fast' }` when only `fast` is configured. */
  aliases: Partial<Record<Tier, Tier>>;
}

function parseSection(config: unknown): LlmConfig {
  const parsed = llmConfigSchema.safeParse(config);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = ['runtime', 'llm', ...issue.path.map(String)].join('.');
  throw new ProviderConfigError({
    field: path,
    message: `[runtime.llm] ${path}: ${issue.message}`,
    cause: parsed.error,
  });
}

function buildModel(
  tier: Tier,
  config: TierConfig,
  options: TierOptions,
  pricing: PricingTable,
  field = `runtime.llm.${tier}`,
): ChatModel {
  const common = {
    model: config.model,
    baseUrl: config.base_url,
    tier,
    prompt: config.prompt,
    timeoutMs: config.timeout_ms,
    maxTokens: config.max_tokens,
    fetch: options.fetch,
    now: options.now,
  };
  if (config.provider === 'ollama') {
    if (config.api_key_env !== undefined) {
      throw new ProviderConfigError({
        field: `${field}.api_key_env`,
        message: `[${field}] ollama takes no API key; remove api_key_env`,
      });
    }
    return createChatModel({ provider: 'ollama', ...common, think: config.think });
  }
  if (config.think !== undefined) {
    throw new ProviderConfigError({
      field: `${field}.think`,
      message: `[${field}] think is an Ollama switch; ${config.provider} does not take it`,
    });
  }
  return createChatModel({
    provider: config.provider,
    ...common,
    apiKeyEnv: config.api_key_env,
    env: options.env,
    pricing,
  });
}

/**
 * Builds one model from a table shaped like a `[runtime.llm.<tier>]` one,
 * found elsewhere in `metnos.toml` (an agent's own `llm` table); `field`
 * names that table in errors. The same checks as {@link createTiers}.
 *
 * @example
 * const model = createModelFromConfig({ provider: 'ollama', model: 'qwen3:8b' }, { field: 'agents.triage.agent.router.llm' });
 */
export function createModelFromConfig(
  config: unknown,
  options: TierOptions & { field: string; tier?: Tier },
): ChatModel {
  const parsed = tierConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = [options.field, ...issue.path.map(String)].join('.');
    throw new ProviderConfigError({
      field: path,
      message: `[${options.field}] ${path}: ${issue.message}`,
      cause: parsed.error,
    });
  }
  return buildModel(options.tier ?? 'fast', parsed.data, options, { ...options.pricing }, options.field);
}

/**
 * Builds the fast, middle and wise models from the `[runtime.llm]` section
 * (raw or already parsed). A missing tier aliases the one below it, so `fast`
 * alone is a working setup. Every model is checked at construction: a missing
 * model, an empty key or an insecure base URL throws `ProviderConfigError`.
 *
 * @example
 * const tiers = createTiers({ fast: { provider: 'ollama', model: 'qwen3:8b', think: false } });
 * tiers.wise === tiers.fast; // true — tiers.aliases is { middle: 'fast', wise: 'fast' }
 */
export function createTiers(config: unknown, options: TierOptions = {}): Tiers {
  const section = parseSection(config);
  const pricing = { ...options.pricing, ...section.pricing };
  const fast = buildModel('fast', section.fast, options, pricing);
  const aliases: Partial<Record<Tier, Tier>> = {};
  let middle = fast;
  if (section.middle) middle = buildModel('middle', section.middle, options, pricing);
  else aliases.middle = 'fast';
  let wise = middle;
  if (section.wise) wise = buildModel('wise', section.wise, options, pricing);
  else aliases.wise = section.middle ? 'middle' : 'fast';
  return { fast, middle, wise, aliases };
}

/**
 * Reads `[runtime.llm]` out of a whole `metnos.toml` text and builds the tiers.
 *
 * @example
 * const tiers = createTiersFromToml(await readFile('metnos.toml', 'utf8'), { env: process.env });
 */
export function createTiersFromToml(text: string, options: TierOptions = {}): Tiers {
  let document: Record<string, unknown>;
  try {
    document = parseToml(text) as Record<string, unknown>;
  } catch (cause) {
    throw new ProviderConfigError({
      field: 'runtime.llm',
      message: `metnos.toml is not valid TOML: ${(cause as Error).message}`,
      cause,
    });
  }
  const runtime = document.runtime as Record<string, unknown> | undefined;
  if (runtime?.llm === undefined) {
    throw new ProviderConfigError({
      field: 'runtime.llm',
      message: 'metnos.toml has no [runtime.llm.fast] section',
    });
  }
  return createTiers(runtime.llm, options);
}
