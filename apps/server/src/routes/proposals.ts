import { type Synt, SyntError, specificationSchema } from '@metnos/synt';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { idParam, readBody, readParam, readQuery, refuse } from './common.ts';

/** What {@link registerProposalRoutes} drives: the synt's listing and the person's decisions. */
export interface ProposalRouteDeps {
  synt: Pick<Synt, 'list' | 'show' | 'approve' | 'reject'>;
  /** Who the decisions are recorded as made by. Default `console`. */
  actor?: string;
}

const listQuery = z.object({ all: z.enum(['true', 'false']).optional() }).strict();

const decisionBody = z
  .object({
    decision: z.enum(['approve', 'reject']),
    /** The review digest shown: the artefacts' approval holds only with it. */
    digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, 'the review digest, as shown')
      .optional(),
    /** An amended specification (approving the spec, or after a fix). */
    spec: specificationSchema.optional(),
  })
  .strict();

/** The routes {@link registerProposalRoutes} mounts, for the OpenAPI document. */
export const proposalRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/proposals',
    summary: 'the synt’s proposal cards: open, under way and waiting (`all=true`: decided ones too)',
    query: listQuery,
    refusals: [400],
  },
  {
    method: 'get',
    path: '/api/proposals/:id',
    summary:
      'one card (by its id or its run’s): the run, each stage’s outcome, the model lineage, the spec, the review as diffs',
    params: { id: idParam },
    refusals: [400, 404],
  },
  {
    method: 'post',
    path: '/api/proposals/:id',
    summary: 'approves (starts, or goes on where it waits) or rejects a card',
    description:
      'Approving artefacts needs the `digest` the card’s review shows; without it, or with another, the run keeps waiting and nothing is signed. `spec` sends an amended specification. Generation runs the model and the birth tests before answering.',
    params: { id: idParam },
    body: decisionBody,
    refusals: [400, 404, 409, 413],
  },
];

/** A SyntError as the API's refusal: 404 for an unknown id, 409 for a state that forbids it. */
function refusal(c: Context, error: unknown) {
  if (!SyntError.isInstance(error)) throw error;
  return refuse(c, error.code === 'not_found' ? 404 : 409, error.code, error.message);
}

/**
 * The synt's proposals, as `metnos synt` shows and decides them:
 *
 * - `GET /api/proposals?all=` the cards (id, kind, state, title, note, what the run waits for)
 * - `GET /api/proposals/:id` a card with its run: stages, model lineage, spec, review (unified diffs, digest)
 * - `POST /api/proposals/:id` `{ decision: approve | reject, digest?, spec? }`
 *
 * @example
 * registerProposalRoutes(app, { synt });
 */
export function registerProposalRoutes(app: Hono, deps: ProposalRouteDeps): void {
  const actor = deps.actor ?? 'console';
  app.get('/api/proposals', (c) => {
    const query = readQuery(c, listQuery);
    if (!query.ok) return refuse(c, query.status, query.error, query.message);
    const all = query.value.all === 'true';
    return c.json({ proposals: deps.synt.list(all ? {} : { states: ['open', 'running', 'waiting'] }) });
  });

  app.get('/api/proposals/:id', (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not a proposal id');
    try {
      return c.json(deps.synt.show(id));
    } catch (error) {
      return refusal(c, error);
    }
  });

  app.post('/api/proposals/:id', async (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not a proposal id');
    const body = await readBody(c, decisionBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    try {
      if (body.value.decision === 'reject') return c.json(deps.synt.reject(id, actor));
      const { digest, spec } = body.value;
      return c.json(
        await deps.synt.approve(id, { by: actor, ...(digest ? { digest } : {}), ...(spec ? { spec } : {}) }),
      );
    } catch (error) {
      return refusal(c, error);
    }
  });
}
