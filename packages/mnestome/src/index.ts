export type { AgerReport, BelowThresholdProposal } from './ager.ts';
export {
  type DesiredSignature,
  desiredSignatureSchema,
  MAX_PURPOSE_WORDS,
  readDesiredSignature,
} from './desired-signature.ts';
export { mnestomeMigrations } from './migrations.ts';
export {
  createMnestome,
  type Mnest,
  type Mnestome,
  type MnestomeSettings,
  type ProtoFilter,
} from './mnestome.ts';
export { DEFAULT_RULES, decayed, type MnestomeRules, reinforced } from './rules.ts';
