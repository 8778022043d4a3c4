import type { HostServices, VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel } from '../model.ts';
import { createTurnBudget, type TurnBudget } from './budget.ts';
import { type ExecutedStep, type ExecutionOutcome, executePlan } from './executor.ts';
import type { FillerCache } from './filler-cache.ts';
import { createModelService } from './host-model.ts';
import { extractIntent, type Intent } from './intent.ts';
import { type ModelCallRecord, recordingModel } from './lineage.ts';
import { recordPlanPassages } from './passages.ts';
import type { Plan } from './plan.ts';
import type { MemoryRecognition } from './recognition.ts';
import { describeRequest, type RequestKey } from './request-key.ts';
import { detectLanguage, type Language, type TerminationCause } from './terminator.ts';
import type {
  EngineLayer,
  EngineResult,
  EngineSettings,
  LayerPass,
  TurnEvent,
  TurnOptions,
} from './types.ts';

/** What every turn shares: the settings, resolved once per engine. */
export interface EngineParts {
  settings: EngineSettings;
  home: string;
  clock: () => Date;
  ids: () => string;
  embedderId: string;
  fillerCache: FillerCache;
  recognition: MemoryRecognition;
}

/** A proposed plan that failed: what Recovery starts from. */
export interface FailedRun {
  plan: Plan;
  planHash: string;
  outcome: Extract<ExecutionOutcome, { ok: false }>;
}

/** Why the turn has to end at the Terminator, as the layer that found out says. */
export interface Termination {
  cause: TerminationCause;
  detail: string;
  tool?: string;
  plan?: Plan;
  steps?: ExecutedStep[];
}

/**
 * One turn as the layers see it: the request and what memory keys it on,
 * the turn's models (counted), lazily its vector and intent, and what the
 * layers above left for the ones below (`failure` for Recovery,
 * `termination` for the Terminator).
 */
export interface TurnContext {
  readonly parts: EngineParts;
  readonly request: string;
  readonly turnId: string;
  readonly language: Language;
  readonly now: Date;
  /** The turn's pinned instant (`now` as ISO 8601): what executors' clocks read. */
  readonly asOf: string;
  readonly signal: AbortSignal | undefined;
  readonly key: RequestKey;
  readonly executors: VerifiedExecutor[];
  readonly models: { fast: ChatModel; middle: ChatModel; wise: ChatModel };
  /** What the turn may still spend (tool calls, tokens, cost). */
  readonly budget: TurnBudget;
  /** Every model call of the turn, in order, with its lineage and answer. */
  readonly modelLog: ModelCallRecord[];
  /** Every plan the turn ran, in order, with how it ended: what the replay bundle keeps. */
  readonly runs: Array<{ plan: Plan; slots?: Record<string, string>; outcome: ExecutionOutcome }>;
  readonly runtime: Record<string, string>;
  readonly avoid: { planHashes: string[]; memory: boolean };
  readonly passes: LayerPass[];
  /** Reports progress to the turn's listener (errors of the listener are ignored). */
  emit(event: TurnEvent): void;
  /** The request's vector (of its slot-free form), embedded once; undefined when the embedder failed. */
  vector(): Promise<Float32Array | undefined>;
  /** The intent, extracted once (one fast-tier call, or the rules). */
  intent(): Promise<Intent>;
  /** The intent if a layer has asked for it already. */
  knownIntent(): Intent | undefined;
  execute(plan: Plan, slots?: Record<string, string>): Promise<ExecutionOutcome>;
  elapsedMs(): number;
  modelCalls(): number;
  failure?: FailedRun;
  termination?: Termination;
}

function once<T>(compute: () => Promise<T>): { get(): Promise<T>; known(): T | undefined } {
  let promise: Promise<T> | undefined;
  let value: T | undefined;
  return {
    get: () =>
      (promise ??= compute().then((result) => {
        value = result;
        return result;
      })),
    known: () => value,
  };
}

