import { createHash } from 'node:crypto';
import type { ExecutorResult, HostServices, Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { Verifier, VerifierVerdict } from '@metnos/vaglio';
import type { ChatModel } from '../model.ts';
import type { CallReviewer, ReviewVerdict } from '../review.ts';
import type { TurnBudget } from './budget.ts';
import { branchTargets, dependenciesOf } from './dependencies.ts';
import type { FillerCache } from './filler-cache.ts';
import { type FillerModels, resolveFillers } from './fillers.ts';
import { canonicalJson, isToolStep, type Plan, stepIdOf } from './plan.ts';
import { policyFor, type TakenBranch } from './plan-policy.ts';
import { PlanReferenceError, resolvePlaceholders } from './references.ts';
import { createRunMemory, type PinnedReader, type RunMemory, type RunMemoryEntry } from './run-memory.ts';
import { invokeWithRetry, type PreparedCall, prepareCall, type StepRetry } from './step-call.ts';
import { type Candidate, candidateMessage, draftCandidate, runVerifySteps } from './step-kinds.ts';
import { errorClassOf, failSpan, openSpan } from './telemetry.ts';
import type { TurnEvent } from './types.ts';

/** Recovery classes of seed 001: what kind of failure a step had. */
export type RecoveryClass = 'wrong_tool' | 'wrong_args' | 'missing_input' | 'out_of_scope';

const CLASS_TABLE: Record<string, RecoveryClass> = {
  InvalidInput: 'wrong_args',
  InvalidOutput: 'wrong_tool',
  BadReference: 'wrong_args',
  ToolUnavailable: 'wrong_tool',
  VersionMismatch: 'wrong_tool',
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
  BudgetExhausted: 'out_of_scope',
  VerificationBlocked: 'out_of_scope',
};

/** Maps an executor's structured error class to a recovery class (unknown classes: wrong_tool). */
export function recoveryClassOf(errorClass: string): RecoveryClass {
  return CLASS_TABLE[errorClass] ?? 'wrong_tool';
}

/** One step as the executor ran it. */
export interface ExecutedStep {
  number: number;
  tool: string;
  /** The executor's manifest version the call ran. */
  version?: string;
  args: unknown;
  verdict: ReviewVerdict | null;
  result: ExecutorResult;
  durationMs: number;
  /** Calls made: more than 1 when a transient failure of an idempotent executor was retried. */
  attempts?: number;
  /** SHA-256 of the canonical result (without the machine's isolation record): what replay compares. */
  resultHash?: string;
}

/** What every outcome of a run tells, whatever its end. */
interface RunRecord {
  steps: ExecutedStep[];
  /** Step numbers in the order they were dispatched (replay runs them one by one in this order). */
  order: number[];
  /** Filler values the run used. */
  fillers: Record<string, string>;
  /** Run memory at the end: each `produces` key with its value. */
  memory: RunMemoryEntry[];
  verdicts: VerifierVerdict[];
}

/** The outcome of running a plan. */
export type ExecutionOutcome =
  | (RunRecord & {
      ok: true;
      finalMessage: string;
      observations: Record<string, unknown>[];
      /** What the plan emitted: the decision's draft, or the final message as an answer. */
      candidate: Candidate;
      /** Warnings of the verify steps, one line each. */
      advisories: string[];
      /** Steps a `policy.branch` skipped. */
      skipped: number[];
    })
  | (RunRecord & {
      ok: false;
      kind: 'failed' | 'pending_approval';
      failedStep: number;
      tool: string;
      error: { class: string; message: string };
      recovery: RecoveryClass;
      /** The failure matched `policy.abortOn`: the plan stops, no Recovery. */
      aborted?: boolean;
      pending?: { approvalId: string; callHash: string; expiresAt: string; args: unknown };
    });

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
  /** The turn's pinned instant (ISO 8601): executors read it as `ctx.asOf`, and their clock stands on it. */
  asOf?: string;
  /** Slot values bound from the request, for remembered templates. */
  slots?: Record<string, string>;
  /** The fast-tier model for fillers (the same as `fillerModels.fast`). */
  fillerModel?: ChatModel;
  /** Models by tier for fillers (`tier` in the plan's `fillers`); without them fillers take their defaults. */
  fillerModels?: FillerModels;
  /** Filler values to use as they are, asking no model (replay). */
  fillerValues?: Record<string, string>;
  /** Filler answers cached across turns, keyed by plan + filler + request slots. */
  fillerCache?: FillerCache;
  executorConfig?: Record<string, Record<string, unknown>>;
  /**
   * The host services one step call is offered (`http://metnos.host/<service>`),
   * asked afresh for every call so per-call caps start at zero; the sandbox
   * hands an executor only those its manifest declares.
   */
  hostServices?: (call: { number: number; tool: string }) => HostServices | undefined;
  /** Call ids whose confirmation the user gave (approval id → granted). */
  approved?: (call: { tool: string; args: unknown; step: number }) => Promise<boolean> | boolean;
  /** Rules the plan's verify steps (without one, a verify step blocks). */
  verifier?: Verifier;
  /** Retries of idempotent steps after transient failures. */
  retry?: StepRetry;
  /** The turn's budgets, shared with its model calls. */
  budget?: TurnBudget;
  /** Object-pinned memory, for `$ref:pinned/<subject>/<property>`. */
  pinned?: PinnedReader;
  /** Told when each step starts and finishes (the turn's progress). */
  onStep?: (event: Extract<TurnEvent, { type: 'step' }>) => void;
  /** Dispatch the steps one at a time in this order (replay of a recorded run). */
  order?: readonly number[];
  signal?: AbortSignal;
}

