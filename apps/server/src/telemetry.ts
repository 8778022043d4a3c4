import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Settings of {@link startTelemetry}: `[telemetry]` in `metnos.toml`. */
export interface TelemetrySettings {
  /** Where spans are POSTed as OTLP/HTTP JSON, e.g. `http://127.0.0.1:4318/v1/traces`. */
  endpoint: string;
  /** The resource's `service.name` (default `metnos`). */
  serviceName?: string;
}

/** What {@link startTelemetry} returns. */
export interface Telemetry {
  /** Exports the spans still batched, then unregisters the provider and the context manager; idempotent. */
  shutdown(): Promise<void>;
}

/** Telemetry that cannot start: an endpoint that is not an http(s) URL, or a provider already in place. */
export class TelemetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TelemetryError';
  }
}

/** The endpoint as a URL, refused unless http(s) and without user or password in it. */
export function telemetryEndpoint(endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TelemetryError(`the OTLP endpoint "${endpoint}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TelemetryError(`the OTLP endpoint must be http:// or https://, not ${url.protocol}`);
  if (url.username || url.password)
    throw new TelemetryError('the OTLP endpoint must not carry a user or password');
  return url;
}

/**
 * Registers an OpenTelemetry SDK for this process, so the spans the engine
 * makes through `@opentelemetry/api` (`metnos.turn`, `metnos.layer <name>`,
 * `metnos.step <n>`, …) are recorded and sent: a tracer provider with a batch
 * span processor over the OTLP/HTTP JSON exporter, and an `AsyncLocalStorage`
 * context manager so spans nest across `await`s. Spans carry ids, names,
 * counts, error classes and hashes, never a request, arguments or answers.
 * Nothing calls this unless `[telemetry]` is configured: without it no
 * provider is registered and every span is the API's no-op.
 *
 * @example
 * const telemetry = startTelemetry({ endpoint: 'http://127.0.0.1:4318/v1/traces' });
 * // … on exit, after the last turn:
 * await telemetry.shutdown(); // flushes what is batched
 */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  const url = telemetryEndpoint(settings.endpoint);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName ?? 'metnos' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: url.href }))],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(contextManager)) {
    contextManager.disable();
    throw new TelemetryError('a context manager is already registered in this process');
  }
  if (!trace.setGlobalTracerProvider(provider)) {
    context.disable();
    throw new TelemetryError('a tracer provider is already registered in this process');
  }
  let stopping: Promise<void> | undefined;
  return {
    shutdown() {
      stopping ??= provider.shutdown().finally(() => {
        trace.disable();
        context.disable();
      });
      return stopping;
    },
  };
}
