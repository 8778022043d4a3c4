import type { ReceiptSink } from '@metnos/executor-sdk';
import type { Span } from '@opentelemetry/api';
import { errorClassOf } from '../engine/telemetry.ts';
import type { ChatMessage, ChatResponse } from '../llm/types.ts';
import type { AgentBudgetTracker, Exhaustion } from './budget.ts';
import type { EventSink } from './events.ts';
import type { ScopedMemory } from './memory.ts';
import { runAgentToolCall } from './tool-call.ts';
import type { AgentTool } from './tools.ts';
import type { AgentDefinition, AgentExecutors, AgentProvider, AgentVisit } from './types.ts';

/** Everything one visit of an agent needs. */
export interface VisitSettings {
  agent: AgentDefinition;
  /** The agent's provider as the run drives it (wrapped for receipts when the runtime has a chain). */
  provider: AgentProvider;
  tools: Map<string, AgentTool>;
  budget: AgentBudgetTracker;
  runId: string;
  goal: string;
  /** The first user message of the visit: the goal, and the answer handed over. */
  input: string;
  visit: number;
  signal: AbortSignal;
  sink: EventSink;
  span: Span;
  memory: ScopedMemory;
  executors?: AgentExecutors;
  receipts?: ReceiptSink;
  maxObservationChars: number;
}

/**
 * Runs one visit of an agent: a model turn, its tool calls, the next turn,
 * until the model answers without calling a tool, a cap is hit, the run is
 * aborted or the model fails. A cap ends the visit with the last text the
 * model wrote (`budget_exhausted`, the reason typed), which the graph treats
 * as an answer. Every ending is data; nothing here throws on what a model or
 * a tool does.
 *
 * @example
 * const visit = await runVisit(settings); // { status: 'completed', finalAnswer: '…', turns: 2, … }
 */
export async function runVisit(settings: VisitSettings): Promise<AgentVisit> {
  const { agent, budget, sink, span, signal } = settings;
  const agentId = agent.id;
  const before = { ...budget.spent };
  const history: ChatMessage[] = [{ role: 'user', content: settings.input }];
  const specs = [...settings.tools.values()].map((tool) => tool.spec);
  let lastText = '';
  let toolNumber = 0;
  const tokens = { input: 0, output: 0 };
  let costKnown = true;

  const end = (status: AgentVisit['status'], extra: Partial<AgentVisit> = {}): AgentVisit => ({
    agentId,
    visit: settings.visit,
    status,
    finalAnswer: lastText,
    turns: budget.spent.turns - before.turns,
    toolCalls: budget.spent.toolCalls - before.toolCalls,
    tokens: { input: tokens.input, output: tokens.output },
    costUsd: costKnown ? budget.spent.costUsd - before.costUsd : undefined,
    ...extra,
  });
  const exhausted = (stop: Exhaustion) => {
    sink.emit(
      'agent.budget.exhausted',
      {
        agentId,
        data: { reason: stop.reason, limit: stop.limit, spent: stop.spent },
      },
      span,
    );
    return end('budget_exhausted', { budgetExhausted: stop.reason });
  };

  for (;;) {
    if (signal.aborted) return end('aborted');
    const stop = budget.beforeTurn();
    if (stop) return exhausted(stop);
    let response: ChatResponse;
    const started = performance.now();
    try {
      response = await settings.provider.generate({
        system: agent.systemPrompt,
        messages: history,
        tools: specs,
        signal,
      });
    } catch (error) {
      if (signal.aborted) return end('aborted');
      const errorClass = errorClassOf(error);
      sink.emit(
        'agent.llm.error',
        {
          agentId,
          data: {
            turn: budget.spent.turns + 1,
            error_class: errorClass,
            message: String((error as Error)?.message ?? error).slice(0, 300),
          },
        },
        span,
      );
      return end('failed', { errorClass });
    }
    budget.chargeTurn(response);
    tokens.input += response.usage.inputTokens;
    tokens.output += response.usage.outputTokens;
    if (response.costUsd === undefined) costKnown = false;
    lastText = response.text;
    sink.emit(
      'agent.llm.turn',
      {
        agentId,
        data: {
          turn: budget.spent.turns,
          provider: settings.provider.provider,
          model: settings.provider.id,
          input_tokens: response.usage.inputTokens,
          output_tokens: response.usage.outputTokens,
          cost_usd: response.costUsd ?? null,
          tool_calls: response.toolCalls.length,
          finish_reason: response.finishReason === undefined ? null : String(response.finishReason),
          latency_ms: Math.round(response.latencyMs ?? performance.now() - started),
        },
      },
      span,
    );
    if (response.toolCalls.length === 0) return end('completed');
    history.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
    for (const call of response.toolCalls) {
      if (signal.aborted) return end('aborted');
      const refused = budget.chargeToolCall();
      if (refused) return exhausted(refused);
      let content: string;
      try {
        content = await runAgentToolCall({ ...settings, agentId, number: ++toolNumber }, call);
      } catch (error) {
        if (signal.aborted) return end('aborted');
        sink.emit(
          'agent.tool.failed',
          {
            agentId,
            data: { tool: null, kind: null, error_class: errorClassOf(error) },
            detail: String((error as Error)?.message ?? error).slice(0, 1000),
          },
          span,
        );
        return end('failed', { errorClass: errorClassOf(error) });
      }
      if (signal.aborted) return end('aborted');
      history.push({ role: 'tool', toolCallId: call.id, toolName: String(call.name).slice(0, 64), content });
    }
  }
}
