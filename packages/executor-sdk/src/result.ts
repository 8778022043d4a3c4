import { z } from 'zod';
import type { IsolationTier } from './profile.ts';

/**
 * Error classes the runtime itself produces, beside those an executor's
 * manifest declares. `PolicyViolation` and `IsolationUnavailable` mean no
 * process was started.
 */
export const RUNTIME_ERROR_CLASSES = [
  'InvalidInput',
  'InvalidOutput',
  'Crashed',
  'Timeout',
  'OutputTooLarge',
  'NonJsonOutput',
  'PolicyViolation',
  'IsolationUnavailable',
  'NotInvocable',
  'ResourceLimit',
  'AuditUnavailable',
] as const;

export type RuntimeErrorClass = (typeof RUNTIME_ERROR_CLASSES)[number];

/**
 * Classes only the host emits (a refusal before start, a limit it enforced, an
 * audit it could not write). An executor process that returns one of them gets
 * `InvalidOutput` instead, and no manifest may declare one.
 *
 * @example
 * HOST_ONLY_ERROR_CLASSES.includes('PolicyViolation'); // true
 */
export const HOST_ONLY_ERROR_CLASSES = [
  'PolicyViolation',
  'IsolationUnavailable',
  'NotInvocable',
  'ResourceLimit',
  'OutputTooLarge',
  'NonJsonOutput',
  'AuditUnavailable',
] as const;

/** Which isolation layers actually wrapped a call. */
export interface IsolationRecord {
  tier: IsolationTier;
  /** Layer names, e.g. `process`, `bubblewrap`, `landlock`, `seccomp`, `rlimits`, `cgroup-memory`, `heap-limit`. */
  layers: string[];
  /** True only when a caller explicitly ran below the declared minimum tier (SDK tests). */
  belowDeclared?: boolean;
  /** Notes such as "memory limited by V8 heap only". */
  notes?: string[];
}

/** The outcome of one invocation: data, never an exception. */
export type ExecutorResult =
  | { ok: true; content?: unknown; metadata?: Record<string, unknown>; isolation?: IsolationRecord }
  | {
      ok: false;
      error: { class: string; message: string };
      metadata?: Record<string, unknown>;
      isolation?: IsolationRecord;
    };

/** The shape a harness writes on stdout; parsed with this schema, never trusted raw. */
export const childResultSchema = z.union([
  z
    .object({
      ok: z.literal(true),
      content: z.unknown().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  z
    .object({
      ok: z.literal(false),
      error: z.object({ class: z.string().min(1).max(64), message: z.string().max(8000) }).strict(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
]);

/** Builds a failed result. */
export function failure(
  errorClass: string,
  message: string,
  extra: { metadata?: Record<string, unknown>; isolation?: IsolationRecord } = {},
): ExecutorResult {
  return { ok: false, error: { class: errorClass, message }, ...extra };
}
