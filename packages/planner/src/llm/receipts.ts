import { type ReceiptSink, type ReceiptValue, receiptDigest } from '@metnos/executor-sdk';
import { errorClassOf } from '../engine/telemetry.ts';
import type { ChatModel, ChatRequest, ChatResponse } from './types.ts';

const RECEIPTED = Symbol.for('metnos.planner.receiptedModel');

/** Labels a model call's receipt carries beside the model's own names. */
export interface ModelReceiptLabels {
  /** The agent of a multi-agent run. */
  agent?: string;
  /** The run (or turn) the call belongs to. */
  run?: string;
}

/** True when `model` already writes receipts (so it is not wrapped twice). */
export function isReceipted(model: ChatModel): boolean {
  return (model as unknown as Record<symbol, unknown>)[RECEIPTED] === true;
}

/** The digest of what was asked: the system prompt, the conversation and the offered tools. */
function requestDigest(request: ChatRequest): Promise<string> {
  return receiptDigest({ system: request.system, messages: request.messages, tools: request.tools });
}

/**
 * Wraps a model so every call appends a signed receipt to the chain: the
 * provider, model, tier and labels, digests of the request and the answer,
 * tokens, cost, finish reason, latency and the outcome (`ok` or the error's
 * class) — never a prompt, an answer or an argument. Fails closed: a chain
 * that cannot take a receipt stops the call before it is made (its
 * `ReceiptError` is thrown), and an answer whose receipt cannot be written is
 * not handed on. A model already wrapped is returned as it is.
 *
 * @example
 * const tiers = createTiers(config.runtime.llm);
 * const fast = withReceipts(tiers.fast, chain); // chain: createReceiptChain(...) from @metnos/executor-sdk
 */
export function withReceipts(
  model: ChatModel,
  receipts: ReceiptSink,
  labels: ModelReceiptLabels = {},
): ChatModel {
  if (isReceipted(model)) return model;
  const receiptOf = async (
    request: ChatRequest,
    started: number,
    outcome: { response: ChatResponse } | { error: unknown },
  ) => {
    const response = 'response' in outcome ? outcome.response : undefined;
    const data: Record<string, ReceiptValue> = {
      provider: model.provider.slice(0, 64),
      model: model.id.slice(0, 128),
      tier: model.tier ?? null,
      agent: labels.agent?.slice(0, 128) ?? null,
      run: labels.run?.slice(0, 128) ?? null,
      request: await requestDigest(request),
      response: response ? await receiptDigest({ text: response.text, toolCalls: response.toolCalls }) : null,
      tool_calls: response?.toolCalls.length ?? 0,
      input_tokens: response?.usage.inputTokens ?? 0,
      output_tokens: response?.usage.outputTokens ?? 0,
      cost_usd: response?.costUsd ?? null,
      finish_reason: response?.finishReason ? String(response.finishReason).slice(0, 32) : null,
      latency_ms: Math.round(response?.latencyMs ?? performance.now() - started),
      outcome: 'error' in outcome ? errorClassOf(outcome.error).slice(0, 128) : 'ok',
    };
    await receipts.append({ kind: 'model', data });
  };
  const wrapped: ChatModel = {
    id: model.id,
    provider: model.provider,
    ...(model.tier ? { tier: model.tier } : {}),
    async generate(request) {
      await receipts.check();
      const started = performance.now();
      let response: ChatResponse;
      try {
        response = await model.generate(request);
      } catch (error) {
        await receiptOf(request, started, { error });
        throw error;
      }
      await receiptOf(request, started, { response });
      return response;
    },
  };
  const destroy = (model as { destroy?: () => unknown }).destroy;
  if (typeof destroy === 'function') Object.assign(wrapped, { destroy: () => destroy.call(model) });
  Object.defineProperty(wrapped, RECEIPTED, { value: true });
  return wrapped;
}
