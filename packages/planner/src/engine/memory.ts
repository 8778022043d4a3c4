import { classifyFailure } from '../llm/retry.ts';
import type { ExecutionOutcome } from './executor.ts';
import type { Intent } from './intent.ts';
import { type LayerOutcome, pass } from './layer.ts';
import { type Plan, planHash, planTools } from './plan.ts';
import { canReuse, pinnedSlots } from './request-key.ts';
import { bindSlots, templatize } from './slots.ts';
import { finishTurn, pendingApproval, type TurnContext } from './turn-context.ts';

/** A plan memory holds (an L0 shortcut or an L1 autopath), as a replay needs it. */
export interface RememberedPlan {
  id: string;
  intentHash: string;
  planHash: string;
  template: unknown;
  slots: string[];
  tools: Array<{ name: string; version: string }>;
  qualifiers: readonly string[] | undefined;
  pinned: Readonly<Record<string, string>>;
}

/**
 * The ids of remembered plans that may not serve this turn by meaning: other
 * qualifiers, slots or pinned values ({@link canReuse}), or a plan the turn
 * must avoid. Recognition leaves them out before it scores anything.
 */
export function incompatibleIds(turn: TurnContext, entries: readonly RememberedPlan[]): Set<string> {
  return new Set(
    entries
      .filter(
        (entry) => !canReuse(entry, turn.key, 'meaning').ok || turn.avoid.planHashes.includes(entry.planHash),
      )
      .map((entry) => entry.id),
  );
}

/** Appends the turn's observation to the L1 store's log. */
export async function observeTurn(
  turn: TurnContext,
  fields: {
    layer: string;
    outcome: 'success' | 'failure';
    intentHash?: string;
    planHash?: string;
    plan?: unknown;
    errorClass?: string;
  },
): Promise<void> {
  turn.parts.settings.autopath.observe({
    turnId: turn.turnId,
    request: turn.request,
    latencyMs: turn.elapsedMs(),
    vector: fields.layer === 'terminator' ? undefined : await turn.vector(),
    ...fields,
  });
}

/** The versions of the catalog a remembered plan must still match. */
function currentVersions(turn: TurnContext): Map<string, string> {
  return new Map(turn.executors.map((executor) => [executor.name, executor.version]));
}

/** Counts a success for a plan in its L1 cluster (which the request joins). */
async function countSuccess(turn: TurnContext, entry: Omit<RememberedPlan, 'id'>): Promise<void> {
  const vector = await turn.vector();
  if (!vector) return;
  const { autopath } = turn.parts.settings;
  const cluster = autopath.assignCluster(vector, turn.parts.embedderId);
  autopath.recordSuccess({
    clusterId: cluster.id,
    intentHash: entry.intentHash,
    planHash: entry.planHash,
    template: entry.template,
    slots: entry.slots,
    tools: entry.tools,
    latencyMs: turn.elapsedMs(),
    qualifiers: entry.qualifiers ? [...entry.qualifiers] : undefined,
    pinned: { ...entry.pinned },
  });
}

/**
 * Remembers a plan the Proposer made and that ran: an L0 shortcut for this
 * request's fingerprint and a success in L1, both keyed on the intent, the
 * request's qualifiers and the slots the template does not bind. A store
 * that has grown by a quarter since its rule was fitted is fitted again.
 */
export async function learnPlan(turn: TurnContext, plan: Plan, intent: Intent): Promise<string> {
  const { template, slots } = templatize(plan, turn.request);
  const versions = currentVersions(turn);
  const tools = planTools(plan).map((name) => ({ name, version: versions.get(name)! }));
  const hash = planHash(template);
  const pinned = pinnedSlots(slots, turn.key);
  const vector = await turn.vector();
  turn.parts.settings.fastpath.save({
    fingerprint: turn.key.fingerprint,
    request: turn.request,
    template,
    slots,
    tools,
    vector,
    intentHash: intent.hash,
    planHash: hash,
    qualifiers: turn.key.qualifiers,
    pinned,
    embedderId: turn.parts.embedderId,
  });
  await countSuccess(turn, {
    intentHash: intent.hash,
    planHash: hash,
    template,
    slots,
    tools,
    qualifiers: turn.key.qualifiers,
    pinned,
  });
  // a memory that grew by a quarter is fitted again now, not at the next daily maintenance
  await turn.parts.recognition.refitIfGrown().catch(() => undefined);
  return hash;
}

