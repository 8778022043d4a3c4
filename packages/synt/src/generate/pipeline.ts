import { SyntError } from '../errors.ts';
import type { RunRecord, SyntStore } from '../synt-store.ts';
import { approvalStage } from './approval.ts';
import { birthStage } from './birth.ts';
import { installStage } from './install.ts';
import { recordedAsk } from './lineage.ts';
import { patternStage } from './pattern.ts';
import { profileStage } from './profile.ts';
import { skeletonStage } from './skeleton.ts';
import { specificationStage } from './specification.ts';
import type {
  Decision,
  GeneratorSettings,
  Motivation,
  RunDraft,
  Stage,
  StageName,
  StageOutcome,
} from './types.ts';

/** The seven stages, in order: the list the dispatcher walks. */
export const GENERATION_STAGES: readonly Stage[] = [
  patternStage,
  specificationStage,
  skeletonStage,
  profileStage,
  birthStage,
  approvalStage,
  installStage,
];

/** What each stage writes into the draft: cleared when an earlier stage runs again. */
const PRODUCES: Record<StageName, Array<keyof RunDraft>> = {
  pattern: [],
  specification: [],
  skeleton: ['code', 'schema'],
  profile: ['grants'],
  birth: ['cases'],
  approval: ['review', 'approval'],
  install: ['installed'],
};

/** Settings of {@link createGenerator}: the stages' settings, the store, and optionally other stages. */
export interface GeneratorOptions extends GeneratorSettings {
  store: SyntStore;
  /** The stages to walk (tests replace one to break it on purpose). Default {@link GENERATION_STAGES}. */
  stages?: readonly Stage[];
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}

/**
 * The generation pipeline: a dispatcher walking {@link GENERATION_STAGES}
 * over one run's draft. After each stage its outcome is recorded and the
 * draft saved; a stage that suspends leaves the run waiting for the person
 * (the spec, the approval, or a fix), and `resume` carries the person's
 * decision to that stage alone. A stage that throws (a model that does not
 * answer) suspends the run for a fix with the reason; the process never
 * dies of it.
 *
 * @example
 * const generator = createGenerator({ store, model: tiers.wise, catalog, runner, keyStore, trustedKeys });
 * let run = await generator.start('p-1a2b3c4d', 'r-5e6f7a8b', motivation); // waits for the spec
 * run = await generator.resume(run.id, { by: 'ada' });                    // waits for approval
 */
export function createGenerator(options: GeneratorOptions) {
  const { store } = options;
  const stages = options.stages ?? GENERATION_STAGES;
  const clock = options.clock ?? (() => new Date());

  async function runStage(stage: Stage, runId: string, draft: RunDraft, decision?: Decision) {
    const context = {
      runId,
      decision,
      ask: recordedAsk(options.model, (call) => store.recordModelCall(call), {
        runId,
        stage: stage.name,
        clock,
      }),
      executors: () => options.catalog.executors(),
      settings: options,
    };
    try {
      return { outcome: await stage.run(draft, context), failed: false };
    } catch (error) {
      const outcome: StageOutcome = {
        kind: 'suspend',
        waitingFor: 'fix',
        reason: `${stage.name} failed: ${message(error)}. Approve to try this stage again, or reject`,
      };
      return { outcome, failed: true };
    }
  }

  async function walk(runId: string, from: StageName, decision?: Decision): Promise<RunRecord> {
    const start = stages.findIndex((stage) => stage.name === from);
    let draft = { ...store.run(runId)!.draft };
    for (const stage of stages.slice(start + 1))
      for (const field of PRODUCES[stage.name]) delete draft[field];
    for (const [offset, stage] of stages.slice(start).entries()) {
      store.updateRun(runId, { state: 'running', stage: stage.name, waitingFor: null, reason: null, draft });
      const { outcome, failed } = await runStage(stage, runId, draft, offset === 0 ? decision : undefined);
      draft = { ...draft, ...outcome.update };
      store.recordStage(runId, {
        stage: stage.name,
        outcome: failed ? 'failed' : outcome.kind === 'done' ? 'done' : 'suspended',
        note: outcome.kind === 'done' ? outcome.note : outcome.reason,
        detail: outcome.detail,
      });
      if (outcome.kind === 'suspend') {
        store.updateRun(runId, {
          state: 'waiting',
          stage: stage.name,
          waitingFor: outcome.waitingFor,
          reason: outcome.reason,
          draft,
        });
        return store.run(runId)!;
      }
    }
    store.updateRun(runId, { state: 'installed', stage: 'install', waitingFor: null, reason: null, draft });
    return store.run(runId)!;
  }

  return {
    stages,

    /** Starts a run for `motivation` and walks it to its first suspension (or its end). */
    start(proposalId: string, runId: string, motivation: Motivation): Promise<RunRecord> {
      store.createRun({ id: runId, proposalId, draft: { motivation } });
      return walk(runId, 'pattern');
    },

    /**
     * Carries the person's decision to the waiting stage: an amended spec
     * runs everything again from the specification; a fix without one tries
     * the stage that stopped again; otherwise the waiting stage gets the
     * decision (the spec approved, the artefacts approved by their digest).
     */
    async resume(runId: string, decision: Decision): Promise<RunRecord> {
      const run = store.run(runId);
      if (!run) throw new SyntError('not_found', `no run ${runId}`);
      if (run.state !== 'waiting')
        throw new SyntError('conflict', `run ${runId} is ${run.state}, not waiting`);
      if (!store.claimRun(runId, 'waiting', 'running'))
        throw new SyntError('conflict', `run ${runId} was decided by someone else just now`);
      if (decision.spec) return walk(runId, 'specification', decision);
      if (run.waitingFor === 'fix') return walk(runId, run.stage);
      return walk(runId, run.stage, decision);
    },

    /** Rejects a waiting run: it ends, nothing of it is signed or installed. */
    reject(runId: string, by: string): RunRecord {
      const run = store.run(runId);
      if (!run) throw new SyntError('not_found', `no run ${runId}`);
      if (!store.claimRun(runId, 'waiting', 'rejected'))
        throw new SyntError('conflict', `run ${runId} is ${run.state}: only a waiting run can be rejected`);
      store.recordStage(runId, {
        stage: run.stage,
        outcome: 'rejected',
        note: `rejected by ${by}`,
        detail: undefined,
      });
      return store.run(runId)!;
    },
  };
}

export type Generator = ReturnType<typeof createGenerator>;
