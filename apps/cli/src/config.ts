import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { agentsConfigSchema } from '@metnos/planner/agents';
import type { WarmPoolSettings } from '@metnos/sandbox';
import { z } from 'zod';
import { CliFailure } from './output.ts';
import type { CliPlace } from './workspace.ts';

/**
 * The app-level sections of `metnos.toml`, parsed once at the edge. The
 * `[runtime.llm]` tables are parsed by `@metnos/planner`'s `createTiers`.
 */
export const appConfigSchema = z
  .object({
    runtime: z
      .object({
        engine: z.enum(['learning', 'oneshot', 'strict', 'loop']).default('learning'),
        mode: z.enum(['local', 'online', 'hybrid']).default('local'),
        data_dir: z.string().optional(),
        actor: z.string().default('user'),
        time_zone: z.string().optional(),
        llm: z.unknown().optional(),
        hybrid: z
          .object({
            escalate_on_keywords: z.array(z.string()).default([]),
            escalate_on_capabilities: z.array(z.string()).default([]),
            escalate_below_confidence: z.number().min(0).max(1).optional(),
          })
          .strict()
          .optional(),
        caps: z
          .object({
            steps: z.number().int().positive().default(5),
            same_executor: z.number().int().positive().default(2),
          })
          .strict()
          .optional(),
        budget: z
          .object({
            tool_calls: z.number().int().positive().optional(),
            tokens: z.number().int().positive().optional(),
            cost_usd: z.number().positive().optional(),
          })
          .strict()
          .optional(),
        memory: z
          .object({
            model_dir: z.string().optional(),
            embedder: z.enum(['lexical', 'onnx', 'ollama', 'openai']).optional(),
            embedder_model: z.string().min(1).optional(),
            embedder_url: z.string().optional(),
            embedder_api_key_env: z.string().min(1).optional(),
            fastpath_threshold: z.number().min(0).max(1).optional(),
            autopath_threshold: z.number().min(0).max(1).optional(),
          })
          .strict()
          .optional(),
      })
      .passthrough()
      .default({ engine: 'learning', mode: 'local', actor: 'user' }),
    vaglio: z
      .object({ threshold: z.number().min(0).max(1).optional() })
      .strict()
      .optional(),
    sandbox: z
      .object({
        host_overrides: z.record(z.string(), z.string()).optional(),
        // the warm pool: true, false, or its budgets; default on for `serve`, off for one-shot commands
        pool: z
          .union([
            z.boolean(),
            z
              .object({
                size: z.number().int().min(0).max(8).optional(),
                max: z.number().int().min(0).max(64).optional(),
                memory_mb: z.number().int().min(0).optional(),
                processes: z.number().int().min(0).optional(),
                idle_ms: z.number().int().min(1000).optional(),
              })
              .strict(),
          ])
          .optional(),
      })
      .strict()
      .optional(),
    executors: z
      .object({ config: z.record(z.string(), z.record(z.string(), z.unknown())).default({}) })
      .strict()
      .optional(),
    // the synt: the key that signs what it generates, and when a proto-mnest counts as recurring
    synt: z
      .object({
        key: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/, 'the name of a key in your key store')
          .optional(),
        min_uses: z.number().int().min(1).optional(),
        min_weight: z.number().min(0).max(1).optional(),
        window_days: z.number().int().min(1).max(365).optional(),
      })
      .strict()
      .optional(),
    // agent graphs: [agents.<name>] with its agents, edges and exits, for `metnos ask --agents <name>`
    agents: agentsConfigSchema.optional(),
    // OTLP export of the engine's spans from `metnos serve`; absent, no SDK is set up
    telemetry: z
      .object({
        otlp_endpoint: z
          .string()
          .url()
          .refine(
            (url) => /^https?:\/\//i.test(url),
            'an http:// or https:// URL, e.g. http://127.0.0.1:4318/v1/traces',
          ),
        service_name: z.string().min(1).max(128).optional(),
      })
      .strict()
      .optional(),
    channels: z
      .object({
        // the bot token stays in the environment: the file names the variable that holds it
        telegram: z
          .object({
            bot_token_env: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the NAME of an environment variable, not the token'),
            allowed_chat_ids: z.array(z.number().int().refine(Number.isSafeInteger)).min(1),
            default_chat_id: z.number().int().refine(Number.isSafeInteger).optional(),
            base_url: z.string().url().optional(),
          })
          .strict()
          .refine(
            (telegram) =>
              telegram.default_chat_id === undefined ||
              telegram.allowed_chat_ids.includes(telegram.default_chat_id),
            { message: 'default_chat_id must be one of allowed_chat_ids', path: ['default_chat_id'] },
          )
          .optional(),
      })
      .strict()
      .optional(),
  })
  .passthrough();

export type AppConfig = z.infer<typeof appConfigSchema>;

/** The default `[runtime.llm]`: a local Ollama model on the fast tier. */
export const DEFAULT_LLM = { fast: { provider: 'ollama', model: 'qwen3:8b', think: false } };

/** Parses the app sections of the workspace config (or the defaults when there is no `metnos.toml`). */
export function readAppConfig(place: CliPlace): AppConfig {
  const parsed = appConfigSchema.safeParse(place.config?.raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliFailure(`metnos.toml: field "${issue.path.join('.')}": ${issue.message}`);
  }
  return parsed.data;
}

/**
 * The sandbox's warm pool for a command: `[sandbox] pool` (true, false or its
 * budgets), else `byDefault` — on for `metnos serve`, which answers request
 * after request, off for one-shot commands, whose processes would start ahead
 * of calls that never come.
 *
 * @example
 * createSandboxRunner({ pool: sandboxPool(config, true) });
 */
export function sandboxPool(config: AppConfig, byDefault: boolean): boolean | WarmPoolSettings {
  const pool = config.sandbox?.pool;
  if (pool === undefined) return byDefault;
  if (typeof pool === 'boolean') return pool;
  return {
    size: pool.size,
    max: pool.max,
    memoryMb: pool.memory_mb,
    processes: pool.processes,
    idleMs: pool.idle_ms,
  };
}

/** Where runtime stores live: `[runtime] data_dir`, else `$XDG_DATA_HOME/metnos`, else `~/.local/share/metnos`. */
export function dataDir(place: CliPlace, config: AppConfig): string {
  const configured = config.runtime.data_dir;
  if (configured)
    return isAbsolute(configured) ? configured : join(place.config?.configDir ?? place.cwd, configured);
  return join(process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'metnos');
}
