import type { AutopathStore, FastpathStore } from '@metnos/autopath/stores';
import type { GapLog } from '@metnos/planner';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { cut, idParam, limitParam, readParam, readQuery, refuse } from './common.ts';

/** What {@link registerMemoryRoutes} reads and forgets through: the stores' own functions. */
export interface MemoryRouteDeps {
  fastpath: Pick<FastpathStore, 'list' | 'remove'>;
  autopath: Pick<AutopathStore, 'list' | 'clusters' | 'antiAutopaths' | 'recentObservations' | 'remove'>;
  /** The Terminator's gap log; without it `/api/memory/gaps` answers 404. */
  gaps?: Pick<GapLog, 'list'>;
}

/** A request as `metnos memory list` shows it: its first 60 characters. */
const REQUEST_SHOWN = 60;

const listQuery = z.object({ limit: limitParam.optional() }).strict();

/** The routes {@link registerMemoryRoutes} mounts, for the OpenAPI document. */
export const memoryRouteDocs: RouteDoc[] = [
  ...(
    [
      ['fastpaths', "L0's remembered plans, newest first (default 100)"],
      ['autopaths', "L1's clusters and learned plans: champions, challengers, retired (default 100)"],
      ['anti', 'the anti-autopaths in force (default 100)'],
      ['observations', 'the latest turns (default 50)'],
      ['gaps', 'what the Terminator could not do, most frequent first (default 100; 404 without a gap log)'],
    ] as const
  ).map(
    ([name, summary]): RouteDoc => ({
      method: 'get',
      path: `/api/memory/${name}`,
      summary,
      query: listQuery,
      refusals: name === 'gaps' ? [400, 404] : [400],
    }),
  ),
  ...(['fastpaths', 'autopaths'] as const).map(
    (name): RouteDoc => ({
      method: 'delete',
      path: `/api/memory/${name}/:id`,
      summary: `forgets one ${name === 'fastpaths' ? 'remembered plan' : 'autopath'} by id`,
      params: { id: idParam },
      refusals: [400, 404],
    }),
  ),
];

/**
 * The memory routes, answering with what `metnos memory list` shows and
 * never more: ids, counters, scores, tools and the first 60 characters of
 * the request, never a template, its pinned slot values, a plan, a vector,
 * an anti-autopath's failure message or a gap's detail (those may quote
 * arguments).
 *
 * - `GET /api/memory/fastpaths?limit=` L0's remembered plans, newest first
 * - `GET /api/memory/autopaths?limit=` L1's clusters and its learned plans (champions, challengers, retired)
 * - `GET /api/memory/anti?limit=` the anti-autopaths in force
 * - `GET /api/memory/observations?limit=` the latest turns (default 50)
 * - `GET /api/memory/gaps?limit=` what the Terminator could not do, most frequent first
 * - `DELETE /api/memory/fastpaths/:id`, `DELETE /api/memory/autopaths/:id` forget one by id (404 when unknown)
 *
 * `limit` is 1 to 500 (default 100 unless said otherwise).
 *
 * @example
 * registerMemoryRoutes(app, { fastpath, autopath, gaps });
 */
export function registerMemoryRoutes(app: Hono, deps: MemoryRouteDeps): void {
  const limitOf = (c: Context, fallback: number) => {
    const query = readQuery(c, listQuery);
    return query.ok ? { ok: true as const, limit: query.value.limit ?? fallback } : query;
  };

  app.get('/api/memory/fastpaths', (c) => {
    const query = limitOf(c, 100);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const all = deps.fastpath.list();
    return c.json({
      total: all.length,
      entries: all
        .slice(-query.limit)
        .reverse()
        .map((entry) => ({
          id: entry.id,
          uses: entry.uses,
          tools: entry.tools.map((tool) => ({ name: tool.name, version: tool.version })),
          request: cut(entry.request, REQUEST_SHOWN),
          createdAt: entry.createdAt,
          lastUsedAt: entry.lastUsedAt ?? null,
        })),
    });
  });

  app.get('/api/memory/autopaths', (c) => {
    const query = limitOf(c, 100);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    // as `metnos memory list`: candidates are not yet learned, and not shown
    const learned = deps.autopath.list().filter((entry) => entry.status !== 'candidate');
    const clusters = deps.autopath.clusters();
    return c.json({
      clusters: clusters.slice(0, query.limit).map((cluster) => ({
        id: cluster.id,
        members: cluster.members,
        embedderId: cluster.embedderId,
        createdAt: cluster.createdAt,
        champions: learned
          .filter((entry) => entry.clusterId === cluster.id && entry.status === 'champion')
          .map((entry) => entry.id),
      })),
      totalClusters: clusters.length,
      autopaths: learned.slice(0, query.limit).map((entry) => ({
        id: entry.id,
        clusterId: entry.clusterId,
        status: entry.status,
        uses: entry.uses,
        successes: entry.successes,
        failures: entry.failures,
        score: entry.score,
        tools: entry.tools.map((tool) => ({ name: tool.name, version: tool.version })),
      })),
      totalAutopaths: learned.length,
    });
  });

  app.get('/api/memory/anti', (c) => {
    const query = limitOf(c, 100);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const all = deps.autopath.antiAutopaths();
    return c.json({
      total: all.length,
      entries: all.slice(0, query.limit).map((row) => ({
        intentHash: row.intentHash,
        planHash: row.planHash,
        failures: row.failures,
        expiresAt: row.expiresAt,
      })),
    });
  });

  app.get('/api/memory/observations', (c) => {
    const query = limitOf(c, 50);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    return c.json({
      entries: deps.autopath.recentObservations(query.limit).map((row) => ({
        id: row.id,
        ts: row.ts,
        turnId: row.turnId,
        request: cut(row.request, REQUEST_SHOWN),
        layer: row.layer,
        latencyMs: Math.round(row.latencyMs),
        outcome: row.outcome,
        errorClass: row.errorClass,
        feedback: row.feedback,
        intentHash: row.intentHash,
        planHash: row.planHash,
      })),
    });
  });

  app.get('/api/memory/gaps', (c) => {
    const gaps = deps.gaps;
    if (!gaps) return refuse(c, 404, 'not_found', 'this server keeps no gap log');
    const query = limitOf(c, 100);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const all = gaps.list();
    return c.json({
      total: all.length,
      entries: all.slice(0, query.limit).map((gap) => ({
        cause: gap.cause,
        signature: gap.signature,
        example: cut(gap.example, REQUEST_SHOWN),
        count: gap.count,
        firstSeen: gap.firstSeen,
        lastSeen: gap.lastSeen,
      })),
    });
  });

  const forget = (store: 'fastpath' | 'autopath', what: string) => (c: Context) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', `not a ${what} id`);
    if (!deps[store].remove(id)) return refuse(c, 404, 'not_found', `no ${what} ${id}`);
    return c.json({ forgot: id });
  };

  app.delete('/api/memory/fastpaths/:id', forget('fastpath', 'remembered plan'));
  app.delete('/api/memory/autopaths/:id', forget('autopath', 'autopath'));
}
