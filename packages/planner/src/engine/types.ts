import type { Embedder } from '@metnos/autopath';
import type { AgingRules, AutopathStore, FastpathStore } from '@metnos/autopath/stores';
import type { HostServices, Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { Verifier } from '@metnos/vaglio';
import type { ChatModel } from '../model.ts';
import type { ChainComposer, PassageRecorder } from '../passages.ts';
import type { PrefilterSettings } from '../prefilter.ts';
import type { CallReviewer } from '../review.ts';
import type { TurnBudgetLimits } from './budget.ts';
import type { ExecutedStep } from './executor.ts';
import type { FillerCache } from './filler-cache.ts';
import type { ModelServiceLimits } from './host-model.ts';
import type { Intent } from './intent.ts';
import type { ModelDefaults } from './lineage.ts';
import type { Plan } from './plan.ts';
import type { ReplaySink } from './replay.ts';
import type { PinnedReader } from './run-memory.ts';
import type { StepRetry } from './step-call.ts';
import type { GapLog, Language, TerminationCause } from './terminator.ts';

/** Which layer answered a turn. */
export type EngineLayer = 'fastpath' | 'autopath' | 'engine' | 'recovery' | 'terminator';

/**
 * The embedding contract the engine needs (`@metnos/autopath`'s `Embedder`).
 * `id` names the vector space: vectors and calibrations of another id are
 * never compared with this one's (without it, `'unnamed'`).
 */
export type EngineEmbedder = Pick<Embedder, 'embed'> & { readonly id?: string };

/** The L0 store as the engine uses it (`createFastpathStore` from `@metnos/autopath/stores`). */
export type EngineFastpathStore = Pick<
  FastpathStore,
  | 'save'
  | 'byFingerprint'
  | 'get'
  | 'list'
  | 'labelSimilarities'
  | 'markUsed'
  | 'remove'
  | 'removePlan'
  | 'setVectors'
  | 'age'
  | 'invalidate'
  | 'calibrations'
>;

/** The L1 store as the engine uses it (`createAutopathStore` from `@metnos/autopath/stores`). */
export type EngineAutopathStore = Pick<
  AutopathStore,
  | 'assignCluster'
  | 'champion'
  | 'championForIntent'
  | 'championSimilarities'
  | 'champions'
  | 'get'
  | 'recordSuccess'
  | 'recordFailure'
  | 'isAnti'
  | 'antiFor'
  | 'observe'
  | 'observations'
  | 'feedback'
  | 'invalidate'
  | 'calibrations'
>;

/** Settings of `createEngine`. */
export interface EngineSettings {
  catalog: { executors(): VerifiedExecutor[] };
  invoker: Pick<Invoker, 'invoke'>;
  reviewer: CallReviewer;
  models: { fast: ChatModel; middle?: ChatModel; wise?: ChatModel };
  embedder: EngineEmbedder;
  fastpath: EngineFastpathStore;
  autopath: EngineAutopathStore;
  gaps: GapLog;
  workspace: string;
  home?: string;
  actor?: string;
  channel?: string;
  timeZone?: string;
  /**
   * The recognizers' starting rules: the similarity needed to serve from L0
   * by meaning (default 0.9, with a lead of 0.02 over the next plan) and from
   * an L1 cluster (default 0.9, lead 0.02). Calibration may tighten them.
   */
  recognition?: {
    fastpathThreshold?: number;
    fastpathMargin?: number;
    autopathThreshold?: number;
    autopathMargin?: number;
  };
  /** Aging of L0 shortcuts, applied on open and by `maintain()`. */
  aging?: AgingRules;
  /**
   * How often a turn runs the maintenance itself when nothing else has
   * (aging, invalidation, re-embedding, calibration). Default one day;
   * `false` leaves it to the open and to `maintain()` calls.
   */
  maintenanceEveryMs?: number | false;
  /** How old a stored calibration may get before maintenance fits it again. Default one day. */
  calibrateEveryMs?: number;
  prefilter?: PrefilterSettings;
  /**
   * The mnestome (`createMnestome` from `@metnos/mnestome`): the passages of
   * plans that ran (`from_step`, `${stepN…}`) and proto-mnests for tools a
   * plan named that do not exist are recorded there. Writes never fail a turn.
   */
  mnestome?: PassageRecorder;
  /** Reactive compose (`createComposer` from `@metnos/synt`): Recovery asks it before giving up on a missing tool. */
  composer?: ChainComposer;
  executorConfig?: Record<string, Record<string, unknown>>;
  /**
   * Host services the app provides to every step call beside the engine's own
   * `model` (e.g. `reminders` over the scheduler). An executor reaches one
   * only when its manifest declares `host:<service>`.
   */
  hostServices?: HostServices;
  /**
   * The `model` host service: one fast-tier completion per request, counted in
   * the turn's budget and recorded in its lineage. Per-call caps (default 4
   * requests, 8 000 tokens); `false` offers no model to executors.
   */
  modelService?: ModelServiceLimits | false;
  /** Confirms side-effecting calls the user approved ahead (e.g. `--yes`). */
  approved?: (call: { tool: string; args: unknown; step: number }) => Promise<boolean> | boolean;
  /** Rules the plans' verify steps (`createVerifier()` from `@metnos/vaglio`); without it a verify step blocks. */
  verifier?: Verifier;
  /** What one turn may spend: executor calls, model tokens, model cost. Unlimited when left out. */
  budget?: TurnBudgetLimits;
  /** Retries of idempotent steps after transient failures (default 3 calls, 200 ms backoff). */
  retry?: StepRetry;
  /** Sampling parameters of every model call (default temperature 0, seed 0), recorded in the lineage. */
  modelDefaults?: ModelDefaults;
  /** Object-pinned memory plans read with `$ref:pinned/<subject>/<property>`. */
  pinned?: PinnedReader;
  /**
   * Where filler answers are kept between turns (default: a `Map` for this
   * engine's life). `createFillerCache` keeps them in SQLite across processes.
   */
  fillerCache?: FillerCache;
  /** Receives each turn's replay bundle (`createReplayStore` keeps them as files). */
  replay?: ReplaySink;
  clock?: () => Date;
  ids?: () => string;
}

/** A layer that did not answer, and why: the turn's trail through the layers. */
export interface LayerPass {
  layer: string;
  reason: string;
}

/** What a turn returns. */
export interface EngineResult {
  turnId: string;
  layer: EngineLayer;
  finalKind: 'answer' | 'pending_approval' | 'terminated';
  finalMessage: string;
  language: Language;
  plan?: Plan;
  steps: ExecutedStep[];
  modelCalls: number;
  latencyMs: number;
  intent?: Intent;
  termination?: { cause: TerminationCause; message: string; action: string };
  pending?: { approvalId: string; tool: string; args: unknown; step: number };
  /** The layers above the one that answered, each with why it passed. */
  passes?: LayerPass[];
  /** The turn's pinned instant (ISO 8601): what every executor's clock read. */
  asOf?: string;
  /** Warnings of the plan's verify steps: the answer stands, with these beside it. */
  advisories?: string[];
}

/**
 * What a turn reports while it runs, in order: each layer tried (and why it
 * passed), each plan step started and finished. A listener that throws is
 * ignored: progress never changes a turn.
 */
export type TurnEvent =
  | { type: 'layer'; layer: string }
  | { type: 'pass'; layer: string; reason: string }
  | { type: 'step'; phase: 'started'; number: number; tool: string }
  | {
      type: 'step';
      phase: 'finished';
      number: number;
      tool: string;
      ok: boolean;
      errorClass?: string;
      attempts: number;
    };

/** Options of one turn. */
export interface TurnOptions {
  signal?: AbortSignal;
  /** Called with each {@link TurnEvent} as the turn runs (an API streams them). */
  onEvent?: (event: TurnEvent) => void;
  turnId?: string;
  language?: Language;
  /**
   * Plans this turn must not use, and whether to skip memory (L0, L1)
   * altogether: what a `retry` asks for.
   */
  avoid?: { planHashes?: string[]; memory?: boolean };
}
