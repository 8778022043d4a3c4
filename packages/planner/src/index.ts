export { hardenArgs, TOOL_UNAVAILABLE } from './hardening.ts';
export type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall, ToolSpec } from './model.ts';
export { hasReferences, PipingError, referencedSteps, resolveReferences } from './piping.ts';
export {
  type PrefilterEntry,
  STOP_WORDS,
  type PrefilterResult,
  type PrefilterSettings,
  prefilter,
  type RankedCandidate,
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
