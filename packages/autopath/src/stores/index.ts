export { StoreError, type StoreFailure } from '../errors.ts';
export {
  type AutopathEntry,
  type AutopathRules,
  type AutopathStore,
  antiAutopaths,
  autopaths,
  clusters,
  compositeScore,
  createAutopathStore,
  observations,
} from './autopath-store.ts';
export {
  type AgingRules,
  createFastpathStore,
  type FastpathEntry,
  type FastpathStore,
  fastpaths,
} from './fastpath-store.ts';
export {
  blobToVector,
  dot,
  moveStoreAside,
  openDatabase,
  type StoreLocation,
  vectorToBlob,
} from './sqlite.ts';
