import { keptArgs } from '../hardening.ts';
import type { ChatResponse, ToolCall } from '../model.ts';
import { account, finishTurn, type LoopContext, lastUsefulText, stopIfOverBudget } from './context.ts';
import { BASE_PROMPT, callModel, describeModelFailure, offeredTools } from './model-call.ts';
import { rankWithHistory } from './passages.ts';
import { runToolCall } from './tool-call.ts';
import type { TurnResult, TurnState } from './types.ts';

/** Hands an observation back to the model as the answer to its tool call. */
function answerCall(state: TurnState, call: ToolCall, observation: Record<string, unknown>): void {
  state.history.push({
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: JSON.stringify(observation),
  });
}

const stoppedAfterCap = (context: LoopContext, state: TurnState) =>
  finishTurn(
    context,
    state,
    'cap_steps',
    `I stopped after ${context.capSteps} steps without a final answer. ${lastUsefulText(state)}`.trim(),
  );

/** Runs the call that waited for approval, then the calls the model made beside it. */
async function resumeWaiting(
  context: LoopContext,
  state: TurnState,
  approved: boolean,
  signal?: AbortSignal,
): Promise<TurnResult | undefined> {
  const { call, rest } = state.waiting!;
  const outcome = await runToolCall(context, state, call, approved, signal);
  state.waiting = undefined;
  if ('finalKind' in outcome) return outcome;
  answerCall(state, call, outcome.observation);
  for (const sibling of rest) {
    const next = await runToolCall(context, state, sibling, false, signal);
    if ('finalKind' in next) return next;
    answerCall(state, sibling, next.observation);
  }
  return undefined;
}

/** Runs the tool calls of one model response in order; a call that pauses keeps the rest for later. */
async function runCalls(
  context: LoopContext,
  state: TurnState,
  response: ChatResponse,
  signal?: AbortSignal,
): Promise<TurnResult | undefined> {
  const queue = response.toolCalls;
  for (let index = 0; index < queue.length; index++) {
    const call = queue[index]!;
    if (state.steps.length >= context.capSteps) return stoppedAfterCap(context, state);
    const outcome = await runToolCall(context, state, call, false, signal);
    if ('finalKind' in outcome) {
      if (outcome.finalKind === 'pending_approval') {
        state.waiting = { call, rest: queue.slice(index + 1), approvalId: outcome.pending!.approvalId };
      }
      return outcome;
    }
    const lastStep = state.steps.at(-1)!;
    lastStep.tokens_in = index === 0 ? response.usage.inputTokens : 0;
    lastStep.tokens_out = index === 0 ? response.usage.outputTokens : 0;
    answerCall(state, call, outcome.observation);
  }
  return undefined;
}

/**
 * Local mode (ReAct): one model call per step with native tool calls, until
 * the model answers in text or a cap, a budget or an approval stops it.
 */
export async function localLoop(
  context: LoopContext,
  state: TurnState,
  signal?: AbortSignal,
  resumeApproved = false,
): Promise<TurnResult> {
  const { settings } = context;
  const model = context.models[settings.tiers?.local ?? 'fast'];
  const system = [BASE_PROMPT, settings.systemPrompt].filter(Boolean).join('\n\n');
  if (state.waiting) {
    const ended = await resumeWaiting(context, state, resumeApproved, signal);
    if (ended) return ended;
  }
  for (;;) {
    const stopped = stopIfOverBudget(context, state);
    if (stopped) return stopped;
    if (state.steps.length >= context.capSteps) return stoppedAfterCap(context, state);
    rankWithHistory(context, state);
    let response: ChatResponse;
    try {
      response = await callModel(context, model, state, offeredTools(context, state), system, signal);
    } catch (error) {
      return finishTurn(context, state, 'error', describeModelFailure(error));
    }
    account(state, response);
    if (response.toolCalls.length === 0) {
      state.history.push({ role: 'assistant', content: response.text });
      const text = response.text.trim();
      return finishTurn(context, state, 'answer', text || '(the model gave an empty answer)');
    }
    state.history.push({
      role: 'assistant',
      content: response.text,
      toolCalls: response.toolCalls.map((call) => ({ ...call, args: keptArgs(call.args) })),
    });
    const ended = await runCalls(context, state, response, signal);
    if (ended) return ended;
  }
}
