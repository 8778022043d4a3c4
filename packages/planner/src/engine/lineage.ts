import { createHash } from 'node:crypto';
import type { ChatModel, ChatRequest, ChatResponse } from '../model.ts';
import type { TurnBudget } from './budget.ts';
import { canonicalJson } from './plan.ts';
import { inSpan } from './telemetry.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * One model call of a turn, as seed 003 asks it captured: which model
 * (provider, id, tier), the prompt revision (hash of the system prompt),
 * the parameters and seed, the hash of the whole request, and the answer —
 * what replay uses instead of calling the model again.
 */
export interface ModelCallRecord {
  index: number;
  tier: 'fast' | 'middle' | 'wise';
  provider: string;
  model: string;
  promptRevision: string;
  parameters: { temperature?: number; seed?: number; maxTokens?: number; think?: boolean };
  requestHash: string;
  response?: Pick<ChatResponse, 'text' | 'toolCalls' | 'usage' | 'costUsd' | 'finishReason'>;
  error?: string;
  /** Set when an executor asked for the call through the `model` host service: which one, in which step call. */
  brokered?: { executor: string; traceId: string };
}

/** The sampling parameters the engine asks of every model call unless the caller set them. */
export interface ModelDefaults {
  temperature?: number;
  seed?: number;
}

/** The hash of a request as the model would see it (system prompt, messages, tools, parameters). */
export function requestHashOf(request: ChatRequest): string {
  const { signal: _signal, timeoutMs: _timeout, ...rest } = request;
  return sha256(canonicalJson(rest));
}

/**
 * Wraps a model so each call is counted, charged to the turn's budget
 * (refused with `BudgetExhausted` when spent), recorded with its lineage and
 * traced as a `metnos.model.call` span (ids, tier, token counts; no prompt, no answer).
 */
export function recordingModel(
  model: ChatModel,
  tier: ModelCallRecord['tier'],
  context: {
    calls: ModelCallRecord[];
    counter: { calls: number };
    budget?: TurnBudget;
    defaults?: ModelDefaults;
    /** The executor call that asked, for a brokered call (`model` host service). */
    brokered?: ModelCallRecord['brokered'];
  },
): ChatModel {
  return {
    id: model.id,
    provider: model.provider,
    ...(model.tier ? { tier: model.tier } : {}),
    async generate(given) {
      const refused = context.budget?.checkModel();
      if (refused) throw refused;
      const request: ChatRequest = {
        ...given,
        ...(given.temperature === undefined && context.defaults?.temperature !== undefined
          ? { temperature: context.defaults.temperature }
          : {}),
        ...(given.seed === undefined && context.defaults?.seed !== undefined
          ? { seed: context.defaults.seed }
          : {}),
      };
      context.counter.calls++;
      const record: ModelCallRecord = {
        index: context.calls.length,
        tier,
        provider: model.provider,
        model: model.id,
        promptRevision: sha256(request.system).slice(0, 16),
        parameters: JSON.parse(
          JSON.stringify({
            temperature: request.temperature,
            seed: request.seed,
            maxTokens: request.maxTokens,
            think: request.think,
          }),
        ),
        requestHash: requestHashOf(request),
        ...(context.brokered ? { brokered: { ...context.brokered } } : {}),
      };
      context.calls.push(record);
      try {
        const response = await inSpan(
          'metnos.model.call',
          {
            'metnos.model.provider': model.provider,
            'metnos.model.id': model.id,
            'metnos.model.tier': tier,
            'metnos.model.prompt_revision': record.promptRevision,
            'metnos.model.call_index': record.index,
          },
          async (span) => {
            const response = await model.generate(request);
            span.setAttributes({
              'metnos.model.input_tokens': response.usage?.inputTokens ?? 0,
              'metnos.model.output_tokens': response.usage?.outputTokens ?? 0,
              ...(response.finishReason === undefined
                ? {}
                : { 'metnos.model.finish_reason': String(response.finishReason) }),
            });
            return response;
          },
        );
        context.budget?.chargeModel(response);
        record.response = {
          text: response.text,
          toolCalls: response.toolCalls,
          usage: response.usage,
          ...(response.costUsd === undefined ? {} : { costUsd: response.costUsd }),
          ...(response.finishReason === undefined ? {} : { finishReason: response.finishReason }),
        };
        return response;
      } catch (error) {
        record.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        throw error;
      }
    },
  };
}