/** Builds the context of one turn. */
export function createTurnContext(
  parts: EngineParts,
  request: string,
  options: TurnOptions = {},
): TurnContext {
  const { settings } = parts;
  const started = performance.now();
  const now = parts.clock();
  const language = options.language ?? detectLanguage(request);
  const counter = { calls: 0 };
  const budget = createTurnBudget(settings.budget);
  const modelLog: ModelCallRecord[] = [];
  const recording = {
    calls: modelLog,
    counter,
    budget,
    defaults: settings.modelDefaults ?? { temperature: 0, seed: 0 },
  };
  const middle = settings.models.middle ?? settings.models.fast;
  const models = {
    fast: recordingModel(settings.models.fast, 'fast', recording),
    middle: recordingModel(middle, 'middle', recording),
    wise: recordingModel(settings.models.wise ?? middle, 'wise', recording),
  };
  const runs: TurnContext['runs'] = [];
  // each step call gets its own model service (its caps start at zero); what it asks is a fast-tier
  // call of this turn: counted, charged to the budget and recorded with the executor that asked
  const modelService = settings.modelService;
  const hostServices = (): HostServices => ({
    ...settings.hostServices,
    ...(modelService === false
      ? {}
      : {
          model: createModelService({
            model: (origin) =>
              recordingModel(settings.models.fast, 'fast', { ...recording, brokered: origin }),
            limits: modelService,
          }),
        }),
  });
  const asOf = now.toISOString();
  const executors = settings.catalog.executors();
  const key = describeRequest(request);
  const turnId = options.turnId ?? parts.ids();
  const runtime = {
    actor: settings.actor ?? 'user',
    lang: language,
    channel: settings.channel ?? 'cli',
    now: asOf,
    today: now.toISOString().slice(0, 10),
  };
  const vector = once(async () => {
    try {
      return (await settings.embedder.embed([key.normalized]))[0];
    } catch {
      return undefined;
    }
  });
  const intent = once(() => extractIntent(request, { model: models.fast, signal: options.signal }));
  return {
    parts,
    request,
    turnId,
    language,
    now,
    asOf,
    signal: options.signal,
    key,
    executors,
    models,
    budget,
    modelLog,
    runs,
    runtime,
    avoid: { planHashes: options.avoid?.planHashes ?? [], memory: options.avoid?.memory ?? false },
    passes: [],
    emit: (event) => {
      try {
        options.onEvent?.(event);
      } catch {}
    },
    vector: vector.get,
    intent: intent.get,
    knownIntent: intent.known,
    execute: async (plan, slots) => {
      const outcome = await executePlan(plan, {
        executors,
        invoker: settings.invoker,
        reviewer: settings.reviewer,
        request,
        turnId,
        workspace: settings.workspace,
        home: parts.home,
        runtime,
        asOf,
        slots,
        fillerModels: models,
        fillerCache: parts.fillerCache,
        executorConfig: settings.executorConfig,
        hostServices,
        approved: settings.approved,
        verifier: settings.verifier,
        retry: settings.retry,
        budget,
        pinned: settings.pinned,
        onStep: options.onEvent,
        signal: options.signal,
      });
      runs.push({ plan, ...(slots ? { slots } : {}), outcome });
      recordPlanPassages(settings, plan, outcome);
      return outcome;
    },
    elapsedMs: () => performance.now() - started,
    modelCalls: () => counter.calls,
  };
}

/** The result of a turn, with the figures only the context knows. */
export function finishTurn(
  turn: TurnContext,
  result: Omit<
    EngineResult,
    'turnId' | 'language' | 'modelCalls' | 'latencyMs' | 'steps' | 'passes' | 'asOf'
  > & {
    steps?: ExecutedStep[];
  },
): EngineResult {
  return {
    turnId: turn.turnId,
    language: turn.language,
    asOf: turn.asOf,
    steps: [],
    ...result,
    modelCalls: turn.modelCalls(),
    latencyMs: turn.elapsedMs(),
    ...(turn.passes.length > 0 ? { passes: [...turn.passes] } : {}),
  };
}

/** A turn that stopped before a call with side effects the user has to approve. */
export function pendingApproval(
  turn: TurnContext,
  layer: EngineLayer,
  plan: Plan,
  outcome: Extract<ExecutionOutcome, { ok: false }>,
): EngineResult {
  return finishTurn(turn, {
    layer,
    finalKind: 'pending_approval',
    finalMessage: `${outcome.tool} has side effects that cannot be undone automatically; approve it to continue.`,
    plan,
    steps: outcome.steps,
    intent: turn.knownIntent(),
    pending: {
      approvalId: outcome.pending!.approvalId,
      tool: outcome.tool,
      args: outcome.pending!.args,
      step: outcome.failedStep,
    },
  });
}
