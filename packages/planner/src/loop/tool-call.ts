import type { ExecutorResult, VerifiedExecutor } from '@metnos/executor-sdk';
import { hardenArgs, keptArgs, TOOL_UNAVAILABLE } from '../hardening.ts';
import type { ToolCall } from '../model.ts';
import { PipingError, resolveReferences } from '../piping.ts';
import type { ReviewVerdict } from '../review.ts';
import { SCRATCHPAD_READ_TOOL, SCRATCHPAD_THRESHOLD_BYTES, type ScratchpadReadMode } from '../scratchpad.ts';
import {
  finishTurn,
  type LoopContext,
  lastUsefulText,
  record,
  reviewed,
  summarizeVerdict,
} from './context.ts';
import { recordLoopPassages, registerProtoMnest } from './passages.ts';
import type { StepRecord, TurnResult, TurnState } from './types.ts';

/** A step as a tool call settles it: the fields the call fills in (the rest have defaults). */
type Base = 'tokens_in' | 'tokens_out' | 'latency_ms' | 'raw_args' | 'sandbox';
type SettledStep = Omit<StepRecord, 'number' | Base> & Partial<Pick<StepRecord, Base>>;

const TRANSIENT_EXECUTOR_CLASSES = new Set(['Timeout', 'RateLimited', 'Network', 'DnsError', 'Unavailable']);

/** Transient / permanent / policy, for an executor's failed result. */
export function classifyExecutorFailure(
  result: ExecutorResult,
): 'transient' | 'permanent' | 'policy' | undefined {
  if (result.ok) return undefined;
  const errorClass = result.error.class;
  if (errorClass === 'PolicyViolation' || errorClass === 'IsolationUnavailable') return 'policy';
  return TRANSIENT_EXECUTOR_CLASSES.has(errorClass) ? 'transient' : 'permanent';
}

function observationOf(result: ExecutorResult): Record<string, unknown> {
  const { isolation: _isolation, ...rest } = result as ExecutorResult & { isolation?: unknown };
  return rest as Record<string, unknown>;
}

/** The builtin `scratchpad_read`: part of an observation the turn kept aside. */
function readScratchpad(context: LoopContext, state: TurnState, given: unknown): SettledStep {
  const args = given as {
    scratchpad_id?: string;
    mode?: string;
    chars?: number;
    start?: number;
    end?: number;
  };
  const how = {
    mode: args.mode ?? 'head',
    chars: args.chars,
    start: args.start ?? 0,
    end: args.end ?? 0,
  } as ScratchpadReadMode;
  const read =
    typeof args.scratchpad_id === 'string'
      ? context.settings.scratchpad.read(state.turnId, args.scratchpad_id, how)
      : undefined;
  const observation = read
    ? { ok: true, content: read.content, metadata: { total_chars: read.total_chars } }
    : { ok: false, error: { class: 'NotFound', message: 'no scratchpad entry with that id in this turn' } };
  return {
    tool: SCRATCHPAD_READ_TOOL.name,
    resolved_args: args,
    validation: 'ok',
    vaglio: null,
    result: observation.ok ? 'ok' : 'NotFound',
    observation,
  };
}

/** A repeated read of the same path or URL, answered from the step that already has it. */
function duplicateRead(
  context: LoopContext,
  state: TurnState,
  executor: VerifiedExecutor,
  resolved: unknown,
  target: unknown,
): SettledStep | undefined {
  if (!context.guarded.has(executor.name) || typeof target !== 'string') return undefined;
  const earlier = state.reads.get(`${executor.name}\u0000${target}`);
  if (earlier === undefined) return undefined;
  return {
    tool: executor.name,
    resolved_args: resolved,
    validation: 'skipped',
    vaglio: null,
    result: 'duplicate',
    observation: {
      ok: true,
      content: `You already have this data at step ${earlier}. Use it and give the final answer.`,
      metadata: { duplicate_of_step: earlier },
    },
  };
}

/**
 * The vaglio's verdict on a call — or, resuming an approved call, the
 * approval store's check of exactly that call. A refused call settles as a
 * step; one that needs the user's confirmation ends the turn, paused.
 */
async function reviewCall(
  context: LoopContext,
  state: TurnState,
  executor: VerifiedExecutor,
  resolved: unknown,
  approved: boolean,
): Promise<{ verdict: ReviewVerdict } | { step: SettledStep } | { result: TurnResult }> {
  const { settings } = context;
  const call = reviewed(state, executor, resolved);
  const refused = (
    result: string,
    vaglio: StepRecord['vaglio'],
    error: { class: string; message: string },
  ) => ({
    step: {
      tool: executor.name,
      resolved_args: resolved,
      validation: 'ok' as const,
      vaglio,
      result,
      observation: { ok: false, error },
    },
  });
  if (approved && state.waiting && settings.approvals) {
    const check = await settings.approvals.check(state.waiting.approvalId, call);
    if (!check.ok)
      return refused('ApprovalInvalid', null, { class: 'ApprovalInvalid', message: check.reason });
    return { verdict: { approved: true, reason: 'approved by the user', score: 1, blocked_by: null } };
  }
  const verdict = await settings.reviewer.evaluate(call, {
    home: context.home,
    workspace: settings.workspace,
  });
  if (verdict.approved) return { verdict };
  if (verdict.blocked_by === 'confirmation' && verdict.pending) {
    return {
      result: await finishTurn(
        context,
        state,
        'pending_approval',
        `${executor.name} has side effects and cannot be undone automatically; it needs your approval before it runs.`,
        {
          approvalId: verdict.pending.id,
          callHash: verdict.pending.callHash,
          expiresAt: verdict.pending.expiresAt,
          executor: executor.name,
          args: resolved,
        },
      ),
    };
  }
  return refused('Blocked', summarizeVerdict(verdict), {
    class: 'Blocked',
    message: `blocked by the ${verdict.blocked_by}: ${verdict.reason}`,
  });
}

