export {
  createEngine,
  type Engine,
  type EngineAutopathStore,
  type EngineEmbedder,
  type EngineFastpathStore,
  type EngineLayer,
  type EngineResult,
  type EngineSettings,
} from './engine/engine.ts';
export {
  type ExecutedStep,
  type ExecutionOutcome,
  executePlan,
  type RecoveryClass,
  recoveryClassOf,
} from './engine/executor.ts';
export {
  extractIntent,
  INTENT_OBJECTS,
  INTENT_VERBS,
  type Intent,
  intentFromRules,
} from './engine/intent.ts';
export {
  canonicalJson,
  type Plan,
  type PlanStep,
  parsePlan,
  planHash,
  planSchema,
  planTools,
  validatePlanShape,
} from './engine/plan.ts';
export { preFastpath } from './engine/pre-fastpath.ts';
export { createProposer, type ProposeRequest, type ProposeResult, type Proposer } from './engine/proposer.ts';
export { PlanReferenceError, resolvePlaceholders } from './engine/references.ts';
export {
  bindSlots,
  extractSlots,
  fingerprint,
  normalizeRequest,
  type Slot,
  type SlotKind,
  templatize,
} from './engine/slots.ts';
export {
  createGapLog,
  detectLanguage,
  type GapLog,
  type Language,
  TERMINATOR_MESSAGES,
  type TerminationCause,
  terminationMessage,
} from './engine/terminator.ts';
export { validatePlan } from './engine/validator.ts';
export { hardenArgs } from './hardening.ts';
export * from './llm/index.ts';
export { hasReferences, PipingError, referencedSteps, resolveReferences } from './piping.ts';
export {
  type PrefilterEntry,
  type PrefilterResult,
  type PrefilterSettings,
  prefilter,
  type RankedCandidate,
  STOP_WORDS,
  tokenize,
} from './prefilter.ts';
export type { ApprovalChecker, CallReviewer, ReviewContext, ReviewedCall, ReviewVerdict } from './review.ts';
export {
  createScratchpad,
  SCRATCHPAD_READ_TOOL,
  SCRATCHPAD_THRESHOLD_BYTES,
  type Scratchpad,
  type ScratchpadObservation,
  type ScratchpadReadMode,
  type ScratchpadSettings,
  summarize,
} from './scratchpad.ts';
export {
  classifyExecutorFailure,
  createPlanner,
  type FinalKind,
  type HybridRules,
  type Planner,
  type PlannerMode,
  type PlannerSettings,
  parsePlanText,
  type StepRecord,
  type TurnResult,
} from './turn.ts';
export { createTurnLog, type TurnLog, type TurnLogEntry, type TurnLogStep } from './turn-log.ts';
