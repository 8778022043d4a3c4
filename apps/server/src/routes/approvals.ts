import { type ApprovalStore, callHash, type ProposedCall } from '@metnos/vaglio';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { RouteDoc } from '../openapi.ts';
import { idParam, readBody, readParam, refuse } from './common.ts';

/** A reinforced confirmation waiting for the person: its approval id and the exact call. */
export interface PendingCall {
  approvalId: string;
  call: ProposedCall;
}

/**
 * The calls waiting for a reinforced confirmation. The vaglio's approval
 * store keeps only each call's hash, so whoever runs turns adds the call a
 * turn stopped at here (`add`), and the approval routes list and decide them.
 */
export interface PendingCalls {
  add(pending: PendingCall): void;
  get(approvalId: string): PendingCall | undefined;
  list(): PendingCall[];
  remove(approvalId: string): void;
}

/**
 * An in-memory {@link PendingCalls}, holding at most `max` calls (the oldest
 * go first; their approvals expire on their own in the store).
 *
 * @example
 * const pending = createPendingCalls();
 * if (result.pending) pending.add({ approvalId: result.pending.approvalId, call });
 */
export function createPendingCalls(options: { max?: number } = {}): PendingCalls {
  const max = options.max ?? 200;
  const calls = new Map<string, PendingCall>();
  return {
    add(pending) {
      calls.delete(pending.approvalId);
      calls.set(pending.approvalId, pending);
      while (calls.size > max) calls.delete(calls.keys().next().value!);
    },
    get: (approvalId) => calls.get(approvalId),
    list: () => [...calls.values()],
    remove(approvalId) {
      calls.delete(approvalId);
    },
  };
}

/** What {@link registerApprovalRoutes} needs. */
export interface ApprovalRouteDeps {
  /** The vaglio's approval store: the only place an approval is given or refused. */
  approvals: Pick<ApprovalStore, 'get' | 'approve' | 'deny'>;
  pending: PendingCalls;
  /** The approval store's clock, to leave expired approvals out of the listing (default: now). */
  clock?: () => Date;
  /**
   * Told after a decision was recorded, e.g. to resume the turn that waited;
   * an object it returns (`{ resumed }`) is added to the decision's answer.
   */
  onDecision?: (decision: { approvalId: string; approved: boolean; call: ProposedCall }) => unknown;
}

const decisionBody = z
  .object({
    decision: z.enum(['approve', 'deny']),
    callHash: z.string().regex(/^[0-9a-f]{64}$/, 'the SHA-256 (hex) of the call, as listed'),
  })
  .strict();

/** The routes {@link registerApprovalRoutes} mounts, for the OpenAPI document. */
export const approvalRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/approvals',
    summary: 'the calls waiting for a reinforced confirmation, each with its `callHash`',
  },
  {
    method: 'post',
    path: '/api/approvals/:id',
    summary: 'approves or denies one call, by the hash that was listed',
    description:
      'A hash that is not the one the approval holds is 409 `hash_mismatch` and nothing is decided; an approved call is run again and its answer comes back as `resumed` when the server re-runs turns.',
    params: { id: idParam },
    body: decisionBody,
    refusals: [400, 404, 409, 413],
  },
];

/**
 * The reinforced confirmations: what waits, and the person's decision,
 * bound to the exact call.
 *
 * - `GET /api/approvals` the pending ones (not yet decided, not expired), each with the
 *   exact call (tool, version, args, step, turn) and its hash
 * - `POST /api/approvals/:id` `{ decision: approve | deny, callHash }`: the hash must be
 *   the one listed and the one the store holds, else 409 and nothing is decided; an
 *   approval already decided or expired is 409 with the store's reason
 *
 * @example
 * registerApprovalRoutes(app, { approvals, pending: createPendingCalls() });
 */
export function registerApprovalRoutes(app: Hono, deps: ApprovalRouteDeps): void {
  app.get('/api/approvals', async (c) => {
    const now = (deps.clock ?? (() => new Date()))().getTime();
    const listed = [];
    for (const { approvalId, call } of deps.pending.list()) {
      const record = await deps.approvals.get(approvalId);
      if (record?.state !== 'pending' || Date.parse(record.expiresAt) <= now) continue;
      listed.push({
        id: approvalId,
        tool: call.executor.name,
        version: call.executor.version,
        args: call.args,
        step: call.stepIndex ?? null,
        turnId: call.turnId ?? null,
        sideEffects: call.executor.sideEffects,
        idempotent: call.executor.idempotent,
        callHash: record.callHash,
        createdAt: record.createdAt,
        expiresAt: record.expiresAt,
      });
    }
    return c.json({ approvals: listed });
  });

  app.post('/api/approvals/:id', async (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not an approval id');
    const body = await readBody(c, decisionBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    const pending = deps.pending.get(id);
    const record = await deps.approvals.get(id);
    if (!pending || !record) return refuse(c, 404, 'not_found', `no approval ${id} waits here`);
    // the decision is for the call the person saw: its hash, the store's, and the call's own must agree
    if (body.value.callHash !== record.callHash || callHash(pending.call) !== record.callHash)
      return refuse(
        c,
        409,
        'hash_mismatch',
        'the call hash is not the one this approval holds; list the approvals again and decide on what is shown',
      );
    const approved = body.value.decision === 'approve';
    const result = approved ? await deps.approvals.approve(id, pending.call) : await deps.approvals.deny(id);
    // a decided call stays known, so a second decision is told why it is refused (already_used, denied)
    if (!result.ok) return refuse(c, 409, result.reason, result.message);
    // what onDecision returns as an object (the resumed turn) goes back with the decision
    const told = await deps.onDecision?.({ approvalId: id, approved, call: pending.call });
    const extra = told !== null && typeof told === 'object' && !Array.isArray(told) ? told : {};
    return c.json({ ...extra, id, decision: body.value.decision, callHash: record.callHash });
  });
}
