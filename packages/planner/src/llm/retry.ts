import { randomUUID } from 'node:crypto';
import {
  ProviderAbortedError,
  ProviderConfigError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './errors.ts';
import { findNetworkCode } from './provider-errors.ts';

/**
 * What to do about a failure: `transient` (retry with backoff), `permanent`
 * (do not retry; report), `policy` (a rule said no; do not retry, and abort
 * the run when the step is mandatory).
 */
export type FailureClass = 'transient' | 'permanent' | 'policy';

/** Executor error classes that are worth another attempt. */
export const TRANSIENT_ERROR_CLASSES: ReadonlySet<string> = new Set([
  'Timeout',
  'RateLimited',
  'Network',
  'DnsError',
  'Unavailable',
]);

/** Error classes that mean a policy refused the action. */
export const POLICY_ERROR_CLASSES: ReadonlySet<string> = new Set([
  'PolicyViolation',
  'PolicyDenied',
  'IsolationUnavailable',
  'MarkingViolation',
  'PurposeMismatch',
]);

const CLASSES: ReadonlySet<string> = new Set(['transient', 'permanent', 'policy']);

function classifyStatus(status: number): FailureClass {
  return status === 408 || status === 425 || status === 429 || status >= 500 ? 'transient' : 'permanent';
}

/** A failed result as data: `{ ok: false, error: { class, message } }` (executors) or `{ approved: false }` (the Vaglio). */
function isFailedResult(
  value: unknown,
): value is { ok?: false; approved?: false; error?: { class?: unknown } } {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as { ok?: unknown; approved?: unknown };
  return record.ok === false || record.approved === false;
}

/**
 * Sorts a model or executor failure into transient / permanent / policy.
 * Accepts a thrown error or a failed result: HTTP 5xx, 408, 429, timeouts and
 * dropped or refused connections are transient; other 4xx, malformed answers,
 * bad config and aborts are permanent; executor `PolicyViolation`-like
 * classes and Vaglio denials are policy. An explicit `classification` field
 * wins. Anything unrecognised is permanent: retrying the unknown hides bugs.
 *
 * @example
 * classifyFailure(new ProviderHttpError({ status: 503, ... }));                 // 'transient'
 * classifyFailure({ ok: false, error: { class: 'PolicyViolation', message } }); // 'policy'
 */
export function classifyFailure(failure: unknown): FailureClass {
  if (typeof failure !== 'object' || failure === null) return 'permanent';
  const explicit = (failure as { classification?: unknown }).classification;
  if (typeof explicit === 'string' && CLASSES.has(explicit)) return explicit as FailureClass;
  if (isFailedResult(failure)) {
    if ((failure as { approved?: unknown }).approved === false) return 'policy';
    const errorClass = failure.error?.class;
    if (typeof errorClass !== 'string') return 'permanent';
    if (POLICY_ERROR_CLASSES.has(errorClass)) return 'policy';
    return TRANSIENT_ERROR_CLASSES.has(errorClass) ? 'transient' : 'permanent';
  }
  if (ProviderHttpError.isInstance(failure)) return classifyStatus(failure.status);
  if (ProviderTimeoutError.isInstance(failure) || ProviderUnreachableError.isInstance(failure))
    return 'transient';
  if (
    ProviderAbortedError.isInstance(failure) ||
    ProviderConfigError.isInstance(failure) ||
    ProviderResponseError.isInstance(failure)
  ) {
    return 'permanent';
  }
  const record = failure as { name?: unknown; status?: unknown; statusCode?: unknown };
  if (record.name === 'AbortError') return 'permanent';
  if (record.name === 'TimeoutError') return 'transient';
  const status = typeof record.status === 'number' ? record.status : record.statusCode;
  if (typeof status === 'number') return classifyStatus(status);
  return findNetworkCode(failure) === undefined ? 'permanent' : 'transient';
}

/** What each attempt receives. */
export interface RetryAttempt {
  /** 1 for the first call. */
  attempt: number;
  /** The same on every attempt, so the far side can deduplicate. */
  idempotencyKey: string;
  signal?: AbortSignal;
}

/** Reported before each wait. */
export interface RetryEvent {
  attempt: number;
  delayMs: number;
  classification: FailureClass;
  failure: unknown;
}

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** Total attempts, the first included. Default 3. */
  attempts?: number;
  /** Backoff of the first retry. Default 500 ms. */
  baseDelayMs?: number;
  /** Cap on one wait; a Retry-After longer than this ends the retries. Default 10 000 ms. */
  maxDelayMs?: number;
  /** Spread each wait over [half, full] of the backoff. Default true. */
  jitter?: boolean;
  /** Source of randomness in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number;
  /** How to wait. Default a timer that ends early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Passed to every attempt. Default a random UUID. */
  idempotencyKey?: string;
  /** Stops further attempts when aborted. */
  signal?: AbortSignal;
  /** Default {@link classifyFailure}. */
  classify?: (failure: unknown) => FailureClass;
  onRetry?: (event: RetryEvent) => void;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function retryAfterOf(failure: unknown): number | undefined {
  const value = (failure as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Runs `fn` until it succeeds, with exponential backoff and jitter between
 * transient failures. Works for functions that throw (models) and for those
 * that return failures as data (`{ ok: false, error }` from executors): a
 * transient failed result is retried, the last one is returned. Never retries
 * sooner than a server's Retry-After; gives up when that is longer than
 * `maxDelayMs`. Every attempt gets the same idempotency key.
 *
 * @example
 * const response = await withRetry(({ signal }) => model.generate({ ...request, signal }), { attempts: 3, signal });
 */
export async function withRetry<T>(
  fn: (attempt: RetryAttempt) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? 3);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const classify = options.classify ?? classifyFailure;
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  const signal = options.signal;

  for (let attempt = 1; ; attempt++) {
    let failure: unknown;
    let thrown = false;
    try {
      const value = await fn({ attempt, idempotencyKey, ...(signal ? { signal } : {}) });
      if (!isFailedResult(value)) return value;
      failure = value;
    } catch (error) {
      failure = error;
      thrown = true;
    }
    const giveUp = () => {
      if (thrown) throw failure;
      return failure as T;
    };
    const classification = classify(failure);
    if (classification !== 'transient' || attempt >= attempts || signal?.aborted) return giveUp();
    const exponential = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    let delayMs = options.jitter === false ? exponential : exponential / 2 + (random() * exponential) / 2;
    const retryAfter = retryAfterOf(failure);
    if (retryAfter !== undefined) {
      if (retryAfter > maxDelayMs) return giveUp();
      delayMs = Math.max(delayMs, retryAfter);
    }
    delayMs = Math.round(delayMs);
    options.onRetry?.({ attempt, delayMs, classification, failure });
    await sleep(delayMs, signal);
    if (signal?.aborted) return giveUp();
  }
}
