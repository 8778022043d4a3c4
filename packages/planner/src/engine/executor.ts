import type { ExecutorResult, Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel } from '../model.ts';
import { type CallReviewer, executorContract, type ReviewVerdict } from '../review.ts';
import { type Plan, planHash } from './plan.ts';
import {
  entriesOf,
  findPlaceholders,
  PlanReferenceError,
  referencedStepNumbers,
  resolvePlaceholders,
} from './references.ts';

/** Recovery classes of seed 001: what kind of failure a step had. */
export type RecoveryClass = 'wrong_tool' | 'wrong_args' | 'missing_input' | 'out_of_scope';

const CLASS_TABLE: Record<string, RecoveryClass> = {
  InvalidInput: 'wrong_args',
  InvalidOutput: 'wrong_tool',
  BadReference: 'wrong_args',
  ToolUnavailable: 'wrong_tool',
  NotInvocable: 'wrong_tool',
  Crashed: 'wrong_tool',
  NonJsonOutput: 'wrong_tool',
  OutputTooLarge: 'wrong_args',
  Timeout: 'wrong_tool',
  NotFound: 'missing_input',
  IsADirectory: 'wrong_args',
  NotADirectory: 'wrong_args',
  Empty: 'missing_input',
  Exists: 'wrong_args',
  TooLarge: 'wrong_args',
  NotConfigured: 'out_of_scope',
  PermissionDenied: 'out_of_scope',
  PolicyViolation: 'out_of_scope',
  IsolationUnavailable: 'out_of_scope',
  Forbidden: 'out_of_scope',
  Unauthorized: 'out_of_scope',
  Blocked: 'out_of_scope',
  ResourceLimit: 'wrong_args',
};

/** Maps an executor's structured error class to a recovery class (unknown classes: wrong_tool). */
export function recoveryClassOf(errorClass: string): RecoveryClass {
  return CLASS_TABLE[errorClass] ?? 'wrong_tool';
}

/** One step as the executor ran it. */
export interface ExecutedStep {
  number: number;
  tool: string;
  args: unknown;
  verdict: ReviewVerdict | null;
  result: ExecutorResult;
  durationMs: number;
}

/** The outcome of running a plan. */
export type ExecutionOutcome =
  | { ok: true; finalMessage: string; steps: ExecutedStep[]; observations: Record<string, unknown>[] }
  | {
      ok: false;
      kind: 'failed' | 'pending_approval';
      failedStep: number;
      tool: string;
      error: { class: string; message: string };
      recovery: RecoveryClass;
      steps: ExecutedStep[];
      pending?: { approvalId: string; callHash: string; expiresAt: string; args: unknown };
    };

/** Settings of {@link executePlan}. */
export interface ExecuteSettings {
  executors: readonly VerifiedExecutor[];
  invoker: Pick<Invoker, 'invoke'>;
  reviewer: CallReviewer;
  request: string;
  turnId: string;
  workspace: string;
  home: string;
  /** Runtime values, pinned at turn start: actor, lang, channel, now. */
  runtime: Record<string, string>;
  /** Slot values bound from the request, for remembered templates. */
  slots?: Record<string, string>;
  /** The fast-tier model for fillers; without it fillers take their defaults. */
  fillerModel?: ChatModel;
  /** Filler answers cached across turns, keyed by plan + filler + request slots. */
  fillerCache?: Map<string, string>;
  executorConfig?: Record<string, Record<string, unknown>>;
  /** Call ids whose confirmation the user gave (approval id → granted). */
  approved?: (call: { tool: string; args: unknown; step: number }) => Promise<boolean> | boolean;
  signal?: AbortSignal;
}

function observationOf(result: ExecutorResult): Record<string, unknown> {
  const { isolation: _isolation, ...rest } = result as ExecutorResult & { isolation?: unknown };
  return rest as Record<string, unknown>;
}

