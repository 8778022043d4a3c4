import type { ExecutorResult, VerifiedExecutor } from '@metnos/executor-sdk';
import { classifyFailure, withRetry } from '../llm/retry.ts';
import { executorContract, type ReviewVerdict } from '../review.ts';
import type { ExecutionOutcome, RunState } from './executor.ts';
import { isToolStep } from './plan.ts';
import { entriesOf, PlanReferenceError, resolvePlaceholders } from './references.ts';
import { failSpan, inSpan } from './telemetry.ts';
import { versionFits } from './validator.ts';

/** How idempotent steps are retried after a transient failure (seed 003's retry classifier). */
export interface StepRetry {
  /** Calls in all, the first included. Default 3; 1 turns retries off. */
  attempts?: number;
  /** The first wait. Default 200 ms, doubling, with jitter. */
  baseDelayMs?: number;
  /** Cap on one wait. Default 2 000 ms. */
  maxDelayMs?: number;
  /** Randomness of the jitter in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** How to wait (tests pass one that does not). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A call resolved and reviewed, ready to run. */
export interface PreparedCall {
  number: number;
  tool: string;
  executor: VerifiedExecutor;
  args: Record<string, unknown>;
  verdict: ReviewVerdict;
}

/**
 * Resolves one tool step's placeholders, `$ref`s and `from_step`, checks the
 * executor is still in the version range the plan asks, and has the vaglio
 * review the call. A call that needs a confirmation the user has not given
 * stops the plan as `pending_approval`; a blocked one fails it.
 */
export async function prepareCall(
  number: number,
  state: RunState,
): Promise<{ call: PreparedCall } | { outcome: ExecutionOutcome }> {
  const { settings } = state;
  const step = state.plan.steps[number - 1]!;
  if (!isToolStep(step)) throw new TypeError(`step ${number} is not a tool step`);
  const executor = state.byName.get(step.tool);
  if (!executor)
    return {
      outcome: state.fail(number, step.tool, {
        class: 'ToolUnavailable',
        message: `no tool named ${step.tool}`,
      }),
    };
  if (step.version !== undefined && !versionFits(executor, step.version))
    return {
      outcome: state.fail(number, step.tool, {
        class: 'VersionMismatch',
        message: `${step.tool} is at ${executor.version}, outside "${step.version}"`,
      }),
    };
  let args: Record<string, unknown>;
  try {
    const { from_step: from, ...rest } = step.args;
    args = resolvePlaceholders(rest, state.scope()) as Record<string, unknown>;
    if (typeof from === 'number') args.entries = entriesOf(state.observations[from - 1] ?? {});
  } catch (error) {
    if (!PlanReferenceError.isInstance(error)) throw error;
    return { outcome: state.fail(number, step.tool, { class: 'BadReference', message: error.message }) };
  }
  state.memory.scratch(number).set('args', args);
  const verdict = await settings.reviewer.evaluate(
    {
      executor: executorContract(executor),
      args,
      request: settings.request,
      stepIndex: number,
      turnId: settings.turnId,
    },
    { home: settings.home, workspace: settings.workspace },
  );
  if (verdict.approved) return { call: { number, tool: step.tool, executor, args, verdict } };
  const granted =
    verdict.blocked_by === 'confirmation' &&
    (await settings.approved?.({ tool: step.tool, args, step: number }));
  if (granted) return { call: { number, tool: step.tool, executor, args, verdict } };
  if (verdict.blocked_by === 'confirmation' && verdict.pending)
    return {
      outcome: {
        ...state.fail(number, step.tool, { class: 'NeedsApproval', message: verdict.reason }),
        ok: false,
        kind: 'pending_approval',
        recovery: 'out_of_scope',
        pending: {
          approvalId: verdict.pending.id,
          callHash: verdict.pending.callHash,
          expiresAt: verdict.pending.expiresAt,
          args,
        },
      } as ExecutionOutcome,
    };
  return {
    outcome: state.fail(number, step.tool, {
      class: 'Blocked',
      message: `blocked by the ${verdict.blocked_by}: ${verdict.reason}`,
    }),
  };
}

/**
 * Runs a prepared call through the invoker, each attempt charged to the
 * turn's tool-call budget (a spent budget answers `BudgetExhausted` without
 * calling). A transient failure (timeout, rate limit, network) of an
 * idempotent executor is tried again with backoff under the same
 * idempotency key; permanent and policy failures, and any failure of an
 * executor that is not idempotent, are final at once. Each call to the
 * invoker is a `metnos.executor.invoke` span.
 */
export async function invokeWithRetry(call: PreparedCall, state: RunState) {
  const { settings } = state;
  const retry = settings.retry ?? {};
  const idempotent = call.executor.manifest.contract.idempotent;
  const started = performance.now();
  let attempts = 0;
  const tell = (event: Parameters<NonNullable<typeof settings.onStep>>[0]) => {
    try {
      settings.onStep?.(event);
    } catch {}
  };
  tell({ type: 'step', phase: 'started', number: call.number, tool: call.tool });
  const attempt = async (): Promise<ExecutorResult> => {
    const refused = settings.budget?.chargeToolCall();
    if (refused)
      return { ok: false, error: { class: 'BudgetExhausted', message: refused.message } } as ExecutorResult;
    attempts++;
    return inSpan(
      'metnos.executor.invoke',
      {
        'metnos.step.number': call.number,
        'metnos.executor.name': call.executor.name,
        'metnos.executor.version': call.executor.version,
        'metnos.invoke.attempt': attempts,
      },
      async (span) => {
        const result = await settings.invoker.invoke(call.executor.name, call.args, {
          workspace: settings.workspace,
          caller: { kind: 'planner', turnId: settings.turnId },
          turnId: settings.turnId,
          traceId: `${settings.turnId}:${call.number}`,
          config: settings.executorConfig?.[call.executor.name],
          hostServices: settings.hostServices?.({ number: call.number, tool: call.executor.name }),
          ...(settings.asOf ? { asOf: settings.asOf } : {}),
          signal: settings.signal,
        });
        span.setAttribute('metnos.invoke.ok', result.ok);
        if (!result.ok) failSpan(span, result.error.class);
        return result;
      },
    );
  };
  const result = idempotent
    ? await withRetry(attempt, {
        attempts: retry.attempts ?? 3,
        baseDelayMs: retry.baseDelayMs ?? 200,
        maxDelayMs: retry.maxDelayMs ?? 2_000,
        random: retry.random,
        sleep: retry.sleep,
        idempotencyKey: `${settings.turnId}:${call.number}`,
        signal: settings.signal,
        classify: classifyFailure,
      })
    : await attempt();
  tell({
    type: 'step',
    phase: 'finished',
    number: call.number,
    tool: call.tool,
    ok: result.ok,
    ...(result.ok ? {} : { errorClass: result.error.class }),
    attempts,
  });
  return { ...call, result, attempts, durationMs: performance.now() - started };
}
