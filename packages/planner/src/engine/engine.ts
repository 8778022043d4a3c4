import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import type { Embedder } from '@metnos/autopath';
import type { AutopathStore, FastpathStore } from '@metnos/autopath/stores';
import type { Invoker, VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel } from '../model.ts';
import { type PrefilterSettings, rankExecutors } from '../prefilter.ts';
import type { CallReviewer } from '../review.ts';
import { type ExecutedStep, type ExecutionOutcome, executePlan, type RecoveryClass } from './executor.ts';
import { extractIntent, type Intent } from './intent.ts';
import { type Plan, planHash, planTools } from './plan.ts';
import { preFastpath } from './pre-fastpath.ts';
import { createProposer, type ProposeResult } from './proposer.ts';
import { bindSlots, fingerprint, normalizeRequest, templatize } from './slots.ts';
import {
  detectLanguage,
  type GapLog,
  type Language,
  type TerminationCause,
  terminationMessage,
} from './terminator.ts';
import { validatePlan } from './validator.ts';

/** Which layer answered a turn. */
export type EngineLayer = 'fastpath' | 'autopath' | 'engine' | 'recovery' | 'terminator';

/** The embedding contract the engine needs (`@metnos/autopath`'s `Embedder`). */
export type EngineEmbedder = Pick<Embedder, 'embed'>;

/** The L0 store as the engine uses it (`createFastpathStore` from `@metnos/autopath/stores`). */
export type EngineFastpathStore = Pick<
  FastpathStore,
  'save' | 'byFingerprint' | 'nearest' | 'markUsed' | 'remove'
>;

/** The L1 store as the engine uses it (`createAutopathStore` from `@metnos/autopath/stores`). */
export type EngineAutopathStore = Pick<
  AutopathStore,
  | 'assignCluster'
  | 'nearestCluster'
  | 'champion'
  | 'championForIntent'
  | 'recordSuccess'
  | 'recordFailure'
  | 'isAnti'
  | 'antiFor'
  | 'observe'
  | 'feedback'
>;

/** Settings of {@link createEngine}. */
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
  /** Similarity needed to serve from L0 by meaning, and from an L1 cluster. */
  recognition?: { fastpathThreshold?: number; fastpathMargin?: number; autopathThreshold?: number };
  prefilter?: PrefilterSettings;
  executorConfig?: Record<string, Record<string, unknown>>;
  /** Confirms side-effecting calls the user approved ahead (e.g. `--yes`). */
  approved?: (call: { tool: string; args: unknown; step: number }) => Promise<boolean> | boolean;
  clock?: () => Date;
  ids?: () => string;
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
}

function countingModel(model: ChatModel, counter: { calls: number }): ChatModel {
  return {
    id: model.id,
    provider: model.provider,
    generate: (request) => {
      counter.calls++;
      return model.generate(request);
    },
  };
}

/**
 * The engine that learns. One `runTurn` tries the layers top-down and says
 * which answered: the pre fast-path (trivial requests), L0 Fastpath (exact
 * fingerprint, then meaning), L1 Autopath (cluster champion, then exact
 * intent), and L3 — the Proposer's one-shot plan, checked by the L2
 * Validator (one re-proposal on errors), run by the deterministic Executor,
 * with one Recovery alternative and the Terminator's honest dead end. Every
 * success is remembered as a template; failures feed the anti-autopaths.
 *
 * @example
 * const engine = createEngine({ catalog, invoker, reviewer, models, embedder, fastpath, autopath, gaps, workspace });
 * const result = await engine.runTurn('read ~/notes/a.md and tell me the last 3 lines');
 * result.layer; // 'engine' the first time, 'fastpath' the next
 */
