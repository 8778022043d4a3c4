import { randomBytes } from 'node:crypto';
import type { Catalog } from '@metnos/executor-sdk';
import type { Mnestome } from '@metnos/mnestome';
import { SyntError } from './errors.ts';
import type { FindChainOptions } from './find-chain.ts';
import { type Review, reviewOf } from './generate/approval.ts';
import type { ModelCallRecord } from './generate/lineage.ts';
import { recurringProtos } from './generate/pattern.ts';
import { createGenerator } from './generate/pipeline.ts';
import type { Specification } from './generate/spec-schema.ts';
import type { GeneratorSettings, Motivation, Stage, WaitingFor } from './generate/types.ts';
import { fadedFusedCandidates } from './introspect/fused.ts';
import { type GeneraliseRules, generaliseCandidates } from './introspect/generalise.ts';
import { type MergeRules, mergeCandidates } from './introspect/merge.ts';
import { readAuditedCalls, type SpecialiseRules, specialiseCandidates } from './introspect/specialise.ts';
import type { CardDraft, IntrospectionInput } from './introspect/types.ts';
import { protoCards } from './suggest.ts';
import type {
  ProposalKind,
  ProposalRecord,
  ProposalState,
  RunRecord,
  StageRecord,
  SyntStore,
} from './synt-store.ts';

/** Settings of {@link createSynt}: the generator's, the store, and what the nightly suggestions read. */
export interface SyntSettings extends GeneratorSettings {
  store: SyntStore;
  catalog: Pick<Catalog, 'root' | 'executors' | 'load' | 'get' | 'list' | 'lifecycle' | 'archive'>;
  mnestome?: Pick<Mnestome, 'protoMnests' | 'mnests'>;
  /** The workspace's `.audit` folder, read for specialise proposals. */
  auditDir?: string;
  introspection?: { merge?: MergeRules; generalise?: GeneraliseRules; specialise?: SpecialiseRules };
  compose?: FindChainOptions;
  /** Ids for cards and runs (8 hex digits by default). */
  ids?: () => string;
  stages?: readonly Stage[];
}

/** A card in a listing. */
export interface ProposalSummary {
  id: string;
  kind: ProposalKind;
  state: ProposalState;
  title: string;
  note: string;
  runId: string | null;
  waitingFor: WaitingFor | null;
  updatedAt: string;
}

/** A card with its run: each stage's outcome, the model lineage, and the review when there is one. */
export interface ProposalDetail {
  proposal: ProposalRecord;
  run?: {
    id: string;
    state: RunRecord['state'];
    stage: RunRecord['stage'];
    waitingFor: WaitingFor | null;
    reason: string | null;
    spec?: Specification;
    installed?: RunRecord['draft']['installed'];
  };
  stages: StageRecord[];
  modelCalls: ModelCallRecord[];
  review?: Review;
}

/** What one night's `synt_suggest` did. */
export interface SuggestReport {
  recurring: number;
  filed: Array<{ id: string; kind: ProposalKind; title: string }>;
  refreshed: number;
  summary: string;
}

const randomId = () => randomBytes(4).toString('hex');

/** A run still marked under way after this long was interrupted (its process stopped). */
export const INTERRUPTED_AFTER_MS = 30 * 60 * 1000;

/** Cards the introspective steps would file now. */
async function introspectiveCards(settings: SyntSettings, now: Date): Promise<CardDraft[]> {
  const input: IntrospectionInput = {
    executors: settings.catalog.executors(),
    listing: settings.catalog.list(),
    mnests: settings.mnestome?.mnests() ?? [],
    now,
  };
  const rules = settings.introspection ?? {};
  const calls = settings.auditDir
    ? await readAuditedCalls(settings.auditDir, now, rules.specialise?.windowDays ?? 30)
    : [];
  return [
    ...mergeCandidates(input, rules.merge),
    ...generaliseCandidates(input, rules.generalise),
    ...specialiseCandidates(input, calls, rules.specialise),
    ...fadedFusedCandidates(input),
  ];
}

/**
 * The synt: nightly suggestions filed as cards, and the person's decisions
 * on them. `suggest` runs compose-only over the recurring proto-mnests
 * (a chain of existing executors, else a card to generate one) and the
 * introspective steps (merge, generalise, specialise, archival of faded fused
 * executors); it asks no model and signs nothing. `approve` starts or
 * continues what a card proposes — a generation walks the seven stages and
 * stops wherever the person must decide; `reject` ends it. Nothing is signed
 * but by stage 7, after the person approved the exact artefacts.
 *
 * @example
 * const synt = createSynt({ store, catalog, mnestome, model: tiers.wise, runner, keyStore, trustedKeys });
 * await synt.suggest();                   // nightly, 04:30
 * const [card] = synt.list({ states: ['open'] });
 * await synt.approve(card.id, { by: 'ada' });
 */
