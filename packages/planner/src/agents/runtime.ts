import { randomUUID } from 'node:crypto';
import { createHlc } from '@metnos/executor-sdk';
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { errorClassOf, inSpan } from '../engine/telemetry.ts';
import { isReceipted, withReceipts } from '../llm/receipts.ts';
import { runVisit } from './agent-loop.ts';
import { type AgentBudgetTracker, createAgentBudget } from './budget.ts';
import { AgentConfigError } from './errors.ts';
import { createEventSink, type EventSink } from './events.ts';
import { type CheckedPlan, checkPlan, nextEdge } from './graph.ts';
import { createInMemoryRuntimeMemory, scopedMemory } from './memory.ts';
import { type AgentTool, agentTools, TOOL_NAME } from './tools.ts';
import type {
  AgentDefinition,
  AgentEvent,
  AgentRunOptions,
  AgentRunResult,
  AgentRuntimeSettings,
  AgentVisit,
  RunEnding,
} from './types.ts';

/** The longest tool observation a model is sent back when the settings do not say. */
export const DEFAULT_MAX_OBSERVATION_CHARS = 16_000;

function checkAgents(agents: readonly AgentDefinition[]): void {
  if (!Array.isArray(agents) || agents.length === 0)
    throw new AgentConfigError({ field: 'agents', message: 'a runtime needs at least one agent' });
  const seen = new Set<string>();
  for (const [index, agent] of agents.entries()) {
    const field = `agents[${index}]`;
    if (typeof agent?.id !== 'string' || !TOOL_NAME.test(agent.id) || agent.id.length > 64)
      throw new AgentConfigError({
        field: `${field}.id`,
        message: `${field}.id must match /^[a-zA-Z_][a-zA-Z0-9_-]*$/`,
      });
    if (seen.has(agent.id))
      throw new AgentConfigError({ field: `${field}.id`, message: `two agents are called ${agent.id}` });
    seen.add(agent.id);
    if (typeof agent.systemPrompt !== 'string')
      throw new AgentConfigError({
        field: `${field}.systemPrompt`,
        message: `agent ${agent.id} needs a system prompt`,
      });
    if (typeof agent.provider?.generate !== 'function')
      throw new AgentConfigError({
        field: `${field}.provider`,
        message: `agent ${agent.id} needs a provider (a ChatModel)`,
      });
  }
}

/** The first message of an agent entered by a handoff: the goal and the answer handed over. */
export function handoffInput(goal: string, from: string, answer: string): string {
  return `${goal}\n\nAgent "${from}" handed this over:\n${answer}`;
}

/** One run's walk through the plan, from its entry to its ending. */
async function walk(
  settings: AgentRuntimeSettings,
  parts: {
    plan: CheckedPlan;
    single: boolean;
    tools: Map<string, Map<string, AgentTool>>;
    runId: string;
    goal: string;
    signal: AbortSignal;
    sink: EventSink;
    span: Span;
  },
): Promise<{ ending: RunEnding; visits: AgentVisit[] }> {
  const { plan, runId, goal, sink, signal } = parts;
  const memory = settings.memory!;
  const budgets = new Map<string, AgentBudgetTracker>();
  const counts: Record<string, number> = {};
  const visits: AgentVisit[] = [];
  let current = plan.entry;
  let previous: string | undefined;
  let input = goal;
  for (;;) {
    const agent = settings.agents.find((candidate) => candidate.id === current)!;
    const count = counts[current] ?? 0;
    if (count >= plan.maxAgentVisits) {
      sink.emit(
        'agent.handoff.cycle',
        {
          agentId: current,
          data: { from: previous ?? null, to: current, visits: count, max_agent_visits: plan.maxAgentVisits },
        },
        parts.span,
      );
      return { ending: 'cycle', visits };
    }
    counts[current] = count + 1;
    const budget = budgets.get(current) ?? createAgentBudget(agent.budget);
    budgets.set(current, budget);
    const provider =
      settings.receipts && !isReceipted(agent.provider)
        ? withReceipts(agent.provider, settings.receipts, { agent: agent.id, run: runId })
        : agent.provider;
    const visit = await inSpan(
      'metnos.agent',
      { 'metnos.agent_id': agent.id, 'metnos.visit': count + 1 },
      async (span) => {
        const result = await runVisit({
          agent,
          provider,
          tools: parts.tools.get(agent.id)!,
          budget,
          runId,
          goal,
          input,
          visit: count + 1,
          signal,
          sink,
          span,
          memory: scopedMemory(memory, runId, agent.id),
          executors: settings.executors,
          receipts: settings.receipts,
          maxObservationChars: settings.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS,
        });
        span.setAttribute('metnos.visit_status', result.status);
        if (result.status === 'failed')
          span.setStatus({ code: SpanStatusCode.ERROR, message: result.errorClass });
        return result;
      },
    );
    visits.push(visit);
    await memory.set({ run: runId, scope: 'shared', key: `agent:${agent.id}:answer` }, visit.finalAnswer);
    if (visit.status === 'aborted') return { ending: 'aborted', visits };
    if (visit.status === 'failed') return { ending: 'failed', visits };
    if (parts.single) return { ending: 'single', visits };
    if (plan.exits.has(current)) return { ending: 'exit', visits };
    const next = nextEdge(plan, current, visit.finalAnswer, {
      from: current,
      visits: { ...counts },
      ...(visit.budgetExhausted ? { budgetExhausted: visit.budgetExhausted } : {}),
    });
    if (!next) return { ending: 'no_edge', visits };
    sink.emit(
      'agent.handoff.transition',
      {
        agentId: current,
        data: { from: current, to: next.edge.to, edge: next.index, visits: counts[next.edge.to] ?? 0 },
      },
      parts.span,
    );
    input = handoffInput(goal, current, visit.finalAnswer);
    previous = current;
    current = next.edge.to;
  }
}

