import type { HostService, HostServiceAnswer, HostServiceCall } from '@metnos/executor-sdk';
import type { ChatModel, ChatRequest } from '../model.ts';
import { BudgetExhausted } from './budget.ts';

/** Per-call caps of the `model` host service. */
export interface ModelServiceLimits {
  /** Completions one executor call may ask (default 4). */
  requests?: number;
  /** Model tokens, input and output, one executor call may use in all (default 8 000). */
  tokens?: number;
  /** The largest `max_tokens` one request may ask (default 1 024). */
  maxTokens?: number;
  /** The longest prompt in characters (default 24 000). */
  promptChars?: number;
}

/** Who asked: what the engine records beside a brokered model call. */
export interface BrokeredOrigin {
  executor: string;
  traceId: string;
}

/** Settings of {@link createModelService}. */
export interface ModelServiceSettings {
  /**
   * The fast-tier model for one origin: in a turn, the turn's recording model
   * (counted, charged to the turn's budget, recorded with its lineage); in a
   * replay, one that answers from the record.
   */
  model: (origin: BrokeredOrigin) => ChatModel;
  limits?: ModelServiceLimits;
}

/** The system prompt of every brokered completion: the executor writes only the user message. */
export const BROKERED_SYSTEM_PROMPT =
  'You answer one request a Metnos executor makes on behalf of its user. Follow the instructions in the message and answer with the text asked for, nothing else.';

const DEFAULTS = { requests: 4, tokens: 8_000, maxTokens: 1_024, promptChars: 24_000 } as const;

const refusal = (errorClass: string, message: string): HostServiceAnswer => ({
  ok: false,
  error: { class: errorClass, message },
});

/** The request of one body, or why it is refused. */
function readBody(
  body: unknown,
  limits: Required<ModelServiceLimits>,
): { prompt: string; maxTokens: number } | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be an object { prompt, max_tokens }';
  const record = body as Record<string, unknown>;
  const extra = Object.keys(record).filter((key) => key !== 'prompt' && key !== 'max_tokens');
  if (extra.length > 0)
    return `unknown field ${JSON.stringify(extra[0]!.slice(0, 40))}: the body is { prompt, max_tokens }`;
  const prompt = Object.hasOwn(record, 'prompt') ? record.prompt : undefined;
  if (typeof prompt !== 'string' || prompt.trim() === '') return 'prompt must be a non-empty string';
  if (prompt.length > limits.promptChars) return `prompt is longer than ${limits.promptChars} characters`;
  const asked = Object.hasOwn(record, 'max_tokens') ? record.max_tokens : 256;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1)
    return 'max_tokens must be a positive integer';
  return { prompt, maxTokens: Math.min(asked, limits.maxTokens) };
}

/**
 * The `model` host service of one executor call: `{ prompt, max_tokens }` →
 * `{ text }`, one fast-tier completion per request, with a fixed system
 * prompt and no tools. The executor never holds model credentials and never
 * chooses the model. Per call it may ask at most `limits.requests`
 * completions and use at most `limits.tokens` tokens (each request's
 * `max_tokens` is cut to what is left); past either, and whenever the turn's
 * own budget is spent, it gets `BudgetExhausted` as data. Every completion
 * goes through `settings.model`, so in a turn it is counted, charged and
 * recorded like the engine's own calls. Create one per executor call.
 *
 * @example
 * const model = createModelService({ model: () => turn.models.fast, limits: { requests: 2 } });
 * await invoker.invoke('classify_entries', args, { ...options, hostServices: { model } });
 */
export function createModelService(settings: ModelServiceSettings): HostService {
  const limits = { ...DEFAULTS, ...settings.limits };
  let requests = 0;
  let tokens = 0;
  return async (call: HostServiceCall): Promise<HostServiceAnswer> => {
    const parsed = readBody(call.body, limits);
    if (typeof parsed === 'string') return refusal('InvalidInput', parsed);
    if (requests >= limits.requests)
      return refusal('BudgetExhausted', `this call has made its ${limits.requests} model requests`);
    const left = limits.tokens - tokens;
    if (left <= 0) return refusal('BudgetExhausted', `this call has used its ${limits.tokens} model tokens`);
    requests++;
    const request: ChatRequest = {
      system: BROKERED_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: parsed.prompt }],
      tools: [],
      maxTokens: Math.min(parsed.maxTokens, left),
      signal: call.signal,
    };
    try {
      const response = await settings
        .model({ executor: call.executor.name, traceId: call.traceId })
        .generate(request);
      tokens += (response.usage?.inputTokens ?? 0) + (response.usage?.outputTokens ?? 0);
      return { ok: true, value: { text: response.text } };
    } catch (error) {
      if (BudgetExhausted.isInstance(error)) return refusal('BudgetExhausted', error.message);
      return refusal('ModelUnavailable', 'the fast-tier model did not answer');
    }
  };
}
