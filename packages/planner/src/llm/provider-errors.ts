import {
  APICallError,
  InvalidResponseDataError,
  JSONParseError,
  TypeValidationError,
} from '@ai-sdk/provider';
import { MetnosError } from '@metnos/executor-sdk';
import {
  ProviderAbortedError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './errors.ts';

/** How much of an error body is read off the wire. */
export const MAX_ERROR_BODY_BYTES = 8 * 1024;
/** How much of it an error carries. */
export const MAX_BODY_SNIPPET_CHARS = 500;

/** Network error codes that mean "the server could not be reached or hung up". */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
]);

async function readCapped(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit));
}

/**
 * Wraps a fetch so an error response's body is read from the wire only up to
 * 8 KiB, whatever the server sends; successful responses pass untouched.
 * The provider factories use it; give it to your own AI SDK provider when
 * wrapping one with `createAiSdkModel`.
 *
 * @example
 * const provider = createOpenAI({ baseURL, apiKey, fetch: cappedErrorBodyFetch(globalThis.fetch) });
 */
export function cappedErrorBodyFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok) return response;
    const text = await readCapped(response, MAX_ERROR_BODY_BYTES);
    return new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * Milliseconds a server asked us to wait: `retry-after-ms` (OpenAI), else
 * `Retry-After` as seconds or as an HTTP date (relative to `now`).
 *
 * @example
 * parseRetryAfter({ 'retry-after': '2' }, Date.now()); // 2000
 */
export function parseRetryAfter(
  headers: Record<string, string | undefined>,
  now: number,
): number | undefined {
  const lower = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
  const milliseconds = Number(lower['retry-after-ms']);
  if (lower['retry-after-ms'] !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0)
    return Math.ceil(milliseconds);
  const value = lower['retry-after']?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date starts with a day name ("Mon, 27 Apr 2026 10:00:20 GMT"); anything else is noise.
  const date = /^[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A hint a person can act on, for an HTTP status from a provider. */
export function hintForStatus(status: number, provider: string, model: string): string {
  if (status === 401) return 'auth rejected – check that the API key is set and valid for this base URL';
  if (status === 403) return 'forbidden – the key has no access to this model or endpoint';
  if (status === 404) {
    return provider === 'ollama'
      ? `model or endpoint not found – pull the model with \`ollama pull ${model}\` and check the base URL`
      : 'not found – check the model name and the base URL';
  }
  if (status === 408) return 'the server timed the request out – retry';
  if (status === 413) return 'request too large – offer fewer tools or shorten the conversation';
  if (status === 429) return 'rate-limited – back off and retry';
  if (status === 529) return 'the provider is overloaded – retry later';
  if (status >= 500) return 'server error at the provider – retry later';
  if (status === 400 || status === 422)
    return "request rejected – check the model name, max_tokens and the tools' JSON Schemas";
  return 'unexpected status from the provider';
}

/** The hint for a server that could not be reached. */
export function hintForUnreachable(provider: string): string {
  return provider === 'ollama'
    ? 'is Ollama running? start it with `ollama serve` and check base_url'
    : 'check base_url and the network connection';
}

/** The first network error code found down an error's `cause` chain. */
export function findNetworkCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current = error;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isAbortLike(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError' || name === 'ResponseAborted';
}

/** What a mapping needs to know about the request that failed. */
export interface FailureContext {
  provider: string;
  model: string;
  baseUrl: string;
  timeoutMs: number;
  /** The request's own timer fired. */
  timedOut: boolean;
  /** The caller's signal fired. */
  aborted: boolean;
  now: number;
}

/**
 * Turns whatever the AI SDK (or fetch) threw into one of the typed provider
 * errors. Metnos errors pass through; unknown errors (bugs) are returned as
 * they are rather than disguised.
 */
export function toProviderError(error: unknown, context: FailureContext): unknown {
  if (MetnosError.isInstance(error)) return error;
  const provider = context.provider;
  if (context.timedOut)
    return new ProviderTimeoutError({ providerName: provider, timeoutMs: context.timeoutMs, cause: error });
  if (context.aborted || isAbortLike(error))
    return new ProviderAbortedError({ providerName: provider, cause: error });
  if (APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 400) {
    const status = error.statusCode;
    const retryAfterMs =
      status === 429 || status === 503
        ? parseRetryAfter(error.responseHeaders ?? {}, context.now)
        : undefined;
    return new ProviderHttpError({
      status,
      bodySnippet: (error.responseBody ?? '').slice(0, MAX_BODY_SNIPPET_CHARS),
      providerName: provider,
      hint: hintForStatus(status, provider, context.model),
      retryAfterMs,
      url: error.url,
      cause: error,
    });
  }
  const networkCode = findNetworkCode(error);
  if (
    networkCode !== undefined ||
    (APICallError.isInstance(error) && error.message.startsWith('Cannot connect to API'))
  ) {
    return new ProviderUnreachableError({
      providerName: provider,
      baseUrl: context.baseUrl,
      hint: hintForUnreachable(provider),
      networkCode,
      cause: error,
    });
  }
  if (
    APICallError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    JSONParseError.isInstance(error)
  ) {
    return new ProviderResponseError({
      providerName: provider,
      message: `the answer does not have the expected shape (${error.message.slice(0, MAX_BODY_SNIPPET_CHARS)})`,
      cause: error,
    });
  }
  return error;
}

/** What {@link callProvider} needs to know about the call it runs. */
export interface ProviderCall {
  provider: string;
  model: string;
  baseUrl: string;
  timeoutMs: number;
  /** The caller's signal, when it has one. */
  signal?: AbortSignal;
  /** Clock in epoch milliseconds, for Retry-After dates. */
  now: () => number;
}

/**
 * Runs one provider request under its timeout and the caller's signal, and
 * turns whatever it throws into a typed provider error ({@link toProviderError}).
 * Chat models and embedders share it, so a timeout or an unreachable server
 * reads the same whichever of them met it.
 *
 * @example
 * const result = await callProvider({ provider: 'ollama', model, baseUrl, timeoutMs: 30_000, now: Date.now }, (abortSignal) =>
 *   embed({ model: embeddingModel, value: 'hello', maxRetries: 0, abortSignal }),
 * );
 */
export async function callProvider<Result>(
  call: ProviderCall,
  run: (abortSignal: AbortSignal) => Promise<Result>,
): Promise<Result> {
  if (call.signal?.aborted) {
    throw new ProviderAbortedError({ providerName: call.provider, cause: call.signal.reason });
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, call.timeoutMs);
  const forwardAbort = () => controller.abort();
  call.signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    return await run(controller.signal);
  } catch (error) {
    throw toProviderError(error, {
      provider: call.provider,
      model: call.model,
      baseUrl: call.baseUrl,
      timeoutMs: call.timeoutMs,
      timedOut,
      aborted: call.signal?.aborted === true,
      now: call.now(),
    });
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', forwardAbort);
  }
}