/**
 * A failure that says nothing about the plan: transient (a timeout, a rate
 * limit, the network — the machine was busy, not the plan wrong) or a spent
 * turn budget. Such a failure never counts towards an anti-autopath and
 * never drops a shortcut.
 */
export function failureIsCircumstantial(outcome: Extract<ExecutionOutcome, { ok: false }>): boolean {
  return (
    outcome.error.class === 'BudgetExhausted' ||
    classifyFailure({ ok: false, error: outcome.error }) === 'transient'
  );
}

/** Counts a failed plan towards its anti-autopath (unless the failure was circumstantial) and logs the observation. */
export async function recordPlanFailure(
  turn: TurnContext,
  layer: string,
  run: { intentHash: string; planHash: string; plan?: unknown },
  outcome: Extract<ExecutionOutcome, { ok: false }>,
): Promise<void> {
  if (!failureIsCircumstantial(outcome))
    turn.parts.settings.autopath.recordFailure({
      intentHash: run.intentHash,
      planHash: run.planHash,
      reason: outcome.error.message,
    });
  await observeTurn(turn, {
    layer,
    outcome: 'failure',
    intentHash: run.intentHash,
    planHash: run.planHash,
    plan: run.plan,
    errorClass: outcome.error.class,
  });
}

/**
 * Replays a remembered plan for this turn, if it may serve it: its
 * executors are still the versions it was learned with, the request has its
 * qualifiers and slots ({@link canReuse}), it is not an anti-autopath and
 * not a plan the turn must avoid. A success is observed and counted; a
 * failure is counted towards the plan's anti-autopath and the turn passes on.
 */
export async function replayPlan(
  turn: TurnContext,
  layer: 'fastpath' | 'autopath',
  entry: RememberedPlan,
  match: 'exact' | 'meaning',
  hooks: { onSuccess?: () => void; onFailure?: () => void } = {},
): Promise<LayerOutcome> {
  const { autopath } = turn.parts.settings;
  const versions = currentVersions(turn);
  if (!entry.tools.every((tool) => versions.get(tool.name) === tool.version))
    return pass(`${match} match ${entry.id}: an executor it uses changed or is gone`);
  const reuse = canReuse(entry, turn.key, match);
  if (!reuse.ok) return pass(`${match} match ${entry.id}: ${reuse.reason}`);
  if (autopath.isAnti(entry.intentHash, entry.planHash))
    return pass(`${match} match ${entry.id}: the plan is an anti-autopath for this intent`);
  if (turn.avoid.planHashes.includes(entry.planHash))
    return pass(`${match} match ${entry.id}: this turn asked for another plan`);
  const bound = bindSlots(entry.template, entry.slots, turn.request);
  if (!bound) return pass(`${match} match ${entry.id}: a slot it needs has no value in the request`);
  const plan = bound.plan as Plan;
  const outcome = await turn.execute(plan, bound.values);
  if (outcome.ok) {
    await observeTurn(turn, {
      layer,
      outcome: 'success',
      intentHash: entry.intentHash,
      planHash: entry.planHash,
      plan: entry.template,
    });
    await countSuccess(turn, entry);
    hooks.onSuccess?.();
    return {
      answer: finishTurn(turn, {
        layer,
        finalKind: 'answer',
        finalMessage: outcome.finalMessage,
        plan,
        steps: outcome.steps,
        intent: turn.knownIntent(),
      }),
    };
  }
  if (outcome.kind === 'pending_approval') return { answer: pendingApproval(turn, layer, plan, outcome) };
  await recordPlanFailure(turn, layer, entry, outcome);
  if (failureIsCircumstantial(outcome))
    return pass(
      `${match} match ${entry.id} failed at ${outcome.tool} (${outcome.error.class}, not the plan's fault): kept`,
    );
  hooks.onFailure?.();
  return pass(`${match} match ${entry.id} failed at ${outcome.tool}: ${outcome.error.message}`);
}
