import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { HostService, Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { Verifier } from '@metnos/vaglio';
import type { ChatModel, ChatResponse } from '../model.ts';
import type { CallReviewer } from '../review.ts';
import { type ExecutionOutcome, executePlan, resultHash } from './executor.ts';
import { createModelService, type ModelServiceLimits } from './host-model.ts';
import { type ModelCallRecord, requestHashOf } from './lineage.ts';
import { canonicalJson, isToolStep, type Plan, parsePlan, planHash, validatePlanShape } from './plan.ts';
import type { RunMemoryEntry } from './run-memory.ts';
import type { TurnContext } from './turn-context.ts';
import type { EngineResult } from './types.ts';
import { validatePlan } from './validator.ts';

/** The format tag of a replay bundle. */
export const REPLAY_FORMAT = 'metnos.replay/1';

/** One plan the turn ran, with everything needed to run it again and compare. */
export interface ReplayRun {
  plan: Plan;
  planHash: string;
  slots?: Record<string, string>;
  /** Dispatch order of the steps. */
  order: number[];
  fillers: Record<string, string>;
  steps: Array<{
    number: number;
    tool: string;
    version?: string;
    argsHash: string;
    args: unknown;
    resultHash: string;
    result: unknown;
    attempts?: number;
  }>;
  memory: RunMemoryEntry[];
  verdicts: Array<{ pack: { id: string; version: string | null }; outcome: string; hash: string }>;
  ended: { ok: true; finalMessage: string } | { ok: false; failedStep: number; errorClass: string };
}

/** Everything a turn needs to be re-run and checked: seed 003's replay bundle. */
export interface ReplayBundle {
  format: typeof REPLAY_FORMAT;
  turnId: string;
  request: string;
  asOf: string;
  language: string;
  runtime: Record<string, string>;
  /** The layer that answered, and the trail above it. */
  layer: string;
  passes: Array<{ layer: string; reason: string }>;
  /** Every model call, in order, with its lineage and answer. */
  modelCalls: ModelCallRecord[];
  /** The executors the runs called, pinned by version and digests. */
  executors: Array<{ name: string; version: string; digests: VerifiedExecutor['digests'] }>;
  runs: ReplayRun[];
  finalKind: string;
  finalMessage: string;
}

/** Where bundles go: `createReplayStore` keeps them as files; the engine calls `save` after every turn. */
export interface ReplaySink {
  save(bundle: ReplayBundle): void;
}

const sha256 = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

function runOf(run: TurnContext['runs'][number]): ReplayRun {
  const { plan, slots, outcome } = run;
  return {
    plan,
    planHash: planHash(plan),
    ...(slots ? { slots } : {}),
    order: outcome.order,
    fillers: outcome.fillers,
    steps: outcome.steps.map((step) => ({
      number: step.number,
      tool: step.tool,
      ...(step.version ? { version: step.version } : {}),
      argsHash: sha256(step.args),
      args: step.args,
      resultHash: step.resultHash ?? resultHash(step.result),
      result: JSON.parse(canonicalJson(stripIsolation(step.result))),
      ...(step.attempts ? { attempts: step.attempts } : {}),
    })),
    memory: outcome.memory,
    verdicts: outcome.verdicts.map((verdict) => ({
      pack: verdict.pack,
      outcome: verdict.outcome,
      hash: verdict.hash,
    })),
    ended: outcome.ok
      ? { ok: true, finalMessage: outcome.finalMessage }
      : { ok: false, failedStep: outcome.failedStep, errorClass: outcome.error.class },
  };
}

function stripIsolation(result: unknown): unknown {
  const { isolation: _isolation, ...rest } = result as { isolation?: unknown };
  return rest;
}

/** The replay bundle of a finished turn. */
export function replayBundleOf(turn: TurnContext, result: EngineResult): ReplayBundle {
  const used = new Set(
    turn.runs.flatMap((run) => run.plan.steps.filter(isToolStep).map((step) => step.tool)),
  );
  return {
    format: REPLAY_FORMAT,
    turnId: turn.turnId,
    request: turn.request,
    asOf: turn.asOf,
    language: turn.language,
    runtime: { ...turn.runtime },
    layer: result.layer,
    passes: [...(result.passes ?? [])],
    modelCalls: turn.modelLog.map((call) => ({ ...call })),
    executors: turn.executors
      .filter((executor) => used.has(executor.name))
      .map((executor) => ({
        name: executor.name,
        version: executor.version,
        digests: { ...executor.digests },
      })),
    runs: turn.runs.map(runOf),
    finalKind: result.finalKind,
    finalMessage: result.finalMessage,
  };
}

const TURN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Keeps one bundle per turn as `<dir>/<turn id>.json` (written whole:
 * a temp file, fsync, rename; mode 0600). A turn id that is not a plain
 * name is refused, so no bundle lands outside the folder.
 *
 * @example
 * const replay = createReplayStore({ dir: join(dataDir, 'replay') });
 * const engine = createEngine({ ...parts, replay });
 * const bundle = replay.load(result.turnId);
 */
export function createReplayStore(settings: { dir: string }) {
  const pathOf = (turnId: string) => {
    if (!TURN_ID.test(turnId)) throw new ReplayError(`"${turnId}" is not a turn id`);
    return join(settings.dir, `${turnId}.json`);
  };
  return {
    save(bundle: ReplayBundle): void {
      mkdirSync(settings.dir, { recursive: true, mode: 0o700 });
      const path = pathOf(bundle.turnId);
      const temp = `${path}.${process.pid}.tmp`;
      const fd = openSync(temp, 'w', 0o600);
      try {
        writeSync(fd, `${JSON.stringify(bundle, null, 1)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, path);
    },
    /** The bundle of a turn; a missing or unreadable one is a {@link ReplayError}. */
    load(turnId: string): ReplayBundle {
      return readReplayBundle(pathOf(turnId));
    },
  };
}

/** A bundle that cannot be read or is not one. */
export class ReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

/** Reads and checks the shape of a bundle file. */
export function readReplayBundle(path: string): ReplayBundle {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ReplayError(
      code === 'ENOENT'
        ? `no replay bundle at ${path}`
        : `the replay bundle at ${path} is unreadable: ${(error as Error).message}`,
    );
  }
  const bundle = data as Partial<ReplayBundle>;
  if (bundle?.format !== REPLAY_FORMAT || typeof bundle.turnId !== 'string' || !Array.isArray(bundle.runs))
    throw new ReplayError(`${path} is not a ${REPLAY_FORMAT} bundle`);
  return bundle as ReplayBundle;
}

/** Where a replay first differed from the record. */
export interface Divergence {
  at: 'executor' | 'model' | 'plan' | 'order' | 'args' | 'result' | 'end';
  run?: number;
  step?: number;
  tool?: string;
  expected: string;
  actual: string;
  message: string;
}

/** What `replayTurn` found. */
export interface ReplayReport {
  turnId: string;
  /** Steps run again and matched. */
  matched: number;
  /** Steps not run again because their executor has side effects (the recorded result stands). */
  notRerun: Array<{ run: number; step: number; tool: string }>;
  divergence?: Divergence;
}

/** What replay needs of the host: the catalog as it is now, an invoker and the vaglio. */
export interface ReplaySettings {
  executors: readonly VerifiedExecutor[];
  invoker: Pick<Invoker, 'invoke'>;
  reviewer: CallReviewer;
  workspace: string;
  home: string;
  verifier?: Verifier;
  /** The caps the turn's `model` host service had (the engine's `modelService`); default the engine's defaults. */
  modelService?: ModelServiceLimits;
}

function checkExecutors(bundle: ReplayBundle, byName: Map<string, VerifiedExecutor>): Divergence | undefined {
  for (const pinned of bundle.executors) {
    const current = byName.get(pinned.name);
    if (!current)
      return {
        at: 'executor',
        tool: pinned.name,
        expected: pinned.version,
        actual: 'absent',
        message: `${pinned.name} is no longer in the catalog`,
      };
    for (const part of ['code', 'manifest', 'schema', 'profileLock'] as const) {
      if (current.digests[part] !== pinned.digests[part])
        return {
          at: 'executor',
          tool: pinned.name,
          expected: `${pinned.version} ${part} ${pinned.digests[part]}`,
          actual: `${current.version} ${part} ${current.digests[part]}`,
          message: `${pinned.name}'s ${part} is not the one the turn ran`,
        };
    }
  }
  return undefined;
}

/** Every recorded Proposer answer that parses as a plan; the plans run must be among them or come from memory. */
function checkModelPlans(bundle: ReplayBundle): Divergence | undefined {
  const proposed = new Set(
    bundle.modelCalls
      .map((call) => (call.response ? parsePlan(call.response.text) : undefined))
      .filter((parsed) => parsed?.ok)
      .map((parsed) => planHash((parsed as { plan: Plan }).plan)),
  );
  for (const [index, run] of bundle.runs.entries()) {
    if (planHash(run.plan) !== run.planHash)
      return {
        at: 'plan',
        run: index + 1,
        expected: run.planHash,
        actual: planHash(run.plan),
        message: `run ${index + 1}: the plan is not the one recorded`,
      };
    const fromMemory = bundle.layer === 'fastpath' || bundle.layer === 'autopath';
    if (!fromMemory && !proposed.has(run.planHash) && proposed.size > 0)
      return {
        at: 'model',
        run: index + 1,
        expected: run.planHash,
        actual: [...proposed].join(', '),
        message: `run ${index + 1}: no recorded model answer yields this plan`,
      };
  }
  return undefined;
}

/** A bundle is a file: each plan is read with the grammar and checked by the Validator, as a proposal is. */
function checkPlans(bundle: ReplayBundle, executors: readonly VerifiedExecutor[]): Divergence | undefined {
  for (const [index, run] of bundle.runs.entries()) {
    const shaped = validatePlanShape(run.plan);
    const errors = shaped.ok
      ? validatePlan(shaped.plan, executors, { slots: Object.keys(run.slots ?? {}) })
      : shaped.errors;
    if (errors.length > 0)
      return {
        at: 'plan',
        run: index + 1,
        expected: 'a valid plan',
        actual: errors[0]!,
        message: `run ${index + 1}: the recorded plan is not valid: ${errors[0]}`,
      };
  }
  return undefined;
}

/**
 * The `model` host service of a replay: the same service the turn had, with a
 * model that answers each request from the record of the same executor call
 * (in order) once its request hash matches, and asks no model. A request the
 * record does not hold, or holds otherwise, is a divergence.
 */
function recordedModelService(
  bundle: ReplayBundle,
  limits: ModelServiceLimits | undefined,
  diverged: (divergence: Divergence) => void,
): () => HostService {
  const used = new Set<number>();
  const answer = (origin: { executor: string; traceId: string }): ChatModel => ({
    id: 'replay',
    provider: 'replay',
    async generate(request) {
      const record = bundle.modelCalls.find(
        (call) =>
          call.brokered?.traceId === origin.traceId &&
          call.brokered.executor === origin.executor &&
          !used.has(call.index),
      );
      const where = `${origin.executor} (${origin.traceId})`;
      if (!record) {
        diverged({
          at: 'model',
          tool: origin.executor,
          expected: 'no further model request',
          actual: 'a model request',
          message: `${where} asked the model more often than the record holds`,
        });
        throw new ReplayError('not in the record');
      }
      used.add(record.index);
      const { temperature, seed } = record.parameters;
      const hash = requestHashOf({
        ...request,
        ...(temperature === undefined ? {} : { temperature }),
        ...(seed === undefined ? {} : { seed }),
      });
      if (hash !== record.requestHash) {
        diverged({
          at: 'model',
          tool: origin.executor,
          expected: record.requestHash,
          actual: hash,
          message: `${where} asked the model something other than the record holds`,
        });
        throw new ReplayError('not the recorded request');
      }
      if (!record.response) throw new ReplayError(record.error ?? 'the recorded call failed');
      return {
        text: record.response.text,
        toolCalls: record.response.toolCalls ?? [],
        usage: record.response.usage,
        ...(record.response.finishReason === undefined ? {} : { finishReason: record.response.finishReason }),
      } as ChatResponse;
    },
  });
  return () => createModelService({ model: answer, limits });
}

/** Side-effecting, non-idempotent executors are not run again by a replay. */
function skipsOnReplay(executor: VerifiedExecutor | undefined): boolean {
  return executor ? executor.manifest.contract.side_effects : false;
}

/**
 * Re-runs a recorded turn from its bundle and checks it step by step: the
 * executors are the ones the turn ran (version and digests), every plan
 * run is one a recorded model answer yields (or came from memory), each
 * run re-executes with the recorded asOf, fillers and step order — one
 * step at a time — and every step's arguments and result hash, and how
 * the run ended, match the record. Steps of executors with side effects
 * are not run again: their recorded result stands in. Stops at, and
 * reports, the first divergence.
 *
 * @example
 * const report = await replayTurn(store.load(turnId), { executors: catalog.executors(), invoker, reviewer, workspace, home });
 * report.divergence?.message; // 'run 1, step 2 (fs_read): the result differs from the record'
 */
export async function replayTurn(bundle: ReplayBundle, settings: ReplaySettings): Promise<ReplayReport> {
  const byName = new Map(settings.executors.map((executor) => [executor.name, executor]));
  const report: ReplayReport = { turnId: bundle.turnId, matched: 0, notRerun: [] };
  const early =
    checkExecutors(bundle, byName) ?? checkPlans(bundle, settings.executors) ?? checkModelPlans(bundle);
  if (early) return { ...report, divergence: early };
  let modelDivergence: Divergence | undefined;
  const model = recordedModelService(bundle, settings.modelService, (divergence) => {
    modelDivergence ??= divergence;
  });
  for (const [index, run] of bundle.runs.entries()) {
    const recorded = new Map(run.steps.map((step) => [step.number, step]));
    const invoker: Pick<Invoker, 'invoke'> = {
      invoke: async (name, args, context) => {
        const number = Number(String(context.traceId).split(':').at(-1));
        const step = recorded.get(number);
        if (skipsOnReplay(byName.get(name))) {
          report.notRerun.push({ run: index + 1, step: number, tool: name });
          // a bundle without the record of such a step gets a failure, never a real call
          return (step?.result ?? {
            ok: false,
            error: {
              class: 'NotRecorded',
              message: `${name} has side effects and the bundle holds no result for it`,
            },
          }) as Awaited<ReturnType<Invoker['invoke']>>;
        }
        return settings.invoker.invoke(name, args, context);
      },
    };
    // Nothing with side effects runs in a replay (the invoker above hands back the record), so its
    // review is moot; every other call meets the real vaglio, and no confirmation is ever granted.
    const reviewer: CallReviewer = {
      evaluate: (call, context) =>
        skipsOnReplay(byName.get(call.executor.name))
          ? { approved: true, reason: 'not run again: side effects', score: 1, blocked_by: null }
          : settings.reviewer.evaluate(call, context),
    };
    const outcome = await executePlan(run.plan, {
      executors: settings.executors,
      invoker,
      reviewer,
      request: bundle.request,
      turnId: bundle.turnId,
      workspace: settings.workspace,
      home: settings.home,
      runtime: bundle.runtime,
      asOf: bundle.asOf,
      ...(run.slots ? { slots: run.slots } : {}),
      fillerValues: run.fillers,
      verifier: settings.verifier,
      retry: { attempts: 1 },
      order: run.order,
      approved: () => false,
      hostServices: () => ({ model: model() }),
    });
    const divergence =
      (modelDivergence && { ...modelDivergence, run: index + 1 }) ?? compareRun(index + 1, run, outcome);
    report.matched += outcome.steps.filter(
      (step) => recorded.get(step.number)?.resultHash === step.resultHash,
    ).length;
    if (divergence) return { ...report, divergence };
  }
  return report;
}

function compareRun(run: number, recorded: ReplayRun, outcome: ExecutionOutcome): Divergence | undefined {
  const replayed = new Map(outcome.steps.map((step) => [step.number, step]));
  for (const number of recorded.order) {
    const expected = recorded.steps.find((step) => step.number === number);
    if (!expected) continue;
    const actual = replayed.get(number);
    const where = `run ${run}, step ${number} (${expected.tool})`;
    if (!actual)
      return {
        at: 'order',
        run,
        step: number,
        tool: expected.tool,
        expected: 'ran',
        actual: 'did not run',
        message: `${where}: the replay did not reach this step`,
      };
    const ownHash = sha256(expected.result);
    if (ownHash !== expected.resultHash)
      return {
        at: 'result',
        run,
        step: number,
        tool: expected.tool,
        expected: expected.resultHash,
        actual: ownHash,
        message: `${where}: the recorded result does not match the recorded hash (the bundle was edited)`,
      };
    const argsHash = sha256(actual.args);
    if (argsHash !== expected.argsHash)
      return {
        at: 'args',
        run,
        step: number,
        tool: expected.tool,
        expected: expected.argsHash,
        actual: argsHash,
        message: `${where}: the arguments differ from the record`,
      };
    if (actual.resultHash !== expected.resultHash)
      return {
        at: 'result',
        run,
        step: number,
        tool: expected.tool,
        expected: expected.resultHash,
        actual: actual.resultHash ?? '',
        message: `${where}: the result differs from the record`,
      };
  }
  if (outcome.order.join(',') !== recorded.order.join(','))
    return {
      at: 'order',
      run,
      expected: recorded.order.join(','),
      actual: outcome.order.join(','),
      message: `run ${run}: the steps ran in another order`,
    };
  const ended = outcome.ok
    ? `ok: ${outcome.finalMessage}`
    : `failed at ${outcome.failedStep}: ${outcome.error.class}`;
  const expectedEnd = recorded.ended.ok
    ? `ok: ${recorded.ended.finalMessage}`
    : `failed at ${recorded.ended.failedStep}: ${recorded.ended.errorClass}`;
  if (ended !== expectedEnd)
    return {
      at: 'end',
      run,
      expected: expectedEnd,
      actual: ended,
      message: `run ${run}: the run ended otherwise than recorded`,
    };
  return undefined;
}
