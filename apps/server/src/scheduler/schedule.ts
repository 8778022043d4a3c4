import { z } from 'zod';
import { isTimeZone } from './cadence.ts';

/**
 * What a firing does: invoke one executor with arguments, run a request as if
 * the user typed it, or (a reminder) deliver a text on the schedule's channel
 * and run nothing.
 */
export type ScheduleTarget =
  | { kind: 'executor'; executor: string; args: Record<string, unknown> }
  | { kind: 'request'; text: string }
  | { kind: 'reminder'; text: string }
  | { kind: 'builtin'; task: string };

/** What a schedule does when a firing fails (after its retries). */
export type OnFailure = 'skip' | 'retry' | 'notify' | 'cancel';

/** A schedule's lifecycle: completed when its count or expiry is reached, cancelled by the user or by failures. */
export type ScheduleState = 'active' | 'paused' | 'completed' | 'cancelled';

/** A schedule as stored. Instants are ISO strings. */
export interface Schedule {
  id: string;
  /** Set for built-in schedules (`memory_aging`), unique. */
  name: string | null;
  target: ScheduleTarget;
  /** The formal cadence (`0 8 * * *`, `daily@04:00`, `every_15_minutes`, `manual`). */
  cadence: string;
  timezone: string;
  channel: string | null;
  count: number | null;
  expiry: string | null;
  on_failure: OnFailure;
  max_consecutive_failures: number | null;
  paused: boolean;
  state: ScheduleState;
  /** Why it is completed or cancelled. */
  closed_reason: string | null;
  /** Slots fired so far (ok, failed or interrupted). */
  fired: number;
  consecutive_failures: number;
  /** The instant slots are counted from: creation, or the last change of cadence. */
  anchor: string;
  created_at: string;
  updated_at: string;
}

