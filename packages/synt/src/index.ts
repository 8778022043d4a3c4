export {
  type ComposeReport,
  type ComposeRequest,
  type Composer,
  composeReaction,
  createComposer,
  ROAD_CLOSED,
} from './compose.ts';
export { unifiedDiff } from './diff.ts';
export { SyntError, type SyntErrorCode } from './errors.ts';
export { type ChainResult, type FindChainOptions, findChain } from './find-chain.ts';
export { draftArtefacts, type Review, reviewOf } from './generate/approval.ts';
export { renderManifest, reviewDigest } from './generate/artefacts.ts';
export { syntCases } from './generate/birth.ts';
export { type CaseReport, runBirthCases } from './generate/birth-run.ts';
export { checkCode, checkSchemaText, DEFINE_MODULE } from './generate/code-check.ts';
export { approvalRefusal, RELEASE_KEY_NAME } from './generate/install.ts';
export { type ModelCallRecord, promptHashOf } from './generate/lineage.ts';
export { DEFAULT_PATTERN_RULES, recurringProtos } from './generate/pattern.ts';
export {
  createGenerator,
  GENERATION_STAGES,
  type Generator,
  type GeneratorOptions,
} from './generate/pipeline.ts';
export { grantLadder } from './generate/profile.ts';
export { SKELETON_SYSTEM, SPECIFICATION_SYSTEM } from './generate/prompts.ts';
export {
  type BirthCase,
  birthCaseSchema,
  checkSpecification,
  readModelJson,
  type Specification,
  specificationSchema,
} from './generate/spec-schema.ts';
export {
  type Approval,
  type Artefacts,
  type Decision,
  type GeneratorSettings,
  type Grants,
  type Motivation,
  type PatternRules,
  type ProtoSource,
  type RunDraft,
  STAGE_NAMES,
  type Stage,
  type StageContext,
  type StageName,
  type StageOutcome,
  type SyntModel,
  type WaitingFor,
} from './generate/types.ts';
export { fadedFusedCandidates } from './introspect/fused.ts';
export { type GeneraliseRules, generaliseCandidates, shapeOf } from './introspect/generalise.ts';
export { compatibleProfiles, type MergeRules, mergeCandidates } from './introspect/merge.ts';
export {
  type AuditedCall,
  narrowedGrants,
  readAuditedCalls,
  type SpecialiseRules,
  specialiseCandidates,
} from './introspect/specialise.ts';
export type { CardDraft, IntrospectionInput } from './introspect/types.ts';
export { type Contract, contractOf, type Field, type FieldKind } from './schema-fields.ts';
export { protoCards } from './suggest.ts';
export {
  createSynt,
  INTERRUPTED_AFTER_MS,
  type ProposalDetail,
  type ProposalSummary,
  type SuggestReport,
  type Synt,
  type SyntSettings,
} from './synt.ts';
export {
  createSyntStore,
  type ProposalKind,
  type ProposalRecord,
  type ProposalState,
  type RunRecord,
  type RunState,
  type StageRecord,
  type SyntStore,
  type SyntStoreSettings,
  syntMigrations,
} from './synt-store.ts';
export { wantedWords } from './words.ts';
