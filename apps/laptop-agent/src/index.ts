export { parseServerAddress } from './address.ts';
export { type LaptopAgent, type LaptopAgentSettings, startLaptopAgent } from './agent.ts';
export { createLaptopAuditLog, type LaptopAuditLog } from './audit.ts';
export { createExecutorCache, type ExecutorCache } from './cache.ts';
export { type Confinement, createPermissionRunner, defaultConfinement } from './confinement.ts';
export { grantFolder } from './grant.ts';
export { createGuard, type Guard } from './guard.ts';
export { type DeviceIdentity, loadIdentity } from './identity.ts';
export {
  type CallState,
  createLedger,
  type Ledger,
  type LedgerCall,
  type LedgerOperation,
  type LedgerSettings,
} from './ledger/ledger.ts';
export { type PairSettings, pairDevice } from './pair.ts';
export { type LaptopPlaces, laptopPlaces } from './places.ts';
export {
  type CallLink,
  createLaptopRuntime,
  type LaptopRuntime,
  type LaptopRuntimeSettings,
} from './runtime.ts';