/** Invokes an executor; a transient failure of an idempotent one is retried with jittered backoff. */
async function invokeWithRetry(
  context: LoopContext,
  state: TurnState,
  executor: VerifiedExecutor,
  args: unknown,
  signal?: AbortSignal,
): Promise<ExecutorResult> {
  const { settings } = context;
  const attempts = executor.manifest.contract.idempotent ? (settings.retry?.attempts ?? 3) : 1;
  const base = settings.retry?.baseDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    state.toolCallsUsed++;
    const result = await settings.invoker.invoke(executor.name, args, {
      workspace: settings.workspace,
      caller: { kind: 'planner', turnId: state.turnId },
      turnId: state.turnId,
      traceId: `${state.turnId}:${state.steps.length + 1}`,
      config: settings.executorConfig?.[executor.name],
      signal,
    });
    if (result.ok || classifyExecutorFailure(result) !== 'transient' || attempt >= attempts) return result;
    await context.sleep(Math.min(8000, base * 2 ** (attempt - 1)) * (0.5 + context.random()));
  }
}

/** An observation over the scratchpad threshold goes to the scratchpad; the model sees its summary. */
function storeLarge(
  context: LoopContext,
  state: TurnState,
  observation: Record<string, unknown>,
  executor: string,
): Record<string, unknown> {
  const serialized = JSON.stringify(observation);
  if (Buffer.byteLength(serialized) <= SCRATCHPAD_THRESHOLD_BYTES || executor === SCRATCHPAD_READ_TOOL.name)
    return observation;
  const content = observation.content ?? observation;
  const metadata = (observation.metadata as Record<string, unknown> | undefined) ?? {};
  return { ...context.settings.scratchpad.put(state.turnId, content, { ...metadata, executor }) };
}

/** Runs one tool call. Returns a final result when the turn must end, else the call's observation. */
export async function runToolCall(
  context: LoopContext,
  state: TurnState,
  call: ToolCall,
  approved: boolean,
  signal?: AbortSignal,
): Promise<TurnResult | { observation: Record<string, unknown> }> {
  const base = { tokens_in: 0, tokens_out: 0, latency_ms: 0, raw_args: keptArgs(call.args), sandbox: null };
  /** Records this call's step (refused or run) and hands its observation back to the loop. */
  const settle = (step: SettledStep) => ({ observation: record(state, { ...base, ...step }) });
  const hardened = hardenArgs(call.args);
  if (
    call.name === SCRATCHPAD_READ_TOOL.name &&
    context.settings.scratchpad.count(state.turnId) > 0 &&
    hardened.ok
  )
    return settle(readScratchpad(context, state, hardened.args));
  const executor = state.candidates.find((candidate) => candidate.name === call.name);
  if (!executor || !hardened.ok) {
    const synt = hardened.ok ? registerProtoMnest(context, state, call.name, hardened.args) : undefined;
    const observation = {
      ok: false,
      error: { class: 'ToolUnavailable', message: TOOL_UNAVAILABLE },
      ...(synt ? { synt } : {}),
    };
    return settle({
      tool: null,
      resolved_args: null,
      validation: 'rejected',
      vaglio: null,
      result: 'tool unavailable',
      observation,
    });
  }
  const used = state.calls.get(executor.name) ?? 0;
  if (used >= context.capSame) {
    return finishTurn(
      context,
      state,
      'cap_same_executor',
      `I stopped: ${executor.name} was already called ${used} times in this turn (limit ${context.capSame}). ${lastUsefulText(state)}`.trim(),
    );
  }
  let resolved: unknown;
  try {
    resolved = resolveReferences(hardened.args, state.observations);
  } catch (error) {
    if (!PipingError.isInstance(error)) throw error;
    const observation = { ok: false, error: { class: 'BadReference', message: error.message } };
    return settle({
      tool: executor.name,
      resolved_args: null,
      validation: 'rejected',
      vaglio: null,
      result: 'BadReference',
      observation,
    });
  }
  const target = (resolved as Record<string, unknown>).path ?? (resolved as Record<string, unknown>).url;
  const duplicate = duplicateRead(context, state, executor, resolved, target);
  if (duplicate) return settle(duplicate);
  const review = await reviewCall(context, state, executor, resolved, approved);
  if ('result' in review) return review.result;
  if ('step' in review) return settle(review.step);
  state.calls.set(executor.name, used + 1);
  const started = performance.now();
  const result = await invokeWithRetry(context, state, executor, resolved, signal);
  const observation = storeLarge(context, state, observationOf(result), executor.name);
  if (result.ok) recordLoopPassages(context, state, hardened.args, executor.name);
  if (result.ok && context.guarded.has(executor.name) && typeof target === 'string') {
    state.reads.set(`${executor.name}\u0000${target}`, state.steps.length + 1);
  }
  return settle({
    latency_ms: Math.round(performance.now() - started),
    tool: executor.name,
    resolved_args: resolved,
    validation: result.ok || result.error.class !== 'InvalidInput' ? 'ok' : 'rejected',
    vaglio: summarizeVerdict(review.verdict),
    sandbox: result.isolation?.tier ?? null,
    result: result.ok ? 'ok' : result.error.class,
    observation,
  });
}