/** Where a plan's run stands: what the steps produced and how a failure is reported. */
export interface RunState {
  plan: Plan;
  settings: ExecuteSettings;
  byName: Map<string, VerifiedExecutor>;
  observations: Array<Record<string, unknown> | undefined>;
  executed: ExecutedStep[];
  memory: RunMemory;
  fillers: Record<string, string>;
  order: number[];
  skipped: Set<number>;
  branch?: TakenBranch;
  scope(): Parameters<typeof resolvePlaceholders>[1];
  record(): RunRecord;
  fail(
    number: number,
    tool: string,
    error: { class: string; message: string },
    extra?: { aborted?: boolean; verdicts?: VerifierVerdict[] },
  ): ExecutionOutcome;
}

/** A result as recorded and compared: without the machine's isolation record. */
export function observationOf(result: ExecutorResult): Record<string, unknown> {
  const { isolation: _isolation, ...rest } = result as ExecutorResult & { isolation?: unknown };
  return rest as Record<string, unknown>;
}

/** SHA-256 (hex) of a canonical result. */
export function resultHash(result: ExecutorResult): string {
  return createHash('sha256')
    .update(canonicalJson(observationOf(result)))
    .digest('hex');
}

function createRunState(plan: Plan, settings: ExecuteSettings, fillers: Record<string, string>): RunState {
  const state: RunState = {
    plan,
    settings,
    byName: new Map(settings.executors.map((executor) => [executor.name, executor])),
    observations: new Array(plan.steps.length).fill(undefined),
    executed: [],
    memory: createRunMemory({
      request: settings.request,
      slots: settings.slots,
      runtime: settings.runtime,
      pinned: settings.pinned,
    }),
    fillers,
    order: [],
    skipped: new Set(),
    scope: () => ({
      observations: state.observations,
      fillers,
      runtime: settings.runtime,
      slots: settings.slots,
      refs: (path, text) => state.memory.read(path, text),
    }),
    record: () => ({
      steps: state.executed.sort((a, b) => a.number - b.number),
      order: [...state.order],
      fillers: { ...fillers },
      memory: state.memory.snapshot(),
      verdicts: [],
    }),
    fail: (number, tool, error, extra = {}) => ({
      ok: false,
      kind: 'failed',
      failedStep: number,
      tool,
      error,
      recovery: extra.aborted ? 'out_of_scope' : recoveryClassOf(error.class),
      ...state.record(),
      ...(extra.verdicts ? { verdicts: extra.verdicts } : {}),
      ...(extra.aborted ? { aborted: true } : {}),
    }),
  };
  return state;
}

/** Steps still to run: not done, not verify (they run last), not a branch target no branch started. */
function readySteps(
  state: RunState,
  dependencies: Array<Set<number>>,
  done: Set<number>,
  targets: Set<number>,
): { pending: number[]; ready: number[] } {
  const pending = state.plan.steps
    .map((step, index) => ({ step, number: index + 1 }))
    .filter(
      ({ step, number }) =>
        !done.has(number) &&
        step.kind !== 'verify' &&
        (!targets.has(number) || state.branch?.gotoNumber === number),
    )
    .map(({ number }) => number);
  let ready = pending.filter((number) =>
    [...dependencies[number - 1]!].every((dependency) => done.has(dependency)),
  );
  const order = state.settings.order;
  if (order) {
    const next = order.find((number) => !done.has(number));
    ready = next !== undefined && ready.includes(next) ? [next] : [];
  }
  return { pending, ready };
}

