export {
  type ComposeReport,
  type ComposeRequest,
  type Composer,
  composeReaction,
  createComposer,
  ROAD_CLOSED,
} from './compose.ts';
export { type ChainResult, type FindChainOptions, findChain } from './find-chain.ts';
export { type Contract, contractOf, type Field, type FieldKind } from './schema-fields.ts';
export { wantedWords } from './words.ts';