/**
 * The multi-agent runtime: agents, each with its own provider, system
 * prompt, tools (executors of the catalog, read-only unless named, and
 * custom tools, hardened) and budget, run through a handoff graph. `run`
 * starts at the plan's entry (or runs the first agent alone without a plan),
 * follows the first edge whose `when(finalAnswer)` matches, ends at an exit,
 * where no edge matches, or when an agent would be entered more than
 * `maxAgentVisits` times (a cycle: `agent.handoff.cycle`). An agent stopped
 * by a cap counts as having answered. Each agent's answer is written to the
 * run's `shared` memory as `agent:{id}:answer`. Every model turn, tool call,
 * failure, rejection, handoff, cycle and budget exhaustion is an HLC-stamped
 * event (also an OpenTelemetry span event); with `receipts`, every model turn
 * and custom tool call appends a signed receipt (executors append theirs
 * through the invoker). `run`'s `signal` — and `destroy()` — abort in-flight
 * model and executor calls; `destroy()` then calls each provider's `destroy`,
 * reporting failures as `agent.provider.destroy.failed` events.
 *
 * @example
 * const runtime = createAgentRuntime({ agents: [router, specialist, actor], executors, receipts });
 * const result = await runtime.run({
 *   goal: 'Find the invoice from March and mail it to the accountant',
 *   plan: {
 *     entry: 'router',
 *     edges: [
 *       { from: 'router', to: 'specialist', when: (answer) => answer.includes('invoice') },
 *       { from: 'specialist', to: 'actor' },
 *     ],
 *     exits: ['actor'],
 *   },
 * });
 * await runtime.destroy();
 */
export function createAgentRuntime(settings: AgentRuntimeSettings) {
  checkAgents(settings.agents);
  const catalog = settings.executors?.catalog.executors();
  const tools = new Map(settings.agents.map((agent, index) => [agent.id, agentTools(agent, index, catalog)]));
  const resolved: AgentRuntimeSettings = {
    ...settings,
    memory: settings.memory ?? createInMemoryRuntimeMemory(),
  };
  const hlc = createHlc({ now: settings.now });
  const ids = settings.ids ?? randomUUID;
  const lifetime = new AbortController();
  const running = new Set<Promise<unknown>>();
  let destroyed = false;

  async function run(options: AgentRunOptions): Promise<AgentRunResult> {
    if (destroyed) throw new AgentConfigError({ field: 'runtime', message: 'this runtime was destroyed' });
    const plan = checkPlan(
      options.plan,
      settings.agents.map((agent) => agent.id),
    );
    const runId = options.runId ?? ids();
    const signal = AbortSignal.any([lifetime.signal, ...(options.signal ? [options.signal] : [])]);
    const sink = createEventSink({ hlc, runId, listeners: [settings.onEvent, options.onEvent] });
    const work = inSpan(
      'metnos.agents.run',
      { 'metnos.run_id': runId, 'metnos.entry': plan.entry },
      async (span) => {
        let walked: { ending: RunEnding; visits: AgentVisit[] };
        try {
          walked = await walk(resolved, {
            plan,
            single: !options.plan,
            tools,
            runId,
            goal: options.goal,
            signal,
            sink,
            span,
          });
        } catch (error) {
          // a `when` predicate or the memory adapter failed: the run fails, it does not throw
          sink.emit(
            'agent.run.failed',
            {
              data: {
                error_class: errorClassOf(error),
                message: String((error as Error)?.message ?? error).slice(0, 300),
              },
            },
            span,
          );
          walked = { ending: 'failed', visits: [] };
        }
        if (walked.ending === 'aborted')
          sink.emit('agent.run.aborted', { data: { visits: walked.visits.length } }, span);
        span.setAttribute('metnos.ending', walked.ending);
        return {
          runId,
          status:
            walked.ending === 'aborted' ? 'aborted' : walked.ending === 'failed' ? 'failed' : 'completed',
          ending: walked.ending,
          finalAnswer: walked.visits.at(-1)?.finalAnswer ?? '',
          visits: walked.visits,
          events: sink.events,
        } satisfies AgentRunResult;
      },
    );
    running.add(work);
    work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  }

  return {
    run,
    /** The run's memory as a caller reads it after the run (every scope of that run). */
    memory: (runId: string) => scopedMemory(resolved.memory!, runId),
    /**
     * Aborts the runs under way, waits for them to settle, calls each
     * provider's `destroy` once (a failure is an `agent.provider.destroy.failed`
     * event, never an exception), waits for the receipt chain to drain, and
     * returns the events it emitted.
     */
    async destroy(): Promise<AgentEvent[]> {
      destroyed = true;
      lifetime.abort();
      await Promise.allSettled([...running]);
      const sink = createEventSink({ hlc, runId: 'destroy', listeners: [settings.onEvent] });
      const providers = new Map<unknown, AgentDefinition>();
      for (const agent of settings.agents)
        if (!providers.has(agent.provider)) providers.set(agent.provider, agent);
      for (const [provider, agent] of providers) {
        try {
          await (provider as AgentDefinition['provider']).destroy?.();
        } catch (error) {
          sink.emit('agent.provider.destroy.failed', {
            agentId: agent.id,
            data: {
              provider: agent.provider.provider,
              model: agent.provider.id,
              error_class: errorClassOf(error),
              message: String((error as Error)?.message ?? error).slice(0, 300),
            },
          });
        }
      }
      const drain = (settings.receipts as { drain?: () => Promise<void> } | undefined)?.drain;
      if (typeof drain === 'function') await drain.call(settings.receipts);
      return sink.events;
    },
  };
}

/** A runtime made by {@link createAgentRuntime}. */
export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