/** Marks the steps that wait (directly or not) on `failed` as skipped and done. */
function skipDependents(
  failed: number,
  dependencies: Array<Set<number>>,
  state: RunState,
  done: Set<number>,
) {
  let grew = true;
  const dropped = new Set([failed]);
  while (grew) {
    grew = false;
    dependencies.forEach((set, index) => {
      const number = index + 1;
      if (dropped.has(number) || state.plan.steps[index]!.kind === 'verify') return;
      if ([...set].some((dependency) => dropped.has(dependency))) {
        dropped.add(number);
        state.skipped.add(number);
        done.add(number);
        grew = true;
      }
    });
  }
}

/** Drafts a decision step: its candidate becomes the step's observation. */
function runDecision(state: RunState, number: number): ExecutionOutcome | undefined {
  const step = state.plan.steps[number - 1]!;
  if (step.kind !== 'decision') return undefined;
  try {
    state.observations[number - 1] = { ok: true, content: draftCandidate(state.plan, step, state.scope()) };
  } catch (error) {
    if (!PlanReferenceError.isInstance(error)) throw error;
    return state.fail(number, 'decision', { class: 'BadReference', message: error.message });
  }
  return undefined;
}

type StepSpan = ReturnType<typeof openSpan>;

/**
 * Runs a prepared call inside its `metnos.step <n>` span and records there how
 * it ended: executor version, attempts, ok or the error class, the result's hash.
 */
async function runStep(call: PreparedCall, state: RunState, step: StepSpan) {
  try {
    const item = await step.run(() => invokeWithRetry(call, state));
    const hash = resultHash(item.result);
    step.span.setAttributes({
      'metnos.step.ran': true,
      'metnos.executor.version': item.executor.version,
      'metnos.step.attempts': item.attempts,
      'metnos.step.ok': item.result.ok,
      'metnos.step.result_hash': hash,
    });
    if (!item.result.ok) failSpan(step.span, item.result.error.class);
    return { ...item, resultHash: hash };
  } catch (error) {
    failSpan(step.span, errorClassOf(error));
    throw error;
  } finally {
    step.span.end();
  }
}

/** Records what one wave's calls returned; answers the outcome when a failure ends the run. */
function settleWave(
  state: RunState,
  results: Awaited<ReturnType<typeof runStep>>[],
  dependencies: Array<Set<number>>,
  done: Set<number>,
): ExecutionOutcome | undefined {
  for (const item of results) {
    const { number, tool, args, verdict, result, durationMs, attempts, executor, resultHash: hash } = item;
    state.executed.push({
      number,
      tool,
      version: executor.version,
      args,
      verdict,
      result,
      durationMs,
      attempts,
      resultHash: hash,
    });
    state.observations[number - 1] = observationOf(result);
    const step = state.plan.steps[number - 1]!;
    if (result.ok && isToolStep(step) && step.produces !== undefined)
      state.memory.put({
        key: step.produces,
        value: result.content,
        step: number,
        schema: `${tool}@${executor.version}#output`,
      });
    state.memory.endStep(number);
    done.add(number);
  }
  for (const item of results) {
    if (item.result.ok) continue;
    const error = item.result.error;
    const policy = policyFor(
      state.plan,
      stepIdOf(state.plan.steps[item.number - 1]!, item.number),
      error.class,
    );
    if (policy?.kind === 'abort') return state.fail(item.number, item.tool, error, { aborted: true });
    if (policy?.kind === 'branch' && state.branch === undefined) {
      state.branch = policy.branch;
      skipDependents(item.number, dependencies, state, done);
      continue;
    }
    return state.fail(item.number, item.tool, error);
  }
  return undefined;
}

/**
 * Runs a validated plan deterministically: resolves `from_step`, `${stepN…}`,
 * `$ref`, `${FILLER:…}`, `${RUNTIME:…}` and `${SLOT:…}`, reviews each call
 * with the vaglio, invokes the executor (an idempotent one again after a
 * transient failure, within the turn's budget), keeps each output in run
 * memory under the key its step `produces`, drafts the decision, honours
 * `policy.abortOn` and `policy.branch`, renders the final message, and has
 * the verify steps rule the candidate before it is emitted. Steps whose
 * dependencies are all done run together; the dispatch order is recorded,
 * and `order` replays it one step at a time. Each tool step runs in a
 * `metnos.step <n>` span, under the span active when the plan started.
 *
 * @example
 * const outcome = await executePlan(plan, { executors, invoker, reviewer, request, turnId, workspace, home, runtime });
 */
