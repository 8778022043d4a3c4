import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.ts';
import { createApprovalStore } from './approval-store.ts';
import { callHash } from './call-hash.ts';
import { ApprovalStoreError } from './errors.ts';
import { createManualClock, EXECUTORS, proposedCall } from './test/index.ts';

const temp = useTempDirs('metnos-approvals-');
const send = proposedCall({
  executor: EXECUTORS.telegram_send,
  args: { chat: 'me', text: 'meeting moved to 3pm' },
  turnId: 'turn-1',
  stepIndex: 2,
});

function setup(ttlMs = 15 * 60_000) {
  const clock = createManualClock('2026-04-27T10:00:00Z');
  let next = 0;
  const store = createApprovalStore({ clock, ttlMs, ids: () => `approval-${++next}` });
  return { clock, store };
}

describe('approval store', () => {
  it('opens a pending approval bound to the call hash, expiring after the ttl', async () => {
    const { store } = setup();
    expect(await store.request(send)).toEqual({
      id: 'approval-1',
      callHash: callHash(send),
      expiresAt: '2026-04-27T10:15:00.000Z',
    });
  });

  it('approves the exact call once, and lets the planner run it once', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    expect(await store.check(pending.id, send)).toMatchObject({ ok: false, reason: 'not_approved' });
    expect(await store.approve(pending.id, structuredClone(send))).toEqual({ ok: true, ...pending });
    expect(await store.check(pending.id, send)).toEqual({ ok: true, ...pending });
    expect(await store.check(pending.id, send)).toMatchObject({ ok: false, reason: 'already_used' });
    expect(await store.approve(pending.id, send)).toMatchObject({ ok: false, reason: 'already_used' });
  });

  it('refuses a second approval of the same pending call', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    const [first, second] = await Promise.all([
      store.approve(pending.id, send),
      store.approve(pending.id, send),
    ]);
    expect([first.ok, second.ok]).toEqual([true, false]);
    expect(second).toMatchObject({ reason: 'already_used' });
  });

  it('refuses a stale approval', async () => {
    const { store, clock } = setup();
    const pending = await store.request(send);
    clock.advance(15 * 60_000);
    expect(await store.approve(pending.id, send)).toEqual({
      ok: false,
      reason: 'expired',
      message: 'the approval has expired; the call must be proposed and confirmed again',
    });
  });

  it('refuses to run an approval that expired before the planner resumed', async () => {
    const { store, clock } = setup();
    const pending = await store.request(send);
    await store.approve(pending.id, send);
    clock.advance(20 * 60_000);
    expect(await store.check(pending.id, send)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('refuses a call whose arguments changed in any way', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    const changed = [
      { ...send, args: { chat: 'me', text: 'meeting moved to 4pm' } },
      { ...send, args: { chat: 'boss', text: 'meeting moved to 3pm' } },
      { ...send, args: { chat: 'me', text: 'meeting moved to 3pm', silent: true } },
      { ...send, stepIndex: 3 },
      { ...send, turnId: 'turn-2' },
    ];
    for (const call of changed)
      expect(await store.approve(pending.id, call)).toMatchObject({ ok: false, reason: 'different_call' });
    expect(await store.approve(pending.id, send)).toMatchObject({ ok: true });
    expect(await store.check(pending.id, changed[0]!)).toMatchObject({ ok: false, reason: 'different_call' });
  });

  it('refuses another executor or another version', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    const otherVersion = { ...send, executor: { ...send.executor, version: '2.0.0' } };
    const otherExecutor = { ...send, executor: { ...send.executor, name: 'email_send' } };
    expect(await store.approve(pending.id, otherVersion)).toMatchObject({
      ok: false,
      reason: 'different_executor',
    });
    expect(await store.approve(pending.id, otherExecutor)).toMatchObject({
      ok: false,
      reason: 'different_executor',
    });
  });

  it('does not depend on key order: the hash is over canonical JSON', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    const reordered = { ...send, args: { text: 'meeting moved to 3pm', chat: 'me' } };
    expect(await store.approve(pending.id, reordered)).toMatchObject({ ok: true });
  });

  it('refuses unknown ids and denied approvals', async () => {
    const { store } = setup();
    expect(await store.approve('nope', send)).toMatchObject({ ok: false, reason: 'unknown' });
    const pending = await store.request(send);
    expect(await store.deny(pending.id)).toMatchObject({ ok: true });
    expect(await store.approve(pending.id, send)).toMatchObject({ ok: false, reason: 'denied' });
    expect(await store.check(pending.id, send)).toMatchObject({ ok: false, reason: 'denied' });
  });

  it('reuses the live pending approval when the same call is proposed again', async () => {
    const { store, clock } = setup();
    const first = await store.request(send);
    expect(await store.request(structuredClone(send))).toEqual(first);
    clock.advance(16 * 60_000);
    expect((await store.request(send)).id).toBe('approval-2');
  });

  it('persists to a JSON file, atomically, without the arguments, and survives a restart', async () => {
    const dir = await temp.make();
    const path = join(dir, 'state', 'approvals.json');
    const clock = createManualClock('2026-04-27T10:00:00Z');
    const secret = { ...send, args: { chat: 'me', text: 'the code is 7H3-S3CR3T' } };
    const before = createApprovalStore({ path, clock });
    const pending = await before.request(secret);
    await before.approve(pending.id, secret);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('7H3-S3CR3T');
    expect(JSON.parse(text)).toMatchObject({
      version: 1,
      approvals: [{ id: pending.id, state: 'approved', executor: 'telegram_send' }],
    });

    const after = createApprovalStore({ path, clock });
    expect(await after.check(pending.id, secret)).toMatchObject({ ok: true });
    const again = createApprovalStore({ path, clock });
    expect(await again.check(pending.id, secret)).toMatchObject({ ok: false, reason: 'already_used' });
  });

  it('reports a corrupt store file as a typed error', async () => {
    const dir = await temp.make();
    const path = join(dir, 'approvals.json');
    await writeFile(path, '{"version": 1, "approvals": "oops"}');
    const store = createApprovalStore({ path });
    const error = await store.request(send).catch((caught: unknown) => caught);
    expect(ApprovalStoreError.isInstance(error)).toBe(true);
    expect((error as ApprovalStoreError).path).toBe(path);
  });

  it('accepts any persistence through db', async () => {
    const saved: unknown[] = [];
    const store = createApprovalStore({
      db: { load: async () => [], save: async (records) => void saved.push(records) },
    });
    await store.request(send);
    expect(saved).toHaveLength(1);
  });
});
