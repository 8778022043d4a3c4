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
export { aggregate } from './verifier/aggregate.ts';
export { candidateTexts, messageOf } from './verifier/candidate-text.ts';
export { answerRules, BUILT_IN_PACKS, fileRules, mailRules } from './verifier/packs/index.ts';
export { PROBES } from './verifier/probes/index.ts';
export { createRulePackRegistry, defineRulePack, type RulePackRegistry } from './verifier/rule-pack.ts';
export {
  type AnswerCandidate,
  answerCandidateSchema,
  BUILT_IN_KINDS,
  type Candidate,
  type Evidence,
  type EvidenceInput,
  evidenceSchema,
  type MailCandidate,
  mailCandidateSchema,
  RULE_PACK_ID,
  type VerifyInput,
  type VerifyStep,
  verifyStepSchema,
} from './verifier/shapes.ts';
export { indexSources, type Sources } from './verifier/sources.ts';
export {
  actionClaimsIn,
  filePathsIn,
  mentionsFailure,
  placeholdersIn,
  samePath,
} from './verifier/text-patterns.ts';
export type {
  Advisory,
  Outcome,
  Rule,
  RuleClass,
  RulePack,
  RuleResult,
  TraceEntry,
  VerificationContext,
  VerifierVerdict,
} from './verifier/types.ts';
export { VerificationBlocked } from './verifier/verification-blocked.ts';
export {
  createVerifier,
  VERIFIER_VERSION,
  type Verifier,
  type VerifierSettings,
} from './verifier/verifier.ts';
