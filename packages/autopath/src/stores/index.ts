export { StoreError, type StoreFailure } from '../errors.ts';
export {
  type AntiAutopathRow,
  type AutopathEntry,
  type AutopathRules,
  type AutopathStore,
  type ClusterRow,
  compositeScore,
  createAutopathStore,
  type ObservationRow,
} from './autopath-store.ts';
export type { StoredCalibration } from './calibrations.ts';
export {
  type AgingRules,
  createFastpathStore,
  type FastpathEntry,
  type FastpathInput,
  type FastpathStore,
} from './fastpath-store.ts';
export { packageMigrations, type StoreMigrations } from './migrations.ts';
export {
  blobToVector,
  dot,
  moveStoreAside,
  openDatabase,
  type StoreLocation,
  vectorToBlob,
} from './sqlite.ts';