async function resolveFillers(plan: Plan, settings: ExecuteSettings): Promise<Record<string, string>> {
  const used = new Set(
    findPlaceholders([plan.steps.map((step) => step.args), plan.final_message])
      .filter((match) => match.kind === 'filler')
      .map((match) => match.name!),
  );
  const values: Record<string, string> = {};
  for (const name of used) {
    const filler = plan.fillers[name];
    if (!filler) continue;
    const key = `${planHash(plan)}|${name}|${JSON.stringify(settings.slots ?? {})}`;
    const cached = settings.fillerCache?.get(key);
    if (cached !== undefined) {
      values[name] = cached;
      continue;
    }
    let value: string | undefined;
    if (settings.fillerModel) {
      try {
        const response = await settings.fillerModel.generate({
          system: 'Answer with the value only: one short line, no explanation.',
          messages: [{ role: 'user', content: `Request: ${settings.request}\nQuestion: ${filler.prompt}` }],
          tools: [],
          signal: settings.signal,
        });
        const line = response.text.trim().split('\n')[0]?.trim();
        if (line && line.length <= 500) value = line;
      } catch {
        value = undefined;
      }
    }
    value ??= filler.default;
    if (value === undefined) continue;
    values[name] = value;
    settings.fillerCache?.set(key, value);
  }
  return values;
}

/** The steps each step waits for: those its arguments reference and those in its `depends`. */
function dependenciesOf(plan: Plan): Array<Set<number>> {
  const ids = new Map<string, number>();
  plan.steps.forEach((step, index) => {
    ids.set(step.id ?? `s${index + 1}`, index + 1);
  });
  return plan.steps.map((step) => {
    const set = new Set(referencedStepNumbers(step.args));
    for (const dependency of step.depends ?? []) {
      const number = typeof dependency === 'number' ? dependency : ids.get(dependency);
      if (number !== undefined) set.add(number);
    }
    return set;
  });
}

/** A call resolved and reviewed, ready to run. */
interface PreparedCall {
  number: number;
  tool: string;
  executor: VerifiedExecutor;
  args: Record<string, unknown>;
  verdict: ReviewVerdict;
}

/** Where a plan's run stands: what the steps produced and how a failure is reported. */
interface RunState {
  settings: ExecuteSettings;
  byName: Map<string, VerifiedExecutor>;
  observations: Array<Record<string, unknown> | undefined>;
  executed: ExecutedStep[];
  scope(): Parameters<typeof resolvePlaceholders>[1];
  fail(number: number, tool: string, error: { class: string; message: string }): ExecutionOutcome;
}

/**
 * Resolves one step's placeholders and `from_step`, and has the vaglio review
 * the call. A call that needs a confirmation the user has not given stops the
 * plan as `pending_approval`; a blocked one fails it.
 */
