import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel, ChatResponse, ToolSpec } from '../model.ts';
import { SCRATCHPAD_READ_TOOL } from '../scratchpad.ts';
import type { LoopContext } from './context.ts';
import type { TurnState } from './types.ts';

/** The system prompt of every loop turn. */
export const BASE_PROMPT = `You are Metnos, a personal assistant that acts through tools (executors).
Call one tool at a time when you need data or an action; when you have what the user asked for, answer in plain text without calling a tool.
To pass an earlier result into a tool argument, write {{stepN.field}} where N is the step number (1 = first tool call) and field is a key of that step's observation, e.g. {{step1.content}} or {{step2.metadata.path}}. Never invent a syntax of your own and never copy large data by hand.
If a tool reports an error, read it and either fix the arguments or explain to the user what is missing.`;

function isTransientModelError(error: unknown): boolean {
  const record = error as {
    status?: number;
    statusCode?: number;
    code?: string;
    transient?: boolean;
    classification?: string;
  };
  if (record?.classification === 'transient' || record?.transient === true) return true;
  const status = record?.status ?? record?.statusCode;
  if (typeof status === 'number') return status >= 500 || status === 429 || status === 408;
  return ['ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(record?.code ?? '');
}

/** What a person reads when the model failed: how to reach it, or what it said. */
export function describeModelFailure(error: unknown): string {
  const record = error as { name?: string; message?: string; hint?: string; status?: number };
  const unreachable =
    /unreachable|ECONNREFUSED|fetch failed|connect/i.test(`${record?.name} ${record?.message}`) &&
    record?.status === undefined;
  if (unreachable) {
    return `I could not reach the language model (${record?.message ?? 'connection failed'}). ${record?.hint ?? 'Check that the model server is running (for Ollama: `ollama serve`) and that the base URL is right.'}`;
  }
  return `The language model failed: ${record?.message ?? String(error)}${record?.hint ? ` (${record.hint})` : ''}`;
}

/**
 * One model call with the turn's history, retried with jittered exponential
 * backoff (honouring `Retry-After`) while the failure is transient.
 */
export async function callModel(
  context: LoopContext,
  model: ChatModel,
  state: TurnState,
  tools: ToolSpec[],
  system: string,
  signal?: AbortSignal,
): Promise<ChatResponse> {
  const { settings } = context;
  const attempts = settings.retry?.attempts ?? 3;
  const base = settings.retry?.baseDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await model.generate({
        system,
        messages: state.history,
        tools,
        signal,
        timeoutMs: settings.modelTimeoutMs,
      });
    } catch (error) {
      if (attempt >= attempts || !isTransientModelError(error) || signal?.aborted) throw error;
      const retryAfter = (error as { retryAfterMs?: number }).retryAfterMs;
      await context.sleep(retryAfter ?? Math.min(8000, base * 2 ** (attempt - 1)) * (0.5 + context.random()));
    }
  }
}

/** An executor as a native tool: its name, summary and input JSON Schema. */
export function toolSpec(executor: VerifiedExecutor): ToolSpec {
  const parameters = { ...contractSchema(executor, 'input') };
  const definitions =
    (executor.schema as Record<string, unknown>).definitions ??
    (executor.schema as Record<string, unknown>).$defs;
  if (definitions && JSON.stringify(parameters).includes('"$ref"')) parameters.definitions = definitions;
  return { name: executor.name, description: executor.manifest.executor.summary, parameters };
}

/** The tools offered in a local step: the candidates, and `scratchpad_read` while the turn has entries. */
export function offeredTools(context: LoopContext, state: TurnState): ToolSpec[] {
  const specs = state.candidates.map(toolSpec);
  if (context.settings.scratchpad.count(state.turnId) > 0)
    specs.push({ ...SCRATCHPAD_READ_TOOL, parameters: { ...SCRATCHPAD_READ_TOOL.parameters } });
  return specs;
}
