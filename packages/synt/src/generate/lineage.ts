import { createHash } from 'node:crypto';
import type { AskModel, StageName, SyntModel } from './types.ts';

/** One model call of a run, as the store keeps it. */
export interface ModelCallRecord {
  runId: string;
  stage: StageName;
  provider: string;
  model: string;
  tier: 'wise';
  /** SHA-256 (hex) of the system prompt and the message as sent. */
  promptHash: string;
  answer?: string;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  at: string;
}

/** The hash a call's lineage names its prompt by. */
export function promptHashOf(system: string, user: string): string {
  return createHash('sha256').update(system).update('\u0000').update(user).digest('hex');
}

/** The longest answer kept in the lineage; a longer one is kept cut, and the stage refuses it anyway. */
const MAX_ANSWER = 256 * 1024;

/**
 * The wise tier as one stage asks it: every call is recorded — provider,
 * model, tier, prompt hash and the answer, or the error — before the answer
 * goes back to the stage. Temperature 0, so the same prompt tends to the
 * same draft.
 *
 * @example
 * const ask = recordedAsk(model, (call) => store.recordModelCall(call), { runId, stage: 'specification', clock });
 * const text = await ask(SYSTEM, motivationText);
 */
export function recordedAsk(
  model: SyntModel,
  record: (call: ModelCallRecord) => void,
  where: { runId: string; stage: StageName; clock: () => Date },
): AskModel {
  return async (system, user) => {
    const base = {
      runId: where.runId,
      stage: where.stage,
      provider: model.provider,
      model: model.id,
      tier: 'wise' as const,
      promptHash: promptHashOf(system, user),
    };
    try {
      const response = await model.generate({
        system,
        messages: [{ role: 'user', content: user }],
        tools: [],
        temperature: 0,
      });
      const text = typeof response.text === 'string' ? response.text : '';
      record({
        ...base,
        answer: text.slice(0, MAX_ANSWER),
        inputTokens: response.usage?.inputTokens,
        outputTokens: response.usage?.outputTokens,
        at: where.clock().toISOString(),
      });
      return text;
    } catch (error) {
      record({
        ...base,
        error: (error instanceof Error ? error.message : String(error)).slice(0, 500),
        at: where.clock().toISOString(),
      });
      throw error;
    }
  };
}
