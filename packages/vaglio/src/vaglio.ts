import { type ApprovalStore, createApprovalStore } from './approval-store.ts';
import { topLevelKeys } from './arguments.ts';
import { createGuard, type Guard } from './guard.ts';
import type { Judge, Judgement } from './judge.ts';
import { redactValues } from './redact.ts';
import { createRulesJudge, isBuiltInRulesJudge } from './rules-judge.ts';
import { DEFAULT_THRESHOLD, loadNumberSetting, THRESHOLD_ENV } from './settings.ts';
import type { EvaluationContext, ProposedCall, Verdict } from './types.ts';
import { createVerdictLog, type VerdictLog } from './verdict-log.ts';

/** Settings of {@link createVaglio}. */
export interface VaglioSettings {
  /** Default: {@link createRulesJudge} with its default weights. */
  judge?: Judge;
  /** Scores below it are blocked. Default: `METNOS_JUDGE_THRESHOLD`, else 0.30. */
  threshold?: number;
  /** Where the monthly JSONL log goes. Without it nothing is logged. */
  log?: { dir: string };
  /** Where pending confirmations live. Default: an in-memory store on the same clock. */
  approvals?: ApprovalStore;
  clock?: () => Date;
  /**
   * Host paths that decide trust (the workspace's `metnos.toml`, trusted key
   * files, the executors folder): added to every evaluation's `protect`, so a
   * side-effecting call that names one is refused by the guard.
   */
  protect?: readonly string[];
}

/** The verdict on a whole plan: blocked as soon as one step is. */
export interface PlanVerdict {
  approved: boolean;
  /** Which part stopped the plan, at its first stopped step; `null` when approved. */
  blocked_by: Verdict['blocked_by'];
  /** The step (its `stepIndex`, else its 1-based position) that stopped the plan; `null` when approved. */
  blocked_step: number | null;
  reason: string;
  /** One verdict per step, in order. */
  verdicts: Verdict[];
}

/** The evaluator every planned call passes before it runs. */
export interface Vaglio {
  /** Evaluates one call (the planner's local mode calls it between steps). */
  evaluate(call: ProposedCall, context: EvaluationContext): Promise<Verdict>;
  /**
   * Evaluates a whole plan (online mode). Guard and judge run on every step
   * first; confirmations are requested only when no step is blocked.
   */
  evaluatePlan(calls: ProposedCall[], context: EvaluationContext): Promise<PlanVerdict>;
  /** The store the pending confirmations go to: approve and check them here. */
  readonly approvals: ApprovalStore;
  /** The threshold in force (from the option, the environment or the default). */
  readonly threshold: number;
}

/** Guard and judge outcome for one call, before any confirmation is opened. */
type Assessment =
  | { kind: 'blocked'; blocked_by: 'guard' | 'judge'; score: number; reason: string }
  | { kind: 'passed'; score: number; reason: string; needsConfirmation: boolean };

/** Two decimals, or three when two would round (0.299 must not read as 0.30 next to a 0.30 threshold). */
function formatScore(score: number): string {
  const hundredths = score * 100;
  return score.toFixed(Math.abs(hundredths - Math.round(hundredths)) < 1e-9 ? 2 : 3);
}

/** Whether the call must wait for the person: side effects that cannot be repeated safely, or any side effect when autonomy is `ask`. */
export function needsConfirmation(call: ProposedCall, context: EvaluationContext): boolean {
  const { sideEffects, idempotent } = call.executor;
  if (!sideEffects) return false;
  return !idempotent || context.autonomy === 'ask';
}

/**
 * Creates the vaglio: the guard (fixed prohibitions, never relaxed), then the
 * judge (a score against a threshold), then reinforced confirmation for
 * calls with side effects that are not idempotent, at every autonomy level.
 * Every verdict is logged, with argument keys only, when `log` is set.
 *
 * @example
 * const vaglio = createVaglio({ log: { dir: '/home/ada/.local/share/metnos/vaglio' } });
 * const verdict = await vaglio.evaluate(
 *   { executor: { name: 'fs_read', version: '1.0.0', capabilities: ['fs:read'], sideEffects: false, idempotent: true }, args: { path: 'notes.md' }, request: 'fs read notes.md' },
 *   { home: '/home/ada', workspace: '/home/ada/metnos' },
 * );
 * // { approved: true, blocked_by: null, score: 0.9, judge_kind: 'rules', … }
 */
