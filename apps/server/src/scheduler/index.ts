export {
  type Cadence,
  CadenceError,
  describeCadence,
  formatCadence,
  isTimeZone,
  type NaturalCadence,
  parseCadence,
  parseNaturalCadence,
  type ResolvedCadence,
  resolveCadence,
  slotAfter,
  slotAtOrBefore,
} from './cadence.ts';
export {
  createRemindersService,
  REMINDER_MAX_AHEAD_MS,
  type RemindersServiceSettings,
  reminderRequestSchema,
} from './reminders.ts';
export {
  hostileInputIssues,
  type OnFailure,
  SCHEDULE_LIMITS,
  type Schedule,
  type ScheduleInput,
  ScheduleInputError,
  type SchedulePatch,
  type ScheduleState,
  type ScheduleTarget,
  scheduleInputSchema,
  schedulePatchSchema,
} from './schedule.ts';
export {
  type BuiltinTask,
  type Fire,
  type FireResult,
  ScheduleNotFoundError,
  Scheduler,
  type SchedulerOptions,
  type Slot,
  type SlotOutcome,
} from './scheduler.ts';
export {
  type RunEvent,
  SchedulerStore,
  type SlotRow,
  type SlotStatus,
  schedulerStoreMigrations,
} from './store.ts';
