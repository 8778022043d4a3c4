import { z } from 'zod';
import { createModelFromConfig, type TierOptions, tierConfigSchema } from '../llm/tiers.ts';
import type { ChatModel, Tier } from '../llm/types.ts';
import { AgentConfigError } from './errors.ts';
import type { AgentDefinition, HandoffEdge, HandoffPlan } from './types.ts';

const NAME = /^[a-zA-Z_][a-zA-Z0-9_-]*$/;
const name = (what: string) =>
  z.string().regex(NAME, `${what}: letters, digits, _ and -, not starting with a digit`);

/**
 * A `when` written in TOML, where functions cannot be: the answer contains a
 * text, equals one (both optionally ignoring case), or matches a regular
 * expression (`flags` from `imsu`).
 */
export const whenConfigSchema = z.union([
  z.object({ contains: z.string().min(1), ignore_case: z.boolean().optional() }).strict(),
  z.object({ equals: z.string(), ignore_case: z.boolean().optional() }).strict(),
  z
    .object({
      matches: z.string().min(1).max(500),
      flags: z
        .string()
        .regex(/^[imsu]*$/)
        .optional(),
    })
    .strict()
    .refine(
      (when) => {
        try {
          new RegExp(when.matches, when.flags);
          return true;
        } catch {
          return false;
        }
      },
      { message: 'not a valid regular expression' },
    ),
]);

/** A TOML `when`. */
export type WhenConfig = z.infer<typeof whenConfigSchema>;

const budgetSchema = z
  .object({
    max_turns: z.number().int().positive().optional(),
    max_tool_calls: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    max_cost_usd: z.number().positive().optional(),
  })
  .strict();

const agentSchema = z
  .object({
    /** The agent's system prompt. */
    prompt: z.string().min(1),
    /** A tier of `[runtime.llm]` (default fast)… */
    tier: z.enum(['fast', 'middle', 'wise']).optional(),
    /** …or a model of its own, a table shaped like `[runtime.llm.<tier>]`. */
    llm: tierConfigSchema.optional(),
    /** Executors by name; left out, every read-only one; one with side effects only when named. */
    executors: z.array(z.string().min(1)).optional(),
    budget: budgetSchema.optional(),
  })
  .strict()
  .refine((agent) => !(agent.tier && agent.llm), { message: 'give tier or llm, not both' });

const edgeSchema = z.object({ from: z.string(), to: z.string(), when: whenConfigSchema.optional() }).strict();

/** One `[agents.<name>]` graph. */
export const agentGraphConfigSchema = z
  .object({
    description: z.string().optional(),
    entry: z.string(),
    exits: z.array(z.string()).default([]),
    max_agent_visits: z.number().int().positive().optional(),
    agent: z.record(name('an agent id'), agentSchema).refine((agents) => Object.keys(agents).length > 0, {
      message: 'a graph needs at least one [agents.<name>.agent.<id>] table',
    }),
    edge: z.array(edgeSchema).default([]),
  })
  .strict();

/** The `[agents]` section of `metnos.toml`: agent graphs by name. */
export const agentsConfigSchema = z.record(name('a graph name'), agentGraphConfigSchema);

/** The parsed `[agents]` section. */
export type AgentsConfig = z.infer<typeof agentsConfigSchema>;
/** One parsed graph. */
export type AgentGraphConfig = z.infer<typeof agentGraphConfigSchema>;

/**
 * A TOML `when` as the predicate the runtime calls.
 *
 * @example
 * whenPredicate({ contains: 'billing', ignore_case: true })('Billing question'); // true
 */
export function whenPredicate(when: WhenConfig): (answer: string) => boolean {
  if ('matches' in when) {
    const pattern = new RegExp(when.matches, when.flags);
    return (answer) => pattern.test(answer);
  }
  const fold = (text: string) => (when.ignore_case ? text.toLowerCase() : text);
  if ('contains' in when) {
    const needle = fold(when.contains);
    return (answer) => fold(answer).includes(needle);
  }
  const expected = fold(when.equals);
  return (answer) => fold(answer).trim() === expected.trim();
}

/** What {@link agentGraphFromConfig} builds models from. */
export interface AgentGraphModels {
  /** The tiers of `[runtime.llm]` (`createTiers`). */
  tiers: Record<Tier, ChatModel>;
  /** Options for an agent's own `llm` table (transport, environment, prices). */
  options?: TierOptions;
}

/**
 * Turns one `[agents.<name>]` graph into the agents and the plan the runtime
 * takes: each agent's model is a tier of `[runtime.llm]` or its own `llm`
 * table, `when` tables become predicates, budgets take their TOML names.
 *
 * @example
 * const graph = agentsConfigSchema.parse(toml.agents).triage!;
 * const { agents, plan } = agentGraphFromConfig('triage', graph, { tiers });
 * const result = await createAgentRuntime({ agents, executors }).run({ goal, plan });
 */
export function agentGraphFromConfig(
  graphName: string,
  graph: AgentGraphConfig,
  models: AgentGraphModels,
): { agents: AgentDefinition[]; plan: HandoffPlan } {
  const agents = Object.entries(graph.agent).map(([id, agent]): AgentDefinition => {
    const field = `agents.${graphName}.agent.${id}`;
    const provider = agent.llm
      ? createModelFromConfig(agent.llm, { ...models.options, field: `${field}.llm` })
      : models.tiers[agent.tier ?? 'fast'];
    const budget = agent.budget;
    return {
      id,
      systemPrompt: agent.prompt,
      provider,
      ...(agent.executors ? { executors: agent.executors } : {}),
      ...(budget
        ? {
            budget: {
              maxTurns: budget.max_turns,
              maxToolCalls: budget.max_tool_calls,
              maxTokens: budget.max_tokens,
              maxCostUsd: budget.max_cost_usd,
            },
          }
        : {}),
    };
  });
  const known = new Set(agents.map((agent) => agent.id));
  const need = (id: string, field: string) => {
    if (!known.has(id))
      throw new AgentConfigError({
        field: `agents.${graphName}.${field}`,
        message: `[agents.${graphName}] ${field}: "${id}" is not an agent of this graph`,
      });
  };
  need(graph.entry, 'entry');
  const edges = graph.edge.map((edge, index): HandoffEdge => {
    need(edge.from, `edge[${index}].from`);
    need(edge.to, `edge[${index}].to`);
    return { from: edge.from, to: edge.to, ...(edge.when ? { when: whenPredicate(edge.when) } : {}) };
  });
  for (const [index, exit] of graph.exits.entries()) need(exit, `exits[${index}]`);
  return {
    agents,
    plan: {
      entry: graph.entry,
      edges,
      exits: graph.exits,
      ...(graph.max_agent_visits ? { maxAgentVisits: graph.max_agent_visits } : {}),
    },
  };
}
