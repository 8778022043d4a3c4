import { homedir } from 'node:os';
import { type ReceiptSink, receiptDigest } from '@metnos/executor-sdk';
import type { Span } from '@opentelemetry/api';
import { errorClassOf } from '../engine/telemetry.ts';
import { checkToolCall, TOOL_UNAVAILABLE } from '../llm/tool-args.ts';
import type { ToolCall } from '../llm/types.ts';
import { executorContract } from '../review.ts';
import { ToolArgError } from './errors.ts';
import type { EventSink } from './events.ts';
import type { ScopedMemory } from './memory.ts';
import { type AgentTool, toolResultText } from './tools.ts';
import type { AgentExecutors } from './types.ts';

/** What one agent's tool calls need from its visit. */
export interface ToolCallScope {
  agentId: string;
  runId: string;
  goal: string;
  tools: Map<string, AgentTool>;
  signal: AbortSignal;
  sink: EventSink;
  span: Span;
  memory: ScopedMemory;
  executors?: AgentExecutors;
  receipts?: ReceiptSink;
  maxObservationChars: number;
  /** The call's number in the agent's visit, for trace ids. */
  number: number;
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}… [cut at ${limit} characters]` : text;
}

/** A custom tool's call: hardened args in, its result (or its failure, mapped) out. */
async function runCustom(
  scope: ToolCallScope,
  tool: Extract<AgentTool, { kind: 'custom' }>,
  args: Record<string, unknown>,
): Promise<string> {
  const { sink, span, agentId } = scope;
  // fail closed, as the invoker does: a call the chain cannot receipt is not made
  await scope.receipts?.check();
  const started = performance.now();
  let content: string;
  let outcome = 'ok';
  try {
    const value = await tool.tool.invoke(args, {
      signal: scope.signal,
      agentId,
      runId: scope.runId,
      memory: scope.memory,
    });
    content = toolResultText(value);
    sink.emit(
      'agent.tool.invoke',
      {
        agentId,
        data: { tool: tool.spec.name, kind: 'custom', duration_ms: Math.round(performance.now() - started) },
      },
      span,
    );
  } catch (error) {
    outcome = errorClassOf(error);
    const message = (error as Error)?.message ?? String(error);
    // a ToolArgError's detail is for operators; any other error is the tool's own word to the model
    content = ToolArgError.isInstance(error) ? TOOL_UNAVAILABLE : `error: ${cut(message, 1000)}`;
    sink.emit(
      'agent.tool.failed',
      {
        agentId,
        data: { tool: tool.spec.name, kind: 'custom', error_class: outcome },
        detail: cut(message, 1000),
      },
      span,
    );
  }
  await scope.receipts?.append({
    kind: 'tool',
    data: {
      tool: tool.spec.name,
      agent: agentId,
      run: scope.runId,
      args: await receiptDigest(args),
      result: await receiptDigest(content),
      outcome,
    },
  });
  return content;
}

/** An executor's call: the vaglio's review, then the invoker (which signs its own receipt). */
async function runExecutor(
  scope: ToolCallScope,
  tool: Extract<AgentTool, { kind: 'executor' }>,
  args: Record<string, unknown>,
): Promise<string> {
  const { sink, span, agentId } = scope;
  const executors = scope.executors!;
  const name = tool.executor.name;
  const failed = (errorClass: string, message: string) => {
    sink.emit(
      'agent.tool.failed',
      { agentId, data: { tool: name, kind: 'executor', error_class: errorClass }, detail: message },
      span,
    );
    return JSON.stringify({ ok: false, error: { class: errorClass, message } });
  };
  const verdict = await executors.reviewer.evaluate(
    {
      executor: executorContract(tool.executor),
      args,
      request: scope.goal,
      stepIndex: scope.number,
      turnId: scope.runId,
    },
    { home: executors.home ?? homedir(), workspace: executors.workspace },
  );
  if (!verdict.approved) {
    const granted =
      verdict.blocked_by === 'confirmation' &&
      (await executors.approved?.({ agentId, tool: name, args })) === true;
    if (!granted)
      return verdict.blocked_by === 'confirmation'
        ? failed('NeedsApproval', `${name} needs the person's approval before it runs; it did not run`)
        : failed('Blocked', `blocked by the ${verdict.blocked_by}: ${verdict.reason}`);
  }
  const started = performance.now();
  const result = await executors.invoker.invoke(name, args, {
    workspace: executors.workspace,
    caller: { kind: 'planner', turnId: scope.runId },
    turnId: scope.runId,
    traceId: `${scope.runId}:${agentId}:${scope.number}`,
    config: executors.config?.[name],
    signal: scope.signal,
  });
  const { isolation: _isolation, ...observation } = result as typeof result & { isolation?: unknown };
  if (!result.ok) return failed(result.error.class, result.error.message);
  sink.emit(
    'agent.tool.invoke',
    {
      agentId,
      data: { tool: name, kind: 'executor', duration_ms: Math.round(performance.now() - started) },
    },
    span,
  );
  return cut(JSON.stringify(observation), scope.maxObservationChars);
}

/**
 * Runs one tool call of a model and returns what the model is told. The name
 * must be among the agent's tools and the arguments must harden (prototype
 * keys dropped, depth ≤ 64, an object); otherwise the model gets only
 * "tool unavailable", never the name it asked for, and the event keeps the
 * detail (`agent.tool.rejected` for an unknown name, `agent.tool.failed` for
 * bad arguments).
 *
 * @example
 * const content = await runAgentToolCall(scope, call);
 */
export async function runAgentToolCall(scope: ToolCallScope, call: ToolCall): Promise<string> {
  const { sink, span, agentId } = scope;
  const checked = checkToolCall(call, scope.tools.keys());
  if (!checked.ok) {
    if (checked.code === 'unknown_tool') {
      sink.emit(
        'agent.tool.rejected',
        { agentId, data: { code: checked.code }, detail: checked.detail },
        span,
      );
    } else {
      const tool = String(call.name);
      sink.emit(
        'agent.tool.failed',
        {
          agentId,
          data: { tool, kind: scope.tools.get(tool)!.kind, error_class: 'ToolArgError', code: checked.code },
          detail: checked.detail,
        },
        span,
      );
    }
    return checked.message;
  }
  const tool = scope.tools.get(checked.name)!;
  return tool.kind === 'custom'
    ? runCustom(scope, tool, checked.args)
    : runExecutor(scope, tool, checked.args);
}
