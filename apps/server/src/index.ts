export { type AppSettings, createApp, publicTurn, type ServerEngine } from './app.ts';
export { registerScheduleRoutes, type ScheduleRouteSettings } from './routes/schedules.ts';
export { type Schedule, ScheduleInputError, Scheduler } from './scheduler/index.ts';
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
export { bearerMatches, ServerTokenError, serverToken, TOKEN_FILE } from './token.ts';