async function prepareCall(
  step: Plan['steps'][number],
  number: number,
  state: RunState,
): Promise<{ call: PreparedCall } | { outcome: ExecutionOutcome }> {
  const { settings } = state;
  const executor = state.byName.get(step.tool);
  if (!executor)
    return {
      outcome: state.fail(number, step.tool, {
        class: 'ToolUnavailable',
        message: `no tool named ${step.tool}`,
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
        ok: false,
        kind: 'pending_approval',
        failedStep: number,
        tool: step.tool,
        error: { class: 'NeedsApproval', message: verdict.reason },
        recovery: 'out_of_scope',
        steps: state.executed.sort((a, b) => a.number - b.number),
        pending: {
          approvalId: verdict.pending.id,
          callHash: verdict.pending.callHash,
          expiresAt: verdict.pending.expiresAt,
          args,
        },
      },
    };
  return {
    outcome: state.fail(number, step.tool, {
      class: 'Blocked',
      message: `blocked by the ${verdict.blocked_by}: ${verdict.reason}`,
    }),
  };
}

/** Runs prepared calls together through the invoker. */
function invokeAll(calls: PreparedCall[], settings: ExecuteSettings) {
  return Promise.all(
    calls.map(async (call) => {
      const started = performance.now();
      const result = await settings.invoker.invoke(call.executor.name, call.args, {
        workspace: settings.workspace,
        caller: { kind: 'planner', turnId: settings.turnId },
        turnId: settings.turnId,
        traceId: `${settings.turnId}:${call.number}`,
        config: settings.executorConfig?.[call.executor.name],
        signal: settings.signal,
      });
      return { ...call, result, durationMs: performance.now() - started };
    }),
  );
}

/**
 * Runs a validated plan deterministically: resolves `from_step`, `${stepN…}`,
 * `${FILLER:…}`, `${RUNTIME:…}` and `${SLOT:…}`, reviews each call with the
 * vaglio, invokes the executor, accumulates observations and renders the
 * final message. Steps whose dependencies are all done run together; results
 * are recorded in step order, so the record is the same every run.
 *
 * @example
 * const outcome = await executePlan(plan, { executors, invoker, reviewer, request, turnId, workspace, home, runtime });
 */
export async function executePlan(plan: Plan, settings: ExecuteSettings): Promise<ExecutionOutcome> {
  const dependencies = dependenciesOf(plan);
  const fillers = await resolveFillers(plan, settings);
  const state: RunState = {
    settings,
    byName: new Map(settings.executors.map((executor) => [executor.name, executor])),
    observations: new Array(plan.steps.length).fill(undefined),
    executed: [],
    scope: () => ({
      observations: state.observations,
      fillers,
      runtime: settings.runtime,
      slots: settings.slots,
    }),
    fail: (number, tool, error) => ({
      ok: false,
      kind: 'failed',
      failedStep: number,
      tool,
      error,
      recovery: recoveryClassOf(error.class),
      steps: state.executed.sort((a, b) => a.number - b.number),
    }),
  };
  const done = new Set<number>();

  while (done.size < plan.steps.length) {
    const wave = plan.steps
      .map((step, index) => ({ step, number: index + 1 }))
      .filter(
        ({ number }) =>
          !done.has(number) && [...dependencies[number - 1]!].every((dependency) => done.has(dependency)),
      );
    if (wave.length === 0)
      return state.fail(plan.steps.length, plan.steps.at(-1)!.tool, {
        class: 'BadReference',
        message: 'the steps depend on each other in a cycle',
      });
    const calls: PreparedCall[] = [];
    for (const { step, number } of wave) {
      const prepared = await prepareCall(step, number, state);
      if ('outcome' in prepared) return prepared.outcome;
      calls.push(prepared.call);
    }
    const results = await invokeAll(calls, settings);
    for (const item of results) {
      const { number, tool, args, verdict, result, durationMs } = item;
      state.executed.push({ number, tool, args, verdict, result, durationMs });
      state.observations[number - 1] = observationOf(result);
      done.add(number);
    }
    const failed = results.find((item) => !item.result.ok);
    if (failed && !failed.result.ok) return state.fail(failed.number, failed.tool, failed.result.error);
  }
  return finish(plan, state);
}

/** Renders the final message once every step ran. */
function finish(plan: Plan, state: RunState): ExecutionOutcome {
  let finalMessage: string;
  try {
    finalMessage = plan.final_message.trim()
      ? String(resolvePlaceholders(plan.final_message, state.scope()))
      : describeLast(state.observations.at(-1));
  } catch (error) {
    if (!PlanReferenceError.isInstance(error)) throw error;
    return state.fail(plan.steps.length, plan.steps.at(-1)!.tool, {
      class: 'BadReference',
      message: error.message,
    });
  }
  return {
    ok: true,
    finalMessage,
    steps: state.executed.sort((a, b) => a.number - b.number),
    observations: state.observations as Record<string, unknown>[],
  };
}

function describeLast(observation: Record<string, unknown> | undefined): string {
  const content = observation?.content;
  if (content === undefined) return 'Done.';
  return typeof content === 'string' ? content : JSON.stringify(content, null, 2);
}
