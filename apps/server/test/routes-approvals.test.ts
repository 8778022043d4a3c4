import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { callHash, createApprovalStore, type ProposedCall } from '@metnos/vaglio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPendingCalls } from '../src/routes/approvals.ts';
import { expectRefusal, scratch, serveApi } from './routes-helpers.ts';

let api: Awaited<ReturnType<typeof serveApi>>;
let approvals: ReturnType<typeof createApprovalStore>;
let storeFile: string;
let now = new Date('2026-05-01T10:00:00Z');
const decisions: Array<{ approvalId: string; approved: boolean }> = [];
const pending = createPendingCalls();

const mailer = {
  name: 'mail_send',
  version: '1.2.0',
  capabilities: ['net:http'],
  sideEffects: true,
  idempotent: false,
};
const call = (to: string, step = 1): ProposedCall => ({
  executor: mailer,
  args: { to, subject: 'hello' },
  request: `mail ${to}`,
  stepIndex: step,
  turnId: `turn-${to}`,
});

async function waiting(to: string, step = 1) {
  const proposed = call(to, step);
  const opened = await approvals.request(proposed);
  pending.add({ approvalId: opened.id, call: proposed });
  return { id: opened.id, hash: opened.callHash, call: proposed };
}

beforeAll(async () => {
  storeFile = join(await scratch('routes-approvals'), 'approvals.json');
  approvals = createApprovalStore({ path: storeFile, clock: () => now, ttlMs: 15 * 60_000 });
  api = await serveApi({
    approvals: {
      approvals,
      pending,
      clock: () => now,
      onDecision: ({ approvalId, approved }) => decisions.push({ approvalId, approved }),
    },
  });
});

afterAll(async () => {
  await api?.server.close();
});

const decide = (id: string, body: unknown, raw?: string) =>
  api.call(`/api/approvals/${id}`, {
    method: 'POST',
    ...(raw !== undefined ? { body: raw } : { json: body }),
  });

describe('the approval routes', () => {
  it('answer nothing without the bearer token, and decide nothing', async () => {
    const ada = await waiting('ada@example.org');
    await expectRefusal(await api.call('/api/approvals', {}, 'nope'), 401, 'unauthorized');
    await expectRefusal(
      await api.call(
        `/api/approvals/${ada.id}`,
        { method: 'POST', json: { decision: 'approve', callHash: ada.hash } },
        'z'.repeat(43),
      ),
      401,
    );
    expect((await approvals.get(ada.id))?.state).toBe('pending');
  });

  it('list the pending confirmations with the exact call and its hash', async () => {
    const bob = await waiting('bob@example.org', 2);
    const response = await api.call('/api/approvals');
    expect(response.status).toBe(200);
    const { approvals: listed } = (await response.json()) as { approvals: Array<Record<string, unknown>> };
    expect(listed.find((entry) => entry.id === bob.id)).toEqual({
      id: bob.id,
      tool: 'mail_send',
      version: '1.2.0',
      args: { to: 'bob@example.org', subject: 'hello' },
      step: 2,
      turnId: 'turn-bob@example.org',
      sideEffects: true,
      idempotent: false,
      callHash: callHash(bob.call),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 15 * 60_000).toISOString(),
    });
  });

  it('approve only with the hash of the call shown: another hash is 409 and nothing is approved', async () => {
    const carl = await waiting('carl@example.org');
    const other = callHash(call('mallory@example.org'));
    const refused = await expectRefusal(
      await decide(carl.id, { decision: 'approve', callHash: other }),
      409,
      'hash_mismatch',
    );
    expect(refused.message).toMatch(/hash/);
    expect((await approvals.get(carl.id))?.state).toBe('pending');
    expect(decisions).toEqual([]);
    // the call itself changed since it was shown: the store's hash no longer matches it
    pending.add({ approvalId: carl.id, call: call('mallory@example.org') });
    await expectRefusal(
      await decide(carl.id, { decision: 'approve', callHash: carl.hash }),
      409,
      'hash_mismatch',
    );
    expect((await approvals.get(carl.id))?.state).toBe('pending');
    pending.add({ approvalId: carl.id, call: carl.call });

    const approved = await decide(carl.id, { decision: 'approve', callHash: carl.hash });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toEqual({ id: carl.id, decision: 'approve', callHash: carl.hash });
    expect(decisions).toEqual([{ approvalId: carl.id, approved: true }]);
    expect(await approvals.check(carl.id, carl.call)).toMatchObject({ ok: true });
    // persisted to the store's file, and no longer listed
    expect(await readFile(storeFile, 'utf8')).toContain(carl.id);
    const listed = (await (await api.call('/api/approvals')).json()) as { approvals: Array<{ id: string }> };
    expect(listed.approvals.map((entry) => entry.id)).not.toContain(carl.id);
    await expectRefusal(
      await decide(carl.id, { decision: 'approve', callHash: carl.hash }),
      409,
      'already_used',
    );
  });

  it('deny bound to the hash too; a denied or expired approval cannot be approved', async () => {
    const dora = await waiting('dora@example.org');
    await expectRefusal(
      await decide(dora.id, { decision: 'deny', callHash: callHash(call('x@example.org')) }),
      409,
      'hash_mismatch',
    );
    expect((await approvals.get(dora.id))?.state).toBe('pending');
    expect((await decide(dora.id, { decision: 'deny', callHash: dora.hash })).status).toBe(200);
    expect((await approvals.get(dora.id))?.state).toBe('denied');
    await expectRefusal(await decide(dora.id, { decision: 'approve', callHash: dora.hash }), 409, 'denied');

    const eve = await waiting('eve@example.org');
    now = new Date(now.getTime() + 16 * 60_000);
    const listed = (await (await api.call('/api/approvals')).json()) as { approvals: Array<{ id: string }> };
    expect(listed.approvals.map((entry) => entry.id)).not.toContain(eve.id);
    await expectRefusal(await decide(eve.id, { decision: 'approve', callHash: eve.hash }), 409, 'expired');
    expect((await approvals.get(eve.id))?.state).toBe('pending');
  });

  it('refuse unknown ids and hostile bodies before deciding anything', async () => {
    const fay = await waiting('fay@example.org');
    await expectRefusal(await decide('no-such-approval', { decision: 'approve', callHash: fay.hash }), 404);
    for (const id of ['..%2F..%2Fx', 'a'.repeat(200), '__proto__%3Ax%20y'])
      await expectRefusal(await decide(id, { decision: 'approve', callHash: fay.hash }), 400, 'invalid');
    const bodies = [
      '',
      'null',
      '{"decision":"approve"}',
      JSON.stringify({ decision: 'maybe', callHash: fay.hash }),
      JSON.stringify({ decision: 'approve', callHash: fay.hash.toUpperCase() }),
      JSON.stringify({ decision: 'approve', callHash: fay.hash, approved: true }),
      `{"decision":"approve","callHash":"${fay.hash}","__proto__":{"state":"approved"}}`,
      `{"decision":"approve","callHash":"${fay.hash}","x":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
    ];
    for (const body of bodies) await expectRefusal(await decide(fay.id, undefined, body), 400, 'invalid');
    await expectRefusal(
      await decide(
        fay.id,
        undefined,
        JSON.stringify({ decision: 'approve', callHash: fay.hash, pad: 'x'.repeat(20_000) }),
      ),
      413,
      'too_large',
    );
    expect((await approvals.get(fay.id))?.state).toBe('pending');
  });
});
