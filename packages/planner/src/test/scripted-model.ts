import { MetnosError } from '@metnos/executor-sdk';
import { ProviderAbortedError } from '../llm/errors.ts';
import type { ChatModel, ChatRequest, ChatResponse, Tier, TokenUsage } from '../llm/types.ts';

/** A request as a test model saw it: everything but the signal, deep-copied. */
export type RecordedChatRequest = Omit<ChatRequest, 'signal'>;

/**
 * Copies a request for the record, leaving out the (uncloneable) signal.
 *
 * @example
 * const seen = snapshotRequest({ system: '', messages: [], tools: [], signal: controller.signal }); // no `signal`
 */
export function snapshotRequest(request: ChatRequest): RecordedChatRequest {
  const { signal: _signal, ...rest } = request;
  return structuredClone(rest);
}

const exhaustedMarker = Symbol.for('metnos.error.ScriptExhaustedError');

/**
 * A scripted model was asked for more answers than its script holds: the code
 * under test made more model calls than the test expected.
 *
 * @example
 * await expect(model.generate(request)).rejects.toSatisfy(ScriptExhaustedError.isInstance);
 */
export class ScriptExhaustedError extends MetnosError {
  private readonly [exhaustedMarker] = true;
  /** How many steps the script had. */
  readonly steps: number;

  constructor(steps: number) {
    super({ code: 'script_exhausted', message: `the model script has ${steps} step(s) and all were used` });
    this.name = 'ScriptExhaustedError';
    this.steps = steps;
  }

  static override isInstance(error: unknown): error is ScriptExhaustedError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[exhaustedMarker] === true
    );
  }
}

/** One scripted answer: text, tool calls, or an error to throw. */
export interface ScriptStep {
  text?: string;
  /** Ids default to `call_<turn>_<position>`. */
  toolCalls?: Array<{ id?: string; name: string; args: unknown }>;
  usage?: TokenUsage;
  costUsd?: number;
  finishReason?: string;
  /** Thrown instead of answering (e.g. a `ProviderHttpError` to test retries). */
  error?: unknown;
}

/** A step, or a function that builds one from the request it answers. */
export type ScriptEntry = ScriptStep | ((request: RecordedChatRequest, turnIndex: number) => ScriptStep);

/** A test model that keeps every request it received. */
export interface RecordingTestModel extends ChatModel {
  readonly requests: RecordedChatRequest[];
}

/** A scripted model: answers in order, then throws `ScriptExhaustedError`. */
export interface ScriptedModel extends RecordingTestModel {
  /** Steps not used yet. */
  remaining(): number;
}

/** Identity of a test model. */
export interface TestModelOptions {
  id?: string;
  provider?: string;
  tier?: Tier;
}

const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0 };

function createTestModel(
  options: TestModelOptions & { provider: string; id: string },
  answer: (request: RecordedChatRequest, turnIndex: number) => ScriptStep,
): RecordingTestModel {
  const requests: RecordedChatRequest[] = [];
  return {
    id: options.id,
    provider: options.provider,
    ...(options.tier ? { tier: options.tier } : {}),
    requests,
    async generate(request): Promise<ChatResponse> {
      if (request.signal?.aborted)
        throw new ProviderAbortedError({ providerName: options.provider, cause: request.signal.reason });
      const snapshot = snapshotRequest(request);
      const turnIndex = requests.length;
      requests.push(snapshot);
      const step = answer(snapshot, turnIndex);
      if (step.error !== undefined) throw step.error;
      const toolCalls = (step.toolCalls ?? []).map((call, position) => ({
        id: call.id ?? `call_${turnIndex}_${position}`,
        name: call.name,
        args: call.args,
      }));
      return {
        text: step.text ?? '',
        toolCalls,
        usage: step.usage ?? ZERO_USAGE,
        ...(step.costUsd === undefined ? {} : { costUsd: step.costUsd }),
        finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop'),
        latencyMs: 0,
      };
    },
  };
}

/**
 * A model that answers from a script, one step per request, and records each
 * request (minus the signal). An aborted signal throws `ProviderAbortedError`
 * like a real provider.
 *
 * @example
 * const model = createScriptedModel([
 *   { toolCalls: [{ name: 'fs_read', args: { path: 'diary.md' } }] },
 *   { text: 'The last line is: buy milk.' },
 * ]);
 */
export function createScriptedModel(steps: ScriptEntry[], options: TestModelOptions = {}): ScriptedModel {
  const model = createTestModel(
    { id: 'scripted', provider: 'scripted', ...options },
    (request, turnIndex) => {
      const entry = steps[turnIndex];
      if (entry === undefined) throw new ScriptExhaustedError(steps.length);
      return typeof entry === 'function' ? entry(request, turnIndex) : entry;
    },
  );
  return { ...model, remaining: () => Math.max(0, steps.length - model.requests.length) };
}

/**
 * A model that answers `received: <last user message>` and never calls a
 * tool: enough for smoke runs of code that only needs *a* model.
 *
 * @example
 * const model = createEchoModel();
 * (await model.generate({ system: '', messages: [{ role: 'user', content: 'ping' }], tools: [] })).text; // 'received: ping'
 */
export function createEchoModel(options: TestModelOptions = {}): RecordingTestModel {
  return createTestModel({ id: 'echo', provider: 'echo', ...options }, (request) => ({
    text: `received: ${request.messages.findLast((message) => message.role === 'user')?.content ?? ''}`,
  }));
}