export async function executePlan(plan: Plan, settings: ExecuteSettings): Promise<ExecutionOutcome> {
  const dependencies = dependenciesOf(plan);
  const targets = branchTargets(plan);
  const fillers =
    settings.fillerValues ??
    (await resolveFillers(plan, {
      request: settings.request,
      slots: settings.slots,
      models: { fast: settings.fillerModel, ...settings.fillerModels },
      cache: settings.fillerCache,
      signal: settings.signal,
    }));
  const state = createRunState(plan, settings, fillers);
  const done = new Set<number>();

  for (;;) {
    const { pending, ready } = readySteps(state, dependencies, done, targets);
    if (pending.length === 0) break;
    if (ready.length === 0)
      return state.fail(pending[0]!, stepLabel(plan, pending[0]!), {
        class: 'BadReference',
        message: settings.order
          ? 'the recorded step order does not fit the plan'
          : 'the steps depend on each other in a cycle',
      });
    const calls: Array<{ call: PreparedCall; span: StepSpan }> = [];
    const unrun = (outcome: ExecutionOutcome) => {
      for (const { span } of calls) span.span.setAttribute('metnos.step.ran', false).end();
      return outcome;
    };
    for (const number of ready) {
      state.order.push(number);
      const step = plan.steps[number - 1]!;
      if (!isToolStep(step)) {
        const failed = runDecision(state, number);
        if (failed) return unrun(failed);
        done.add(number);
        continue;
      }
      const span = openSpan(`metnos.step ${number}`, {
        'metnos.step.number': number,
        'metnos.step.tool': step.tool,
      });
      const prepared = await span
        .run(() => prepareCall(number, state))
        .catch((error: unknown) => {
          failSpan(span.span, errorClassOf(error));
          span.span.end();
          throw error;
        });
      if ('outcome' in prepared) {
        const { outcome } = prepared;
        if (!outcome.ok) failSpan(span.span.setAttribute('metnos.step.ran', false), outcome.error.class);
        span.span.end();
        return unrun(outcome);
      }
      calls.push({ call: prepared.call, span });
    }
    const results = await Promise.all(calls.map(({ call, span }) => runStep(call, state, span)));
    const ended = settleWave(state, results, dependencies, done);
    if (ended) return ended;
  }
  return finish(plan, state);
}

function stepLabel(plan: Plan, number: number): string {
  const step = plan.steps[number - 1]!;
  return isToolStep(step) ? step.tool : step.kind;
}

/** Renders the final message and the candidate once every step ran, and has the verify steps rule it. */
function finish(plan: Plan, state: RunState): ExecutionOutcome {
  const decisionIndex = plan.steps.findIndex((step) => step.kind === 'decision');
  const drafted =
    decisionIndex === -1 ? undefined : (state.observations[decisionIndex]?.content as Candidate);
  const template = state.branch?.final_message ?? plan.final_message;
  let finalMessage: string;
  try {
    finalMessage = template.trim()
      ? String(resolvePlaceholders(template, state.scope()))
      : drafted
        ? candidateMessage(drafted)
        : describeLast(state.observations[(state.executed.at(-1)?.number ?? 0) - 1]);
  } catch (error) {
    if (!PlanReferenceError.isInstance(error)) throw error;
    return state.fail(plan.steps.length, stepLabel(plan, plan.steps.length), {
      class: 'BadReference',
      message: error.message,
    });
  }
  const record = state.record();
  const candidate: Candidate = drafted ?? {
    kind: 'answer',
    message: finalMessage,
    cites: record.steps.map((step) => `step${step.number}`),
  };
  const verification = runVerifySteps(plan, state.settings.verifier, {
    candidate,
    steps: record.steps,
    executors: state.byName,
    request: state.settings.request,
    runtime: state.settings.runtime,
  });
  if (verification.blocked) {
    const number = plan.steps.findIndex((step) => step.kind === 'verify') + 1;
    return state.fail(
      number,
      'verify',
      { class: 'VerificationBlocked', message: verification.blocked.message },
      { verdicts: verification.verdicts },
    );
  }
  return {
    ok: true,
    finalMessage,
    candidate,
    advisories: verification.advisories,
    skipped: [...state.skipped].sort((a, b) => a - b),
    observations: state.observations as Record<string, unknown>[],
    ...record,
    verdicts: verification.verdicts,
  };
}

function describeLast(observation: Record<string, unknown> | undefined): string {
  const content = observation?.content;
  if (content === undefined) return 'Done.';
  return typeof content === 'string' ? content : JSON.stringify(content, null, 2);
}
