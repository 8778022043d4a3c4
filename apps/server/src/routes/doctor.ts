import type { Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { readQuery, refuse } from './common.ts';

/** `GET /api/doctor` takes no parameter: above all no `repair`, a GET changes nothing. */
const noQuery = z.object({}).strict();

/** The route {@link registerDoctorRoutes} mounts, for the OpenAPI document. */
export const doctorRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/doctor',
    summary: 'the JSON of `metnos doctor --json` (never with repair); `skipped` names the checks not given',
    query: noQuery,
    refusals: [400],
  },
];

/**
 * What {@link registerDoctorRoutes} runs: the checks of `metnos doctor`, as
 * functions that return findings and print nothing. The sandbox's host
 * report comes from `@metnos/sandbox` by default; the integrity and store
 * checks live in the CLI (`integrityFindings`, `storeFindings`), which the
 * server cannot import, so whoever starts the server passes them in. A check
 * not given is listed under `skipped`.
 */
export interface DoctorRouteDeps {
  /** The host report (`doctor()` of `@metnos/sandbox` by default). */
  sandbox?: () => object | Promise<object>;
  /** The integrity findings: helper digest, audit tree, refused profiles. */
  integrity?: () => unknown[] | Promise<unknown[]>;
  /** The store findings; never with repair: a GET changes nothing. */
  stores?: () => unknown[] | Promise<unknown[]>;
}

/**
 * `GET /api/doctor`: the JSON of `metnos doctor --json` (the sandbox report,
 * `integrity`, `stores`), with `skipped` naming the checks this server was
 * not given. Requests that arrive while a run is under way share it.
 *
 * @example
 * registerDoctorRoutes(app, { integrity: () => integrityFindings(place), stores: () => storeFindings(data) });
 */
export function registerDoctorRoutes(app: Hono, deps: DoctorRouteDeps = {}): void {
  let running: Promise<Record<string, unknown>> | undefined;
  const run = async (): Promise<Record<string, unknown>> => {
    const sandbox = deps.sandbox ?? (await import('@metnos/sandbox')).doctor;
    const skipped: string[] = [];
    const report: Record<string, unknown> = { ...(await sandbox()) };
    if (deps.integrity) report.integrity = await deps.integrity();
    else skipped.push('integrity');
    if (deps.stores) report.stores = await deps.stores();
    else skipped.push('stores');
    return { ...report, skipped };
  };
  app.get('/api/doctor', async (c) => {
    const query = readQuery(c, noQuery);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    running ??= run().finally(() => {
      running = undefined;
    });
    return c.json(await running);
  });
}
