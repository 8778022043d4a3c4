export {
  type AppSettings,
  createApp,
  publicAgentRun,
  publicTurn,
  type ServerAgents,
  type ServerEngine,
} from './app.ts';
export {
  type ApprovalsFlow,
  type ApprovalsFlowSettings,
  createApprovalsFlow,
  type HeldCall,
  type TurnOrigin,
} from './approvals-flow.ts';
export {
  createDeviceStore,
  createPairingCode,
  type Device,
  type DeviceAuthority,
  type DeviceHub,
  type DeviceHubSettings,
  type DeviceStore,
  openDeviceAuthority,
  PAIRING_LIFETIME_MS,
  type RemoteCallOutcome,
  type RemoteCallRecord,
  startDeviceHub,
} from './devices/index.ts';
export {
  activeExecutors,
  createMcpCallPath,
  createMcpServer,
  isMcpCall,
  type McpCaller,
  type McpCallOutcome,
  type McpCallPath,
  type McpCallPathSettings,
  type McpCatalog,
  type McpHeldCall,
  type McpHeldCalls,
  type McpRouteDeps,
  type McpTool,
  mcpToolOf,
} from './mcp/index.ts';
export { claimStores, OWNER_FILE, type StoresClaim, StoresOwnedError } from './owner.ts';
export { type ApiRouteDeps, registerApiRoutes } from './routes/api.ts';
export { type ApprovalRouteDeps, createPendingCalls, type PendingCalls } from './routes/approvals.ts';
export type { AuditRouteDeps } from './routes/audit.ts';
export type { DeviceRouteDeps } from './routes/devices.ts';
export type { DoctorRouteDeps } from './routes/doctor.ts';
export type { ExecutorRouteDeps } from './routes/executors.ts';
export type { MemoryRouteDeps } from './routes/memory.ts';
export { type ProposalRouteDeps, registerProposalRoutes } from './routes/proposals.ts';
export { registerScheduleRoutes, type ScheduleRouteSettings } from './routes/schedules.ts';
export {
  CadenceError,
  createRemindersService,
  type RemindersServiceSettings,
  resolveCadence,
  type Schedule,
  ScheduleInputError,
  ScheduleNotFoundError,
  Scheduler,
} from './scheduler/index.ts';
export {
  type AgedGraph,
  type AgerSummary,
  describeAger,
  type MnestomeTaskSettings,
  mnestomeAgerTask,
} from './scheduler/mnestome-task.ts';
export {
  type NightlyStep,
  nightlySteps,
  type SuggestingSynt,
  syntSuggestTask,
} from './scheduler/synt-task.ts';
export {
  BUILTIN_TASKS,
  createScheduledFire,
  type Deliver,
  type Notify,
  type ScheduledFire,
  type ScheduledFireSettings,
  type SchedulerService,
  type SchedulerServiceSettings,
  startSchedulerService,
  telegramDelivery,
} from './scheduler/wiring.ts';
export { type ServeSettings, startServer } from './serve.ts';
export * from './telegram/index.ts';
export { startTelemetry, type Telemetry, TelemetryError, type TelemetrySettings } from './telemetry.ts';
export { bearerMatches, ServerTokenError, serverToken, TOKEN_FILE } from './token.ts';