export function createEngine(settings: EngineSettings) {
  const clock = settings.clock ?? (() => new Date());
  const ids = settings.ids ?? randomUUID;
  const home = settings.home ?? homedir();
  const fastpathThreshold = settings.recognition?.fastpathThreshold ?? 0.9;
  const fastpathMargin = settings.recognition?.fastpathMargin ?? 0.02;
  const autopathThreshold = settings.recognition?.autopathThreshold ?? 0.9;
  const fillerCache = new Map<string, string>();

  return {
    async runTurn(
      request: string,
      options: { signal?: AbortSignal; turnId?: string; language?: Language } = {},
    ): Promise<EngineResult> {
      const started = performance.now();
      const turnId = options.turnId ?? ids();
      const now = clock();
      const language = options.language ?? detectLanguage(request);
      const counter = { calls: 0 };
      const models = {
        fast: countingModel(settings.models.fast, counter),
        wise: countingModel(settings.models.wise ?? settings.models.middle ?? settings.models.fast, counter),
      };
      const executors = settings.catalog.executors();
      const runtime = {
        actor: settings.actor ?? 'user',
        lang: language,
        channel: settings.channel ?? 'cli',
        now: now.toISOString(),
        today: now.toISOString().slice(0, 10),
      };
      const base = { turnId, language, modelCalls: 0, steps: [] as ExecutedStep[] };
      const done = (result: Omit<EngineResult, 'latencyMs' | 'modelCalls'>): EngineResult => ({
        ...result,
        modelCalls: counter.calls,
        latencyMs: performance.now() - started,
      });

      const terminate = (
        cause: TerminationCause,
        detail: string,
        extra: { tool?: string; intent?: Intent; plan?: Plan; steps?: ExecutedStep[] } = {},
      ): EngineResult => {
        const message = terminationMessage(cause, language, detail, extra.tool ?? '');
        try {
          settings.gaps.record({
            cause,
            signature: extra.intent?.complete
              ? `${extra.intent.verb} ${extra.intent.object}`
              : normalizeRequest(request),
            example: request,
            detail,
          });
        } catch {
          // a full disk must not turn an honest answer into a crash
        }
        settings.autopath.observe({
          turnId,
          request,
          intentHash: extra.intent?.hash,
          planHash: extra.plan ? planHash(extra.plan) : undefined,
          layer: 'terminator',
          latencyMs: performance.now() - started,
          outcome: 'failure',
          errorClass: cause,
        });
        return done({
          ...base,
          layer: 'terminator',
          finalKind: 'terminated',
          finalMessage: message.text,
          plan: extra.plan,
          steps: extra.steps ?? [],
          intent: extra.intent,
          termination: { cause, message: message.cause, action: message.action },
        });
      };

      if (executors.length === 0) return terminate('empty_catalog', 'the catalog is empty');

      const trivial = preFastpath(request, {
        now,
        actor: runtime.actor,
        language,
        timeZone: settings.timeZone,
      });
      if (trivial) {
        settings.autopath.observe({
          turnId,
          request,
          layer: 'fastpath',
          latencyMs: performance.now() - started,
          outcome: 'success',
        });
        return done({ ...base, layer: 'fastpath', finalKind: 'answer', finalMessage: trivial.answer });
      }

      const current = new Map(executors.map((executor) => [executor.name, executor.version]));
      const toolsCurrent = (tools: Array<{ name: string; version: string }>) =>
        tools.every((tool) => current.get(tool.name) === tool.version);
      const execute = (plan: Plan, slots?: Record<string, string>) =>
        executePlan(plan, {
          executors,
          invoker: settings.invoker,
          reviewer: settings.reviewer,
          request,
          turnId,
          workspace: settings.workspace,
          home,
          runtime,
          slots,
          fillerModel: models.fast,
          fillerCache,
          executorConfig: settings.executorConfig,
          approved: settings.approved,
          signal: options.signal,
        });

      const print = fingerprint(request);
      let vector: Float32Array | undefined;
      try {
        [vector] = await settings.embedder.embed([normalizeRequest(request)]);
      } catch {
        vector = undefined;
      }

      const remember = (plan: Plan, intent: Intent | undefined, latencyMs: number) => {
        const { template, slots } = templatize(plan, request);
        const tools = planTools(plan).map((name) => ({ name, version: current.get(name)! }));
        settings.fastpath.save({ fingerprint: print, request, template, slots, tools, vector });
        if (vector) {
          const cluster = settings.autopath.assignCluster(vector);
          settings.autopath.recordSuccess({
            clusterId: cluster.id,
            intentHash: intent?.hash ?? print,
            planHash: planHash(template),
            template,
            slots,
            tools,
            latencyMs,
          });
        }
      };

      const serve = async (
        layer: 'fastpath' | 'autopath',
        entry: { template: unknown; slots: string[]; tools: Array<{ name: string; version: string }> },
        intentHash: string | undefined,
        onFailure: () => void,
      ): Promise<EngineResult | undefined> => {
        if (!toolsCurrent(entry.tools)) return undefined;
        const bound = bindSlots(entry.template, entry.slots, request);
        if (!bound) return undefined;
        const parsed = bound.plan as Plan;
        const templateHash = planHash(entry.template);
        if (intentHash && settings.autopath.isAnti(intentHash, templateHash)) return undefined;
        const outcome = await execute(parsed, bound.values);
        if (outcome.ok) {
          settings.autopath.observe({
            turnId,
            request,
            intentHash,
            planHash: templateHash,
            plan: entry.template,
            layer,
            latencyMs: performance.now() - started,
            vector,
            outcome: 'success',
          });
          if (vector) {
            const cluster = settings.autopath.assignCluster(vector);
            settings.autopath.recordSuccess({
              clusterId: cluster.id,
              intentHash: intentHash ?? print,
              planHash: templateHash,
              template: entry.template,
              slots: entry.slots,
              tools: entry.tools,
              latencyMs: performance.now() - started,
            });
          }
          return done({
            ...base,
            layer,
            finalKind: 'answer',
            finalMessage: outcome.finalMessage,
            plan: parsed,
            steps: outcome.steps,
          });
        }
        if (outcome.kind === 'pending_approval') return pendingResult(layer, parsed, outcome);
        settings.autopath.recordFailure({
          intentHash: intentHash ?? print,
          planHash: templateHash,
          reason: outcome.error.message,
        });
        settings.autopath.observe({
          turnId,
          request,
          intentHash,
          planHash: templateHash,
          layer,
          latencyMs: performance.now() - started,
          vector,
          outcome: 'failure',
          errorClass: outcome.error.class,
        });
        onFailure();
        return undefined;
      };

      const pendingResult = (
        layer: EngineLayer,
        plan: Plan,
        outcome: Extract<ExecutionOutcome, { ok: false }>,
      ): EngineResult =>
        done({
          ...base,
          layer,
          finalKind: 'pending_approval',
          finalMessage: `${outcome.tool} has side effects that cannot be undone automatically; approve it to continue.`,
          plan,
          steps: outcome.steps,
          pending: {
            approvalId: outcome.pending!.approvalId,
            tool: outcome.tool,
            args: outcome.pending!.args,
            step: outcome.failedStep,
          },
        });

      // L0 Fastpath: exact fingerprint, then meaning.
      const exact = settings.fastpath.byFingerprint(print);
      if (exact) {
        const served = await serve('fastpath', exact, print, () => settings.fastpath.remove(exact.id));
        if (served) {
          settings.fastpath.markUsed(exact.id);
          return served;
        }
      } else if (vector) {
        const [best, second] = settings.fastpath.nearest(vector, 2);
        const clear =
          best &&
          best.score >= fastpathThreshold &&
          (!second ||
            best.score - second.score >= fastpathMargin ||
            planHash(second.entry.template) === planHash(best.entry.template));
        if (best && clear) {
          const served = await serve('fastpath', best.entry, best.entry.fingerprint, () => undefined);
          if (served) {
            settings.fastpath.markUsed(best.entry.id);
            return served;
          }
        }
      }

      // L1 Autopath: the champion of the nearest cluster, then the exact intent.
      if (vector) {
        const cluster = settings.autopath.nearestCluster(vector);
        if (cluster && cluster.score >= autopathThreshold) {
          const champion = settings.autopath.champion(cluster.id);
          if (champion) {
            const served = await serve('autopath', champion, champion.intentHash, () => undefined);
            if (served) return served;
          }
        }
      }
      const intent = await extractIntent(request, { model: models.fast, signal: options.signal });
      if (intent.complete) {
        const champion = settings.autopath.championForIntent(intent.hash);
        if (champion) {
          const served = await serve('autopath', champion, intent.hash, () => undefined);
          if (served) return { ...served, intent };
        }
      }

      // L3: propose, validate (one re-proposal), execute, recover once, or terminate.
      const candidates = rankExecutors(request, executors, settings.prefilter).executors;
      const proposer = createProposer({ model: models.wise });
      const excludedPlans = settings.autopath.antiFor(intent.hash).map((anti) => anti.planHash);

      const proposeValid = async (exclude: {
        tools?: string[];
        planHashes?: string[];
        reason?: string;
      }): Promise<{ plan: Plan } | { cause: TerminationCause; detail: string }> => {
        let proposal: ProposeResult = await proposer.propose({
          request,
          candidates,
          intent,
          exclude,
          signal: options.signal,
        });
        for (let attempt = 0; ; attempt++) {
          if (!proposal.ok) {
            return proposal.cause === 'model'
              ? { cause: 'model_unreachable', detail: proposal.reason }
              : { cause: 'plan_unreadable', detail: proposal.reason };
          }
          const plan = proposal.plan;
          if (plan.out_of_scope !== undefined && plan.steps.length === 0)
            return { cause: 'out_of_scope', detail: plan.out_of_scope };
          const errors = validatePlan(plan, executors);
          const hash = planHash(templatize(plan, request).template);
          if ((exclude.planHashes ?? []).includes(hash))
            errors.push('this plan already failed for this request; propose a different one');
          if (errors.length === 0) return { plan };
          if (attempt >= 1) return { cause: 'plan_unreadable', detail: errors.slice(0, 3).join('; ') };
          proposal = await proposer.propose({
            request,
            candidates,
            intent,
            exclude,
            errors,
            previous: plan,
            signal: options.signal,
          });
        }
      };

      /** A proposed plan that ran: remembered, observed, answered. */
      const succeed = (
        layer: 'engine' | 'recovery',
        plan: Plan,
        outcome: Extract<ExecutionOutcome, { ok: true }>,
      ) => {
        remember(plan, intent, performance.now() - started);
        settings.autopath.observe({
          turnId,
          request,
          intentHash: intent.hash,
          planHash: planHash(templatize(plan, request).template),
          plan,
          layer,
          latencyMs: performance.now() - started,
          vector,
          outcome: 'success',
        });
        return done({
          ...base,
          layer,
          finalKind: 'answer',
          finalMessage: outcome.finalMessage,
          plan,
          steps: outcome.steps,
          intent,
        });
      };
      /** A proposed plan that failed: counted towards its anti-autopath, observed; returns its hash. */
      const failed = (
        layer: 'engine' | 'recovery',
        plan: Plan,
        outcome: Extract<ExecutionOutcome, { ok: false }>,
      ) => {
        const hash = planHash(templatize(plan, request).template);
        settings.autopath.recordFailure({
          intentHash: intent.hash,
          planHash: hash,
          reason: outcome.error.message,
        });
        settings.autopath.observe({
          turnId,
          request,
          intentHash: intent.hash,
          planHash: hash,
          plan,
          layer,
          latencyMs: performance.now() - started,
          vector,
          outcome: 'failure',
          errorClass: outcome.error.class,
        });
        return hash;
      };

      const first = await proposeValid({ planHashes: excludedPlans });
      if ('cause' in first) return terminate(first.cause, first.detail, { intent });
      const outcome = await execute(first.plan);
      if (outcome.ok) return succeed('engine', first.plan, outcome);
      if (outcome.kind === 'pending_approval') return pendingResult('engine', first.plan, outcome);
      const failedHash = failed('engine', first.plan, outcome);
      if (outcome.recovery === 'out_of_scope') {
        const cause: TerminationCause = outcome.error.class === 'Blocked' ? 'blocked' : 'out_of_scope';
        return terminate(cause, `${outcome.tool}: ${outcome.error.message}`, {
          tool: outcome.tool,
          intent,
          plan: first.plan,
          steps: outcome.steps,
        });
      }

      // Recovery: one alternative that excludes the failed plan and, for a wrong tool, that tool.
      const exclusion = recoveryExclusion(outcome.recovery, outcome.tool, outcome.error.message);
      const second = await proposeValid({ ...exclusion, planHashes: [...excludedPlans, failedHash] });
      if ('cause' in second) {
        return terminate(
          outcome.recovery === 'missing_input' ? 'missing_input' : 'recovery_failed',
          `${outcome.error.message}`,
          { tool: outcome.tool, intent, plan: first.plan, steps: outcome.steps },
        );
      }
      const retry = await execute(second.plan);
      if (retry.ok) return succeed('recovery', second.plan, retry);
      if (retry.kind === 'pending_approval') return pendingResult('recovery', second.plan, retry);
      failed('recovery', second.plan, retry);
      const cause: TerminationCause =
        retry.recovery === 'missing_input'
          ? 'missing_input'
          : retry.recovery === 'out_of_scope'
            ? 'out_of_scope'
            : 'recovery_failed';
      return terminate(cause, `${retry.tool}: ${retry.error.message}`, {
        tool: retry.tool,
        intent,
        plan: second.plan,
        steps: retry.steps,
      });
    },

    /** Records feedback (up, down, retry) for a turn; a down also drops the L0 shortcut that served it. */
    feedback(turnId: string, kind: 'up' | 'down' | 'retry', request?: string): boolean {
      const recorded = settings.autopath.feedback(turnId, kind);
      if (kind === 'down' && request) {
        const entry = settings.fastpath.byFingerprint(fingerprint(request));
        if (entry) settings.fastpath.remove(entry.id);
      }
      return recorded;
    },
  };
}

function recoveryExclusion(
  recovery: RecoveryClass,
  tool: string,
  message: string,
): { tools?: string[]; reason: string } {
  switch (recovery) {
    case 'wrong_tool':
      return { tools: [tool], reason: `${tool} failed: ${message}` };
    case 'wrong_args':
      return {
        reason: `${tool} was given wrong arguments: ${message}; use canonical arguments and explicit references`,
      };
    default:
      return { reason: `${tool} lacked an input: ${message}; choose another way` };
  }
}

export type Engine = ReturnType<typeof createEngine>;