export function createVaglio(settings: VaglioSettings = {}): Vaglio {
  const clock = settings.clock ?? (() => new Date());
  const judge = settings.judge ?? createRulesJudge();
  const threshold = loadNumberSetting({
    value: settings.threshold,
    option: 'threshold',
    env: THRESHOLD_ENV,
    fallback: DEFAULT_THRESHOLD,
    min: 0,
    max: 1,
  });
  const guard: Guard = createGuard();
  const approvals = settings.approvals ?? createApprovalStore({ clock });
  const log: VerdictLog | undefined = settings.log ? createVerdictLog(settings.log) : undefined;

  async function runJudge(call: ProposedCall, context: EvaluationContext): Promise<Judgement> {
    try {
      const judgement = await judge.judge({
        request: call.request,
        executor: call.executor,
        args: call.args,
        place: { home: context.home, workspace: context.workspace },
      });
      if (judgement.ok && (!Number.isFinite(judgement.score) || judgement.score < 0 || judgement.score > 1)) {
        return { ok: false, failure: 'unreadable', reason: "the judge's score was outside [0, 1]" };
      }
      if (isBuiltInRulesJudge(judge)) return judgement;
      return { ...judgement, reason: redactValues(judgement.reason, call.args) };
    } catch {
      return { ok: false, failure: 'model_error', reason: 'the judge failed' };
    }
  }

  async function assess(call: ProposedCall, context: EvaluationContext): Promise<Assessment> {
    const guarded = guard.check(
      call,
      settings.protect?.length
        ? { ...context, protect: [...(context.protect ?? []), ...settings.protect] }
        : context,
    );
    if (!guarded.ok) return { kind: 'blocked', blocked_by: 'guard', score: 0, reason: guarded.reason };
    const judgement = await runJudge(call, context);
    if (!judgement.ok) return { kind: 'blocked', blocked_by: 'judge', score: 0, reason: judgement.reason };
    if (judgement.score < threshold) {
      return {
        kind: 'blocked',
        blocked_by: 'judge',
        score: judgement.score,
        reason: `score ${formatScore(judgement.score)} is below the threshold ${formatScore(threshold)} (${judgement.reason})`,
      };
    }
    return {
      kind: 'passed',
      score: judgement.score,
      reason: `score ${formatScore(judgement.score)} (${judgement.reason})`,
      needsConfirmation: needsConfirmation(call, context),
    };
  }

  async function decide(
    call: ProposedCall,
    assessment: Assessment,
    openConfirmation: boolean,
  ): Promise<Verdict> {
    const stamp = { judge_kind: judge.kind, ts: clock().toISOString() };
    if (assessment.kind === 'blocked') {
      const { blocked_by, score, reason } = assessment;
      return { approved: false, reason, score, blocked_by, ...stamp };
    }
    const { score } = assessment;
    if (!assessment.needsConfirmation)
      return { approved: true, reason: assessment.reason, score, blocked_by: null, ...stamp };
    const why = call.executor.idempotent
      ? 'has side effects and autonomy is "ask"'
      : 'has side effects and is not idempotent';
    if (!openConfirmation) {
      return {
        approved: false,
        reason: `${call.executor.name} ${why}: it would need confirmation`,
        score,
        blocked_by: 'confirmation',
        ...stamp,
      };
    }
    const pending = await approvals.request(call);
    const reason = `${call.executor.name} ${why}: waiting for the person's confirmation`;
    return { approved: false, reason, score, blocked_by: 'confirmation', ...stamp, pending };
  }

  async function record(call: ProposedCall, verdict: Verdict, step: number | undefined): Promise<void> {
    if (!log) return;
    await log.append({
      ts: verdict.ts,
      turn_id: call.turnId ?? null,
      step: step ?? null,
      executor: call.executor.name,
      executor_version: call.executor.version,
      arg_keys: topLevelKeys(call.args),
      approved: verdict.approved,
      blocked_by: verdict.blocked_by,
      score: verdict.score,
      judge_kind: verdict.judge_kind,
      reason: verdict.reason,
    });
  }

  return {
    approvals,
    threshold,

    async evaluate(call, context) {
      const verdict = await decide(call, await assess(call, context), true);
      await record(call, verdict, call.stepIndex);
      return verdict;
    },

    async evaluatePlan(calls, context) {
      const assessments: Assessment[] = [];
      for (const call of calls) assessments.push(await assess(call, context));
      const blockedAt = assessments.findIndex((assessment) => assessment.kind === 'blocked');
      const verdicts: Verdict[] = [];
      for (const [index, call] of calls.entries()) {
        const verdict = await decide(call, assessments[index]!, blockedAt === -1);
        await record(call, verdict, call.stepIndex ?? index + 1);
        verdicts.push(verdict);
      }
      const stopAt = blockedAt !== -1 ? blockedAt : verdicts.findIndex((verdict) => !verdict.approved);
      if (stopAt === -1) {
        return {
          approved: true,
          blocked_by: null,
          blocked_step: null,
          reason: `all ${calls.length} steps approved`,
          verdicts,
        };
      }
      const stopped = verdicts[stopAt]!;
      const step = calls[stopAt]!.stepIndex ?? stopAt + 1;
      const waiting = verdicts.filter((verdict) => verdict.blocked_by === 'confirmation').length;
      const reason =
        stopped.blocked_by === 'confirmation'
          ? `step ${step} (${calls[stopAt]!.executor.name}) waits for confirmation${waiting > 1 ? `, with ${waiting - 1} more step(s)` : ''}: ${stopped.reason}`
          : `blocked by the ${stopped.blocked_by} at step ${step} (${calls[stopAt]!.executor.name}): ${stopped.reason}`;
      return { approved: false, blocked_by: stopped.blocked_by, blocked_step: step, reason, verdicts };
    },
  };
}
