import type { Caller } from './context.ts';

/**
 * The reserved name executors reach host services at: `POST
 * http://metnos.host/<service>` through their egress proxy. The name never
 * goes to DNS and never leaves the host; the proxy answers it itself.
 *
 * @example
 * await fetch(`http://${HOST_SERVICES_NAME}/model`, { method: 'POST', body: JSON.stringify({ prompt, max_tokens: 64 }) });
 */
export const HOST_SERVICES_NAME = 'metnos.host';

/** The manifest capability that asks for a host service: `host:<service>` (`host:model`). */
export const HOST_SERVICE_CAPABILITY_PREFIX = 'host:';

/** A service name as capabilities and paths spell it. */
export const HOST_SERVICE_NAME = /^[a-z][a-z_]{0,31}$/;

/** One request an executor made to a host service, with who made it. */
export interface HostServiceCall {
  /** The service asked (`model`). */
  service: string;
  /** The request body, parsed as JSON and checked for size and depth. */
  body: unknown;
  /** The executor that asked, as verified for this call. */
  executor: { name: string; version: string };
  traceId: string;
  turnId?: string;
  caller: Caller;
  /** Aborted when the call ends (its process exited or timed out). */
  signal: AbortSignal;
}

/** A host service's answer: a JSON value, or a typed refusal the executor receives as data. */
export type HostServiceAnswer =
  | { ok: true; value: unknown }
  | { ok: false; error: { class: string; message: string } };

/**
 * A host-side handler for one service. It runs in the Metnos process with
 * whatever it was built with (a model, the scheduler); the executor only sends
 * JSON and reads JSON back. A handler that throws is answered as a generic
 * `ServiceFailed`, with nothing of the error passed on.
 *
 * @example
 * const echo: HostService = ({ body }) => ({ ok: true, value: { echoed: body } });
 */
export type HostService = (call: HostServiceCall) => Promise<HostServiceAnswer> | HostServiceAnswer;

/** The services a host provides for one call, by name. */
export type HostServices = Readonly<Record<string, HostService>>;

/**
 * The host services an executor's manifest asks for (`host:<service>` capabilities).
 *
 * @example
 * declaredHostServices(['host:model', 'fs:read']); // ['model']
 */
export function declaredHostServices(capabilities: readonly string[]): string[] {
  return capabilities
    .filter((capability) => capability.startsWith(HOST_SERVICE_CAPABILITY_PREFIX))
    .map((capability) => capability.slice(HOST_SERVICE_CAPABILITY_PREFIX.length))
    .filter((name) => HOST_SERVICE_NAME.test(name));
}

/**
 * The services a call is offered: those its manifest declares AND the host
 * provides for this call. Anything else stays out of reach, however the
 * executor asks.
 *
 * @example
 * offeredHostServices(['host:model'], { model, reminders }); // { model }
 */
export function offeredHostServices(
  capabilities: readonly string[],
  provided: HostServices | undefined,
): Record<string, HostService> {
  const offered: Record<string, HostService> = {};
  for (const name of declaredHostServices(capabilities)) {
    const service = provided && Object.hasOwn(provided, name) ? provided[name] : undefined;
    if (typeof service === 'function') offered[name] = service;
  }
  return offered;
}
