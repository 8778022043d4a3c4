import { MetnosError } from '@metnos/executor-sdk';

function marked(error: unknown, marker: symbol): boolean {
  return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
}

const configMarker = Symbol.for('metnos.error.ProviderConfigError');

/**
 * A model that cannot be built from its settings: no model name, an empty API
 * key, a base URL that would send the key in the clear, an unknown provider.
 * Thrown at construction, so a bad config fails before the first turn.
 *
 * @example
 * try { createOpenAiModel({ model: '', apiKey }); }
 * catch (error) { if (ProviderConfigError.isInstance(error)) console.error(error.field, error.message); }
 */
export class ProviderConfigError extends MetnosError {
  private readonly [configMarker] = true;
  /** The setting at fault, e.g. `model`, `api_key_env`, `base_url`, `runtime.llm.fast`. */
  readonly field: string;

  constructor(settings: { field: string; message: string; cause?: unknown }) {
    super({ code: 'provider_config', message: settings.message, cause: settings.cause });
    this.name = 'ProviderConfigError';
    this.field = settings.field;
  }

  static override isInstance(error: unknown): error is ProviderConfigError {
    return marked(error, configMarker);
  }
}

const httpMarker = Symbol.for('metnos.error.ProviderHttpError');

/**
 * A provider answered with a non-2xx status. Carries what a person needs to
 * act: the status, the start of the body (at most 500 characters, read from at
 * most 8 KiB), a hint for that status, and on 429/503 how long the server
 * asked us to wait.
 *
 * @example
 * catch (error) {
 *   if (ProviderHttpError.isInstance(error) && error.status === 429) await sleep(error.retryAfterMs ?? 1000);
 * }
 */
export class ProviderHttpError extends MetnosError {
  private readonly [httpMarker] = true;
  readonly status: number;
  readonly bodySnippet: string;
  readonly providerName: string;
  readonly hint: string;
  readonly retryAfterMs: number | undefined;
  readonly url: string | undefined;

  constructor(settings: {
    status: number;
    bodySnippet: string;
    providerName: string;
    hint: string;
    retryAfterMs?: number;
    url?: string;
    cause?: unknown;
  }) {
    const detail = settings.bodySnippet ? `: ${settings.bodySnippet}` : '';
    super({
      code: 'provider_http',
      message: `${settings.providerName} answered HTTP ${settings.status}${detail} (${settings.hint})`,
      cause: settings.cause,
    });
    this.name = 'ProviderHttpError';
    this.status = settings.status;
    this.bodySnippet = settings.bodySnippet;
    this.providerName = settings.providerName;
    this.hint = settings.hint;
    this.retryAfterMs = settings.retryAfterMs;
    this.url = settings.url;
  }

  static override isInstance(error: unknown): error is ProviderHttpError {
    return marked(error, httpMarker);
  }
}

const unreachableMarker = Symbol.for('metnos.error.ProviderUnreachableError');

/**
 * The provider's server could not be reached at all: connection refused,
 * reset, DNS failure, or the connection dropped before an answer.
 *
 * @example
 * catch (error) { if (ProviderUnreachableError.isInstance(error)) console.error(error.hint); } // "is Ollama running? `ollama serve`"
 */
export class ProviderUnreachableError extends MetnosError {
  private readonly [unreachableMarker] = true;
  readonly providerName: string;
  readonly baseUrl: string;
  readonly hint: string;
  /** The network error code when there was one, e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`. */
  readonly networkCode: string | undefined;

  constructor(settings: {
    providerName: string;
    baseUrl: string;
    hint: string;
    networkCode?: string;
    cause?: unknown;
  }) {
    super({
      code: 'provider_unreachable',
      message: `${settings.providerName} is unreachable at ${settings.baseUrl}${settings.networkCode ? ` (${settings.networkCode})` : ''}: ${settings.hint}`,
      cause: settings.cause,
    });
    this.name = 'ProviderUnreachableError';
    this.providerName = settings.providerName;
    this.baseUrl = settings.baseUrl;
    this.hint = settings.hint;
    this.networkCode = settings.networkCode;
  }

  static override isInstance(error: unknown): error is ProviderUnreachableError {
    return marked(error, unreachableMarker);
  }
}

const timeoutMarker = Symbol.for('metnos.error.ProviderTimeoutError');

/**
 * The request ran past its `timeoutMs` and was torn down.
 *
 * @example
 * catch (error) { if (ProviderTimeoutError.isInstance(error)) console.error(`no answer in ${error.timeoutMs} ms`); }
 */
export class ProviderTimeoutError extends MetnosError {
  private readonly [timeoutMarker] = true;
  readonly providerName: string;
  readonly timeoutMs: number;

  constructor(settings: { providerName: string; timeoutMs: number; cause?: unknown }) {
    super({
      code: 'provider_timeout',
      message: `${settings.providerName} did not answer within ${settings.timeoutMs} ms`,
      cause: settings.cause,
    });
    this.name = 'ProviderTimeoutError';
    this.providerName = settings.providerName;
    this.timeoutMs = settings.timeoutMs;
  }

  static override isInstance(error: unknown): error is ProviderTimeoutError {
    return marked(error, timeoutMarker);
  }
}

const abortedMarker = Symbol.for('metnos.error.ProviderAbortedError');

/**
 * The caller's signal aborted the request (the turn was cancelled). Never
 * retried.
 *
 * @example
 * controller.abort();
 * await expect(model.generate({ ...request, signal: controller.signal })).rejects.toSatisfy(ProviderAbortedError.isInstance);
 */
export class ProviderAbortedError extends MetnosError {
  private readonly [abortedMarker] = true;
  readonly providerName: string;

  constructor(settings: { providerName: string; cause?: unknown }) {
    super({
      code: 'provider_aborted',
      message: `the request to ${settings.providerName} was aborted`,
      cause: settings.cause,
    });
    this.name = 'ProviderAbortedError';
    this.providerName = settings.providerName;
  }

  static override isInstance(error: unknown): error is ProviderAbortedError {
    return marked(error, abortedMarker);
  }
}

const responseMarker = Symbol.for('metnos.error.ProviderResponseError');

/**
 * The provider answered 2xx with a body that does not have the vendor's
 * shape (a proxy's HTML page, a truncated JSON, an incompatible server).
 *
 * @example
 * catch (error) { if (ProviderResponseError.isInstance(error)) console.error(error.message); }
 */
export class ProviderResponseError extends MetnosError {
  private readonly [responseMarker] = true;
  readonly providerName: string;

  constructor(settings: { providerName: string; message: string; cause?: unknown }) {
    super({
      code: 'provider_response',
      message: `${settings.providerName}: ${settings.message}`,
      cause: settings.cause,
    });
    this.name = 'ProviderResponseError';
    this.providerName = settings.providerName;
  }

  static override isInstance(error: unknown): error is ProviderResponseError {
    return marked(error, responseMarker);
  }
}
