import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import manifest from '../../package.json' with { type: 'json' };

/**
 * OpenTelemetry tracing of the engine, through `@opentelemetry/api` only:
 * without an SDK the app installed, every span is the API's no-op. Spans
 * carry ids, names, counts, error classes and hashes — never argument
 * values, the request, file contents, prompts or answers.
 */
const TRACER = '@metnos/planner';

/** The tracer, asked for at each use, so a provider registered (or removed) later is the one in force. */
export const tracer = () => trace.getTracer(TRACER, manifest.version);

/** The class of a thrown value: its `name`, never its message. */
export function errorClassOf(error: unknown): string {
  if (error instanceof Error) return error.name || 'Error';
  return typeof error;
}

/** Marks a span failed with an error class (and nothing else about the error). */
export function failSpan(span: Span, errorClass: string): void {
  span.setAttribute('error.type', errorClass);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorClass });
}

/**
 * Runs `work` inside a new active span (a child of the active one), ends the
 * span when it settles, and marks it failed with the error's class when it throws.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, errorClassOf(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span under the active one without making it active, and returns
 * it with a function that runs code inside it: for a step whose work is split
 * between a sequential part and a parallel one.
 */
export function openSpan(name: string, attributes: Attributes) {
  const span = tracer().startSpan(name, { attributes });
  const within = trace.setSpan(context.active(), span);
  return { span, run: <T>(work: () => Promise<T>): Promise<T> => context.with(within, work) };
}

/**
 * A layer's pass reason as a span may carry it: each `; `-separated part up to
 * its first `: `, since what follows may quote an executor's error message or a
 * value of the request ("the plan failed at fs_read (missing_input): no such
 * file: …" → "the plan failed at fs_read (missing_input)").
 */
export function passReasonForSpan(reason: string): string {
  return reason
    .split('; ')
    .map((part) => part.split(': ')[0]!.trim())
    .join('; ');
}
