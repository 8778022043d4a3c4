export {
  type ApprovalDb,
  type ApprovalFailureReason,
  type ApprovalRecord,
  type ApprovalResult,
  type ApprovalState,
  type ApprovalStore,
  type ApprovalStoreSettings,
  createApprovalStore,
  createFileApprovalDb,
} from './approval-store.ts';
export { callHash, canonicalJson } from './call-hash.ts';
export { DESTRUCTIVE_PATTERNS, type DestructivePattern, SYSTEM_FOLDERS } from './commands.ts';
export { ApprovalStoreError, VaglioSettingsError, VerdictLogError } from './errors.ts';
export { CODE_EXEC, createGuard, type Guard, type GuardResult } from './guard.ts';
export type { Judge, JudgeFailure, JudgeInput, Judgement } from './judge.ts';
export {
  createLlmJudge,
  type JudgeModel,
  type JudgePrompt,
  judgeAnswerSchema,
  judgePrompt,
  LLM_JUDGE_SYSTEM,
  type LlmJudgeSettings,
  parseJudgeAnswer,
} from './llm-judge.ts';
export {
  ACCOUNT_FILES,
  BLOCK_DEVICES,
  type ForbiddenRule,
  forbiddenRules,
  HOME_FORBIDDEN,
  HOME_PROTECTED,
  protectedRules,
  SYSTEM_FORBIDDEN,
} from './paths.ts';
export {
  createRulesJudge,
  DEFAULT_RULES_WEIGHTS,
  RULES_JUDGE_VERSION,
  type RulesJudgeSettings,
  type RulesJudgeWeights,
} from './rules-judge.ts';
export { DEFAULT_THRESHOLD, THRESHOLD_ENV } from './settings.ts';
export type {
  Autonomy,
  BlockedBy,
  EvaluationContext,
  ExecutorContract,
  JudgeKind,
  PendingApproval,
  ProposedCall,
  Verdict,
} from './types.ts';
export {
  createVaglio,
  needsConfirmation,
  type PlanVerdict,
  type Vaglio,
  type VaglioSettings,
} from './vaglio.ts';
export { createVerdictLog, type VerdictLog, type VerdictLogEntry } from './verdict-log.ts';