export function createSynt(settings: SyntSettings) {
  const { store } = settings;
  const clock = settings.clock ?? (() => new Date());
  const ids = settings.ids ?? randomId;
  const generator = createGenerator({ ...settings, store });

  const summary = (card: ProposalRecord): ProposalSummary => ({
    id: card.id,
    kind: card.kind,
    state: card.state,
    title: card.title,
    note: card.note,
    runId: card.runId,
    waitingFor: card.runId ? (store.run(card.runId)?.waitingFor ?? null) : null,
    updatedAt: card.updatedAt,
  });

  /**
   * A card by its id, or by the id of its run. A card whose run has been
   * under way for longer than {@link INTERRUPTED_AFTER_MS} was interrupted
   * (a kill, a crash): it is put back to waiting for a fix, so approving it
   * tries that stage again and rejecting it ends it.
   */
  const resolve = (id: string): ProposalRecord => {
    const card = store.proposal(id) ?? store.proposal(store.run(id)?.proposalId ?? '');
    if (!card) throw new SyntError('not_found', `no proposal or run ${id} (metnos synt list shows them)`);
    const run = card.state === 'running' && card.runId ? store.run(card.runId) : undefined;
    if (run?.state !== 'running' || clock().getTime() - Date.parse(run.updatedAt) < INTERRUPTED_AFTER_MS)
      return card;
    const reason = `the run was interrupted at ${run.stage} (its process stopped): approve to try that stage again, or reject`;
    if (store.claimRun(run.id, 'running', 'waiting')) store.updateRun(run.id, { waitingFor: 'fix', reason });
    store.claimProposal(card.id, ['running'], 'waiting', {
      note: `waiting for a fix (${run.stage}): ${reason}`,
    });
    return store.proposal(card.id)!;
  };

  const detail = (id: string): ProposalDetail => {
    const card = resolve(id);
    const run = card.runId ? store.run(card.runId) : undefined;
    const artefacts = run?.draft.review?.artefacts;
    return {
      proposal: card,
      ...(run
        ? {
            run: {
              id: run.id,
              state: run.state,
              stage: run.stage,
              waitingFor: run.waitingFor,
              reason: run.reason,
              ...(run.draft.spec ? { spec: run.draft.spec } : {}),
              ...(run.draft.installed ? { installed: run.draft.installed } : {}),
            },
          }
        : {}),
      stages: run ? store.stages(run.id) : [],
      modelCalls: run ? store.modelCalls(run.id) : [],
      ...(run && artefacts ? { review: reviewOf(artefacts, run.draft, settings.catalog.executors()) } : {}),
    };
  };

  /** The card follows its run: waiting, done when installed, rejected. */
  const follow = (card: ProposalRecord, run: RunRecord): ProposalDetail => {
    if (run.state === 'waiting')
      store.claimProposal(card.id, ['running'], 'waiting', {
        note: `waiting for ${run.waitingFor === 'fix' ? 'a fix' : `your ${run.waitingFor === 'spec' ? 'word on the spec' : 'approval'}`} (${run.stage}): ${run.reason}`,
      });
    else if (run.state === 'installed')
      store.claimProposal(card.id, ['running'], 'done', {
        note: `installed ${run.draft.installed?.name}@${run.draft.installed?.version} (${run.draft.installed?.state}), signed with ${run.draft.installed?.keyId}`,
      });
    return detail(card.id);
  };

  const drive = async (card: ProposalRecord, work: () => Promise<RunRecord>): Promise<ProposalDetail> => {
    try {
      return follow(card, await work());
    } catch (error) {
      store.claimProposal(card.id, ['running'], card.runId ? 'waiting' : 'open', {
        note: `the last decision did not go through: ${error instanceof Error ? error.message : String(error)}`,
      });
      throw error;
    }
  };

  const decideOpen = async (card: ProposalRecord, by: string): Promise<ProposalDetail> => {
    if (card.kind === 'compose') {
      if (
        !store.claimProposal(card.id, ['open'], 'done', { note: `chain accepted by ${by}: no new executor` })
      )
        throw new SyntError('conflict', `proposal ${card.id} was decided just now`);
      return detail(card.id);
    }
    if (card.kind === 'archive') {
      const target = card.motivation as { executor: string; version: string };
      if (!store.claimProposal(card.id, ['open'], 'running'))
        throw new SyntError('conflict', `proposal ${card.id} was decided just now`);
      try {
        const moved = await settings.catalog.archive(target.executor, target.version);
        store.claimProposal(card.id, ['running'], 'done', { note: `archived ${moved.join(', ')} by ${by}` });
      } catch (error) {
        store.claimProposal(card.id, ['running'], 'open', {
          note: `archiving failed: ${(error as Error).message}`,
        });
        throw error;
      }
      return detail(card.id);
    }
    const runId = `r-${ids()}`;
    if (!store.claimProposal(card.id, ['open'], 'running', { runId }))
      throw new SyntError('conflict', `proposal ${card.id} was decided just now`);
    return drive({ ...card, runId }, () => generator.start(card.id, runId, card.motivation as Motivation));
  };

  return {
    store,
    generator,

    /**
     * The nightly task (`synt_suggest`): recurring proto-mnests through
     * compose-only, and the introspective steps, each filed as a card (one
     * per subject; an open card is refreshed, a decided one left alone).
     */
    async suggest(now: Date = clock()): Promise<SuggestReport> {
      const active = new Set(
        settings.catalog
          .list()
          .filter((row) => row.state === 'active' || row.state === 'seed')
          .map((row) => `${row.name}@${row.version}`),
      );
      const protos = settings.mnestome ? recurringProtos(settings.mnestome, now, settings.pattern) : [];
      const cards = [
        ...protoCards(protos, settings.catalog.executors(), {
          ...settings.compose,
          isActive: (executor) => active.has(`${executor.name}@${executor.version}`),
        }),
        ...(await introspectiveCards(settings, now)),
      ];
      const filed: SuggestReport['filed'] = [];
      let refreshed = 0;
      for (const card of cards) {
        const result = store.file({ id: `p-${ids()}`, ...card });
        if (result.created) filed.push({ id: result.proposal.id, kind: card.kind, title: card.title });
        else refreshed++;
      }
      const kinds = filed.map((card) => card.kind);
      const count = (kind: ProposalKind) => kinds.filter((item) => item === kind).length;
      const parts = (['generate', 'compose', 'merge', 'generalise', 'specialise', 'archive'] as const)
        .filter((kind) => count(kind) > 0)
        .map((kind) => `${count(kind)} ${kind}`);
      return {
        recurring: protos.length,
        filed,
        refreshed,
        summary: `${protos.length} recurring proto-mnest${protos.length === 1 ? '' : 's'}; ${filed.length > 0 ? `filed ${parts.join(', ')}` : 'no new card'}${refreshed > 0 ? `; ${refreshed} open card${refreshed === 1 ? '' : 's'} refreshed` : ''}`,
      };
    },

    /** The cards, newest first (only the given states when set). */
    list(filter: { states?: ProposalState[] } = {}): ProposalSummary[] {
      return store.proposals(filter).map(summary);
    },

    /** One card (by its id or its run's) with its run, stages, lineage and review. */
    show(id: string): ProposalDetail {
      return detail(id);
    },

    /**
     * The person's yes: an open card starts (a generation walks to its first
     * question); a waiting one continues with the decision — the spec
     * approved or amended (`spec`), the artefacts approved by their review
     * `digest`, or a stage tried again after a fix.
     */
    async approve(
      id: string,
      decision: { by: string; spec?: Specification; digest?: string },
    ): Promise<ProposalDetail> {
      const card = resolve(id);
      if (card.state === 'open') return decideOpen(card, decision.by);
      if (card.state !== 'waiting' || !card.runId)
        throw new SyntError('conflict', `proposal ${card.id} is ${card.state}: nothing to approve`);
      if (!store.claimProposal(card.id, ['waiting'], 'running'))
        throw new SyntError('conflict', `proposal ${card.id} was decided just now`);
      return drive(card, () => generator.resume(card.runId!, decision));
    },

    /** The person's no: an open or waiting card ends, and its run with it; nothing of it is signed. */
    reject(id: string, by: string): ProposalDetail {
      const card = resolve(id);
      if (card.state !== 'open' && card.state !== 'waiting')
        throw new SyntError('conflict', `proposal ${card.id} is ${card.state}: nothing to reject`);
      if (card.runId && store.run(card.runId)?.state === 'waiting') generator.reject(card.runId, by);
      if (!store.claimProposal(card.id, ['open', 'waiting'], 'rejected', { note: `rejected by ${by}` }))
        throw new SyntError('conflict', `proposal ${card.id} was decided just now`);
      return detail(card.id);
    },
  };
}

export type Synt = ReturnType<typeof createSynt>;
