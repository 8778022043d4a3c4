export {
  type TinyModelDirSettings,
  type TinyModelSettings,
  tinyOnnxModel,
  tinyTokenizerJson,
  writeTinyModelDir,
} from './onnx-fixture.ts';
export { readStoreFile, recordedMigrations, storeErrorFrom, writeLegacyStoreFile } from './store-files.ts';
export {
  describeStoreSchema,
  readMigrationJournal,
  type StoreSchema,
  type TableShape,
} from './store-schema.ts';
