import { join } from 'node:path';
import { createTiers, ProviderConfigError } from '@metnos/planner';
import {
  AgentConfigError,
  type AgentRunResult,
  agentGraphFromConfig,
  createAgentRuntime,
  createSqliteRuntimeMemory,
} from '@metnos/planner/agents';
import type { Runtime } from './commands/ask.ts';
import { DEFAULT_LLM } from './config.ts';
import { CliFailure, type CliIo } from './output.ts';

/** Where the agents' memory (`shared`, `agent:{id}`, `global`) lives in the data folder. */
export const AGENTS_STORE = 'agents.sqlite';

/** How an agent's executor call that needs the person's confirmation is answered. */
export type AgentApproval = (call: {
  agentId: string;
  tool: string;
  args: unknown;
}) => Promise<boolean> | boolean;

/**
 * The agent graphs of `metnos.toml` as runnable runtimes over this place:
 * the tiers of `[runtime.llm]` (or an agent's own `llm`), the place's
 * catalog, sandboxed invoker and vaglio, the receipt chain, and the agents'
 * memory in `<data>/agents.sqlite`. Each `run` builds a fresh runtime for one
 * goal and destroys it after.
 *
 * @example
 * const graphs = await openAgentGraphs(context, { approved: () => false });
 * const result = await graphs.run('triage', 'How much is invoice 42?');
 */
export async function openAgentGraphs(
  context: Runtime,
  options: { approved?: AgentApproval; parts?: Awaited<ReturnType<Runtime['execution']>> } = {},
) {
  const graphs = context.config.agents ?? {};
  const parts = options.parts ?? (await context.execution());
  const memory = createSqliteRuntimeMemory({ path: join(context.data, AGENTS_STORE) });
  const names = () => Object.keys(graphs);
  return {
    names,
    async run(
      name: string,
      goal: string,
      run: { signal?: AbortSignal; onEvent?: Parameters<typeof createAgentRuntime>[0]['onEvent'] } = {},
    ): Promise<AgentRunResult> {
      const graph = graphs[name];
      if (!graph)
        throw new CliFailure(
          `no agent graph "${name}" in metnos.toml${names().length > 0 ? ` (there are: ${names().join(', ')})` : ' (add an [agents.<name>] section)'}`,
          2,
        );
      let built: ReturnType<typeof agentGraphFromConfig>;
      let runtime: ReturnType<typeof createAgentRuntime>;
      try {
        // raw tiers: the runtime wraps each agent's model for receipts, labelled with the agent
        const tiers = createTiers(context.config.runtime.llm ?? DEFAULT_LLM, { env: process.env });
        built = agentGraphFromConfig(name, graph, { tiers, options: { env: process.env } });
        runtime = createAgentRuntime({
          agents: built.agents,
          executors: {
            catalog: parts.catalog,
            invoker: parts.invoker,
            reviewer: parts.vaglio,
            workspace: context.place.workspace,
            config: context.config.executors?.config,
            ...(options.approved ? { approved: options.approved } : {}),
          },
          memory,
          receipts: parts.receipts,
          ...(run.onEvent ? { onEvent: run.onEvent } : {}),
        });
      } catch (error) {
        if (AgentConfigError.isInstance(error) || ProviderConfigError.isInstance(error))
          throw new CliFailure(`[agents.${name}] in metnos.toml: ${error.message}`, 2);
        throw error;
      }
      try {
        return await runtime.run({ goal, plan: built.plan, ...(run.signal ? { signal: run.signal } : {}) });
      } finally {
        await runtime.destroy();
      }
    },
    close: () => memory.close(),
  };
}

/** Prints an agent run for `metnos ask --agents`; returns the exit code. */
export function printAgentRun(io: CliIo, result: AgentRunResult, options: { json: boolean }): number {
  const completed = result.status === 'completed';
  if (options.json) {
    io.out(JSON.stringify(result, null, 2));
    return completed ? 0 : 1;
  }
  const turns = result.visits.reduce((sum, visit) => sum + visit.turns, 0);
  const stopped = result.visits
    .filter((visit) => visit.budgetExhausted)
    .map((visit) => `${visit.agentId} stopped on its ${visit.budgetExhausted} budget`);
  const say = completed ? io.out : io.err;
  if (result.finalAnswer) say(result.finalAnswer);
  if (!completed)
    io.err(
      result.status === 'aborted'
        ? 'the run was stopped before it finished'
        : `the run failed in ${result.visits.at(-1)?.agentId ?? 'its first agent'} (${result.visits.at(-1)?.errorClass ?? 'see --json'})`,
    );
  say(
    `— agents: ${result.visits.map((visit) => visit.agentId).join(' → ')} · ${result.ending}${stopped.length > 0 ? ` (${stopped.join('; ')})` : ''} · ${turns} model turn${turns === 1 ? '' : 's'} · run ${result.runId}`,
  );
  return completed ? 0 : 1;
}
