import { type Catalog, LifecycleError, VerificationError } from '@metnos/executor-sdk';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { createSerial, limitParam, readBody, readParam, readQuery, refuse } from './common.ts';

/** What {@link registerExecutorRoutes} drives: the catalog's own listing and lifecycle functions. */
export interface ExecutorRouteDeps {
  catalog: Pick<Catalog, 'list' | 'get' | 'quarantined' | 'archive' | 'rehabilitate' | 'promote'>;
}

/** An executor's name, as `metnos executor` takes it. */
const nameParam = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'not an executor name');
/** A semantic version. */
const version = z
  .string()
  .max(64)
  .regex(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/, 'not a version such as 1.2.0');

const archiveBody = z.object({ version: version.optional() }).strict();
const versionBody = z.object({ version }).strict();
const listQuery = z.object({ limit: limitParam.optional() }).strict();

type Action = 'archive' | 'rehabilitate' | 'promote';

/** The routes {@link registerExecutorRoutes} mounts, for the OpenAPI document. */
export const executorRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/executors',
    summary: 'every version in the catalog: state, default, quarantine reason, side effects',
    query: listQuery,
    refusals: [400],
  },
  ...(
    [
      ['archive', archiveBody, 'archives one version, or every version without `version`'],
      ['rehabilitate', versionBody, 'brings an archived or quarantined version back, verifying it again'],
      ['promote', versionBody, 'makes a version the default (writes `CURRENT`)'],
    ] as const
  ).map(
    ([action, body, summary]): RouteDoc => ({
      method: 'post',
      path: `/api/executors/:name/${action}`,
      summary,
      params: { name: nameParam },
      body,
      refusals: [400, 404, 409, 413],
    }),
  ),
];

/**
 * The executor routes: the catalog as `metnos executor list` shows it, and
 * the three lifecycle moves `metnos executor archive | rehabilitate | promote`
 * make, through the same catalog functions. Nothing here touches trusted
 * keys or signatures; a rehabilitation verifies the version again and fails
 * when it does not verify.
 *
 * - `GET /api/executors?limit=` every version: name, version, state, default, the
 *   quarantine reason, side effects, idempotent
 * - `POST /api/executors/:name/archive` `{ version? }` (default: every version)
 * - `POST /api/executors/:name/rehabilitate` `{ version }`
 * - `POST /api/executors/:name/promote` `{ version }`
 *
 * A name with no version in the catalog answers 404; a move the lifecycle
 * refuses (or a version that does not verify) 409 with the reason.
 *
 * @example
 * registerExecutorRoutes(app, { catalog });
 */
export function registerExecutorRoutes(app: Hono, deps: ExecutorRouteDeps): void {
  const { catalog } = deps;
  // one lifecycle change at a time: the catalog and its state files take them in turn
  const serial = createSerial();

  app.get('/api/executors', (c) => {
    const query = readQuery(c, listQuery);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const quarantined = catalog.quarantined();
    const rows = catalog.list();
    return c.json({
      total: rows.length,
      executors: rows.slice(0, query.value.limit ?? 500).map((row) => {
        const loaded =
          row.state === 'quarantined' || row.state === 'archived'
            ? undefined
            : catalog.get(row.name, row.version);
        const refusal = quarantined.find((entry) => entry.name === row.name && entry.version === row.version);
        return {
          name: row.name,
          version: row.version,
          state: row.state,
          current: row.current,
          summary: row.summary ?? null,
          reason: row.reason ?? null,
          quarantine: refusal ? { reason: refusal.reason, artefact: refusal.artefact ?? null } : null,
          sideEffects: loaded ? loaded.manifest.contract.side_effects : null,
          idempotent: loaded ? loaded.manifest.contract.idempotent : null,
        };
      }),
    });
  });

  const move = (action: Action) => async (c: Context) => {
    const name = readParam(c, 'name', nameParam);
    if (name === undefined) return refuse(c, 400, 'invalid', 'not an executor name');
    const body = await readBody(c, action === 'archive' ? archiveBody : versionBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    const wanted = body.value.version;
    const known = catalog
      .list()
      .some((row) => row.name === name && (wanted === undefined || row.version === wanted));
    if (!known)
      return refuse(c, 404, 'not_found', `no executor ${name}${wanted ? `@${wanted}` : ''} in the catalog`);
    try {
      return await serial(async () => {
        switch (action) {
          case 'archive':
            return c.json({ action, archived: await catalog.archive(name, wanted) });
          case 'rehabilitate': {
            const executor = await catalog.rehabilitate(name, wanted!);
            return c.json({ action, name: executor.name, version: executor.version, state: 'active' });
          }
          case 'promote':
            await catalog.promote(name, wanted!);
            return c.json({ action, name, version: wanted!, current: true });
        }
      });
    } catch (error) {
      if (LifecycleError.isInstance(error)) return refuse(c, 409, 'refused', error.message);
      if (VerificationError.isInstance(error))
        return refuse(
          c,
          409,
          'refused',
          `${name}@${wanted} does not verify (${error.reason}): ${error.message}`,
        );
      throw error;
    }
  };

  app.post('/api/executors/:name/archive', move('archive'));
  app.post('/api/executors/:name/rehabilitate', move('rehabilitate'));
  app.post('/api/executors/:name/promote', move('promote'));
}
