import type { Hono } from 'hono';
import type { RouteDoc } from '../openapi.ts';
import { type ApprovalRouteDeps, approvalRouteDocs, registerApprovalRoutes } from './approvals.ts';
import { type AuditRouteDeps, auditRouteDocs, registerAuditRoutes } from './audit.ts';
import { type DeviceRouteDeps, deviceRouteDocs, registerDeviceRoutes } from './devices.ts';
import { type DoctorRouteDeps, doctorRouteDocs, registerDoctorRoutes } from './doctor.ts';
import { type ExecutorRouteDeps, executorRouteDocs, registerExecutorRoutes } from './executors.ts';
import { type MemoryRouteDeps, memoryRouteDocs, registerMemoryRoutes } from './memory.ts';
import { type ProposalRouteDeps, proposalRouteDocs, registerProposalRoutes } from './proposals.ts';

/** The API route groups a server mounts: each only when its dependencies are given. */
export interface ApiRouteDeps {
  memory?: MemoryRouteDeps;
  executors?: ExecutorRouteDeps;
  approvals?: ApprovalRouteDeps;
  audit?: AuditRouteDeps;
  doctor?: DoctorRouteDeps;
  proposals?: ProposalRouteDeps;
  /** Paired laptops: codes, the list, rename, revoke; calls and undo when the device channel runs. */
  devices?: DeviceRouteDeps;
}

/**
 * Mounts every route group given on `app` (behind whatever middleware `app`
 * already runs, the bearer token in {@link createApp}).
 *
 * @example
 * registerApiRoutes(app, { memory: { fastpath, autopath, gaps }, audit: { auditDir } });
 */
export function registerApiRoutes(app: Hono, deps: ApiRouteDeps): void {
  if (deps.memory) registerMemoryRoutes(app, deps.memory);
  if (deps.executors) registerExecutorRoutes(app, deps.executors);
  if (deps.approvals) registerApprovalRoutes(app, deps.approvals);
  if (deps.audit) registerAuditRoutes(app, deps.audit);
  if (deps.doctor) registerDoctorRoutes(app, deps.doctor);
  if (deps.proposals) registerProposalRoutes(app, deps.proposals);
  if (deps.devices) registerDeviceRoutes(app, deps.devices);
}

/** The routes {@link registerApiRoutes} mounts for `deps`, for the OpenAPI document. */
export function apiRouteDocs(deps: ApiRouteDeps): RouteDoc[] {
  return [
    ...(deps.memory ? memoryRouteDocs : []),
    ...(deps.executors ? executorRouteDocs : []),
    ...(deps.approvals ? approvalRouteDocs : []),
    ...(deps.audit ? auditRouteDocs : []),
    ...(deps.doctor ? doctorRouteDocs : []),
    ...(deps.proposals ? proposalRouteDocs : []),
    ...(deps.devices ? deviceRouteDocs : []),
  ];
}