/** Input refused before it reaches the store; `issues` says what and where. */
export class ScheduleInputError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid schedule: ${issues.join('; ')}`);
    this.name = 'ScheduleInputError';
    this.issues = issues;
  }
}

/** Limits on what a schedule may carry. */
export const SCHEDULE_LIMITS = {
  /** Nesting of the whole input, arguments included. */
  depth: 8,
  /** Any one string. */
  stringLength: 4000,
  /** The input as JSON. */
  totalBytes: 64 * 1024,
  /** Keys of any one object. */
  keys: 100,
} as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Walks untrusted input before zod sees it: refuses nesting deeper than
 * {@link SCHEDULE_LIMITS.depth}, keys that reach prototypes, huge strings and
 * objects, non-plain values (functions, class instances, cycles), and input
 * larger than {@link SCHEDULE_LIMITS.totalBytes} as JSON.
 */
export function hostileInputIssues(value: unknown): string[] {
  const issues: string[] = [];
  const seen = new Set<object>();
  const walk = (node: unknown, path: string, depth: number): void => {
    if (issues.length > 0) return;
    if (typeof node === 'string') {
      if (node.length > SCHEDULE_LIMITS.stringLength)
        issues.push(`${path}: string longer than ${SCHEDULE_LIMITS.stringLength} characters`);
      return;
    }
    if (node === null || typeof node === 'number' || typeof node === 'boolean' || node === undefined) return;
    if (typeof node !== 'object') {
      issues.push(`${path}: a ${typeof node} is not data`);
      return;
    }
    if (depth >= SCHEDULE_LIMITS.depth) {
      issues.push(`${path}: nested deeper than ${SCHEDULE_LIMITS.depth}`);
      return;
    }
    if (seen.has(node)) {
      issues.push(`${path}: refers to itself`);
      return;
    }
    seen.add(node);
    const prototype = Object.getPrototypeOf(node);
    if (!Array.isArray(node) && prototype !== Object.prototype && prototype !== null) {
      issues.push(`${path}: not a plain object`);
      return;
    }
    const keys = Reflect.ownKeys(node);
    if (keys.length > SCHEDULE_LIMITS.keys && !Array.isArray(node)) {
      issues.push(`${path}: more than ${SCHEDULE_LIMITS.keys} keys`);
      return;
    }
    if (Array.isArray(node) && node.length > SCHEDULE_LIMITS.keys) {
      issues.push(`${path}: more than ${SCHEDULE_LIMITS.keys} items`);
      return;
    }
    for (const key of keys) {
      if (typeof key === 'symbol') {
        issues.push(`${path}: symbol keys are not data`);
        return;
      }
      if (Array.isArray(node) && key === 'length') continue;
      if (FORBIDDEN_KEYS.has(key)) {
        issues.push(`${path}.${key}: forbidden key`);
        return;
      }
      walk((node as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
    }
  };
  walk(value, 'input', 0);
  if (issues.length > 0) return issues;
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  if (bytes > SCHEDULE_LIMITS.totalBytes)
    issues.push(`input: ${bytes} bytes as JSON, over ${SCHEDULE_LIMITS.totalBytes}`);
  return issues;
}

const EXECUTOR_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const CHANNEL_NAME = /^[a-z][a-z0-9_:-]{0,63}$/;

const target = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('executor'),
    executor: z.string().regex(EXECUTOR_NAME, 'an executor name: lowercase letters, digits, _'),
    args: z.record(z.string(), z.unknown()).default({}),
  }),
  z.strictObject({ kind: z.literal('request'), text: z.string().trim().min(1).max(2000) }),
]);

const instant = z
  .union([z.iso.datetime({ offset: true }), z.date()])
  .transform((value) => (value instanceof Date ? value : new Date(value)))
  .refine((value) => Number.isFinite(value.getTime()), 'not a valid instant');

const timezone = z.string().max(64).refine(isTimeZone, 'not an IANA time zone');

/** What `create` accepts, before the cadence is read. */
export const scheduleInputSchema = z.strictObject({
  target,
  cadence: z.string().trim().min(1).max(200),
  timezone: timezone.default('UTC'),
  channel: z.string().regex(CHANNEL_NAME, 'a channel name').nullable().default(null),
  count: z.number().int().min(1).max(1_000_000).nullable().default(null),
  expiry: instant.nullable().default(null),
  on_failure: z.enum(['skip', 'retry', 'notify', 'cancel']).default('notify'),
  max_consecutive_failures: z.number().int().min(1).max(1000).nullable().default(3),
  paused: z.boolean().default(false),
});

export type ScheduleInput = z.input<typeof scheduleInputSchema>;
export type ParsedScheduleInput = z.output<typeof scheduleInputSchema>;

/** What `modify` accepts: any of the fields, none of them the lifecycle. */
export const schedulePatchSchema = z.strictObject({
  target: target.optional(),
  cadence: z.string().trim().min(1).max(200).optional(),
  timezone: timezone.optional(),
  channel: z.string().regex(CHANNEL_NAME, 'a channel name').nullable().optional(),
  count: z.number().int().min(1).max(1_000_000).nullable().optional(),
  expiry: instant.nullable().optional(),
  on_failure: z.enum(['skip', 'retry', 'notify', 'cancel']).optional(),
  max_consecutive_failures: z.number().int().min(1).max(1000).nullable().optional(),
});

export type SchedulePatch = z.input<typeof schedulePatchSchema>;

/**
 * Validates untrusted input with `schema` after {@link hostileInputIssues};
 * throws {@link ScheduleInputError} naming every problem.
 */
export function validate<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const hostile = hostileInputIssues(input);
  if (hostile.length > 0) throw new ScheduleInputError(hostile);
  const result = schema.safeParse(input);
  if (!result.success)
    throw new ScheduleInputError(
      result.error.issues.map(
        (issue) => `${['input', ...issue.path.map(String)].join('.')}: ${issue.message}`,
      ),
    );
  return result.data;
}
