import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { applyFeedback, type FeedbackKind, type FeedbackOutcome } from './feedback.ts';
import { dispatch, type Layer } from './layer.ts';
import { autopathLayer } from './layers/autopath-layer.ts';
import { fastpathLayer } from './layers/fastpath-layer.ts';
import { preFastpathLayer } from './layers/pre-fastpath-layer.ts';
import { proposalLayer } from './layers/proposal-layer.ts';
import { recoveryLayer } from './layers/recovery-layer.ts';
import { terminatorLayer } from './layers/terminator-layer.ts';
import { ageAndInvalidate, type MaintenanceReport, maintainMemory } from './maintenance.ts';
import { createMemoryRecognition } from './recognition.ts';
import { replayBundleOf } from './replay.ts';
import { inSpan } from './telemetry.ts';
import { createTurnContext, type EngineParts } from './turn-context.ts';
import type { EngineResult, EngineSettings, TurnOptions } from './types.ts';

export type {
  EngineAutopathStore,
  EngineEmbedder,
  EngineFastpathStore,
  EngineLayer,
  EngineResult,
  EngineSettings,
  LayerPass,
  TurnEvent,
  TurnOptions,
} from './types.ts';

/**
 * The layers a turn walks, in order; the first that answers ends it: the
 * pre fast-path (trivial requests by rule), L0 Fastpath and L1 Autopath
 * (memory, no model but the intent), L3 with L2 (Proposer, Validator,
 * Executor), Recovery (one alternative) and the Terminator (always answers).
 */
export const ENGINE_LAYERS: readonly Layer[] = [
  preFastpathLayer,
  fastpathLayer,
  autopathLayer,
  proposalLayer,
  recoveryLayer,
  terminatorLayer,
];

/**
 * The engine variants (`METNOS_ENGINE`, `[runtime] engine`): which layers a
 * turn walks.
 * - `learning` (default): every layer, memory first;
 * - `oneshot`: no memory layers, every turn goes to the Proposer (what was
 *   learned is still recorded, but nothing is served from it);
 * - `strict`: memory and the Proposer, no Recovery: a failed plan goes
 *   straight to the Terminator.
 * (`loop`, the step-by-step planner of `createPlanner`, is the fourth, chosen by the CLI.)
 */
export const ENGINE_VARIANTS = {
  learning: ENGINE_LAYERS,
  oneshot: [preFastpathLayer, proposalLayer, recoveryLayer, terminatorLayer],
  strict: [preFastpathLayer, fastpathLayer, autopathLayer, proposalLayer, terminatorLayer],
} as const satisfies Record<string, readonly Layer[]>;

export type EngineVariant = keyof typeof ENGINE_VARIANTS;

/**
 * The layers of a variant by name; an unknown name is a `RangeError` that
 * lists the known ones.
 *
 * @example
 * const engine = createEngine(settings, engineVariant(process.env.METNOS_ENGINE ?? 'learning'));
 */
export function engineVariant(name: string): readonly Layer[] {
  if (!Object.hasOwn(ENGINE_VARIANTS, name))
    throw new RangeError(
      `unknown engine variant "${name}" (known: ${Object.keys(ENGINE_VARIANTS).join(', ')})`,
    );
  return ENGINE_VARIANTS[name as EngineVariant];
}

const DAY = 86_400_000;

/** What every turn of an engine shares, from its settings (the recognizers read their calibrations here). */
export function createEngineParts(settings: EngineSettings): EngineParts {
  const clock = settings.clock ?? (() => new Date());
  const embedderId = settings.embedder.id ?? 'unnamed';
  return {
    settings,
    home: settings.home ?? homedir(),
    clock,
    ids: settings.ids ?? randomUUID,
    embedderId,
    fillerCache: settings.fillerCache ?? new Map(),
    recognition: createMemoryRecognition(settings, embedderId, clock),
  };
}

/**
 * The engine that learns. One `runTurn` walks {@link ENGINE_LAYERS} and says
 * which answered. Every success is remembered as a template keyed on the
 * request's intent, qualifiers and slots; failures and feedback feed the
 * anti-autopaths. Memory maintains itself: aging and invalidation when the
 * engine opens, re-embedding and calibration before its first turn, all of
 * it again every `maintenanceEveryMs`, and whenever `maintain()` is called.
 *
 * @example
 * const engine = createEngine({ catalog, invoker, reviewer, models, embedder, fastpath, autopath, gaps, workspace });
 * const result = await engine.runTurn('read ~/notes/a.md and tell me the last 3 lines');
 * result.layer; // 'engine' the first time, 'fastpath' the next
 * await engine.feedback(result.turnId, 'down'); // the shortcut is dropped; a second down makes an anti-autopath
 */
export function createEngine(settings: EngineSettings, layers: readonly Layer[] = ENGINE_LAYERS) {
  const parts = createEngineParts(settings);
  const { clock, embedderId } = parts;
  const everyMs = settings.maintenanceEveryMs ?? DAY;
  ageAndInvalidate(settings);
  let maintained: Promise<MaintenanceReport> | undefined;
  let lastMaintenance = Number.NEGATIVE_INFINITY;

  const maintain = (options: { forceCalibration?: boolean } = {}): Promise<MaintenanceReport> => {
    lastMaintenance = clock().getTime();
    maintained = maintainMemory(settings, embedderId, parts.recognition, options);
    return maintained;
  };
  /** Before a turn: the maintenance started at open, or a new round when the last is older than `everyMs`. */
  const upToDate = async () => {
    const due = everyMs !== false && clock().getTime() - lastMaintenance >= everyMs;
    await (maintained === undefined || due ? maintain() : maintained).catch(() => undefined);
  };

  const engine = {
    layers,
    async runTurn(request: string, options: TurnOptions = {}): Promise<EngineResult> {
      await upToDate();
      const turn = createTurnContext(parts, request, options);
      return inSpan(
        'metnos.turn',
        { 'metnos.turn.id': turn.turnId, 'metnos.turn.as_of': turn.asOf },
        async (span) => {
          try {
            const result = await dispatch(layers, turn);
            span.setAttributes({
              'metnos.turn.layer': result.layer,
              'metnos.turn.final_kind': result.finalKind,
              'metnos.turn.steps': result.steps.length,
            });
            // the bundle is a record: a sink that fails loses the bundle, never the answer
            try {
              settings.replay?.save(replayBundleOf(turn, result));
            } catch {}
            return result;
          } finally {
            span.setAttribute('metnos.turn.model_calls', turn.modelCalls());
          }
        },
      );
    },
    /**
     * Feedback on a turn, the one path for every caller (see
     * {@link applyFeedback}): `up` promotes, `down` drops the L0 shortcut and
     * counts towards an anti-autopath, `retry` also re-runs the request
     * through L3 without the remembered plan.
     */
    async feedback(turnId: string, kind: FeedbackKind): Promise<FeedbackOutcome> {
      await upToDate();
      return applyFeedback(settings, turnId, kind, engine.runTurn);
    },
    /** Runs a round of maintenance now (a scheduler calls this; see `scheduleMaintenance`). */
    maintain,
  };
  return engine;
}

export type Engine = ReturnType<typeof createEngine>;
