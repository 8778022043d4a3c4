export { createDefaultEmbedder } from './default-embedder.ts';
export {
  type CombinedPart,
  createCombinedEmbedder,
  type Embedder,
  type FittableEmbedder,
  isFittable,
  type LabelledText,
  normalizeVector,
  words,
} from './embedder.ts';
export {
  EmbedderError,
  type EmbedderFailure,
  StoreError,
  type StoreFailure,
  VectorIndexError,
} from './errors.ts';
export { createHashingEmbedder, type HashingEmbedderSettings } from './hashing-embedder.ts';
export { type LabelledVector, labelSimilaritiesOf } from './label-similarities.ts';
export { createOnnxEmbedder, type OnnxEmbedderSettings } from './onnx-embedder.ts';
export {
  type CalibrationExample,
  type CalibrationOptions,
  type CalibrationPoint,
  type CalibrationReport,
  type CalibrationTargets,
  confidentErrors,
  createRecognizer,
  type DecisionRule,
  evaluateRule,
  fitDecisionRule,
  type Recognition,
  type Recognizer,
  type RecognizerIndex,
  type RecognizerSettings,
} from './recognizer.ts';
export {
  createVectorIndex,
  type LabelSimilarity,
  type NewVectorEntry,
  type ScanOptions,
  type SearchHit,
  type VectorEntry,
  type VectorIndex,
  type VectorIndexSettings,
} from './vector-index.ts';
export { createWordVectorEmbedder, type WordVectorEmbedderSettings } from './word-vector-embedder.ts';
