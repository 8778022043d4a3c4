export { createSandboxAudit, type SandboxAudit, type SandboxAuditEntry } from './audit.ts';
export { type BirthOptions, birth, sharedSandboxRunner } from './birth.ts';
export { type DomainRule, domainAllowed, isInternalAddress, parseDomainRule } from './domains.ts';
export {
  type EgressCallParts,
  type EgressProxy,
  type EgressProxySettings,
  type Lookup,
  startEgressProxy,
} from './egress-proxy.ts';
export { SandboxError } from './errors.ts';
export {
  DEVICES_ALLOWED,
  ETC_READABLE,
  type ForbiddenSet,
  forbiddenInside,
  forbiddenSet,
  HOME_SECRETS,
  SYSTEM_FORBIDDEN,
} from './forbidden.ts';
export {
  checkHelper,
  defaultHelperCacheDir,
  ensureHelper,
  HELPER_SOURCE,
  type HelperStatus,
} from './helper.ts';
export {
  type DoctorFinding,
  type DoctorReport,
  doctor,
  formatDoctorReport,
  type HostReport,
  type LayerName,
  type LayerReport,
  type ProbeSettings,
  probeHost,
} from './host-probe.ts';
export {
  type ArgumentCheckContext,
  checkArguments,
  type PolicyRule,
  type PolicyViolation,
  type ResolvedProfile,
  resolveProfile,
  textKeysOf,
} from './policy.ts';
export { metnosOwnPaths } from './protected.ts';
export { type ResolvedPath, resolveReal } from './resolve-path.ts';
export {
  createSandboxRunner,
  FULL_TIER_CAPABILITIES,
  type SandboxRunner,
  type SandboxRunnerSettings,
} from './runner.ts';
export type { WarmPoolSettings, WarmPoolStats } from './warm-pool.ts';
export { meterWrites, treeWrites } from './write-meter.ts';
