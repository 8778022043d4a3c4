import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_JSON_DEPTH, MetnosError } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import { createApprovalStore } from './approval-store.ts';
import { inventory } from './arguments.ts';
import { callHash } from './call-hash.ts';
import { createGuard } from './guard.ts';
import { EXECUTORS, proposedCall } from './test/index.ts';
import { createVaglio } from './vaglio.ts';

const context = { home: '/home/ada', workspace: '/home/ada/metnos' };

/** `{ "next": … "notes.md" }`, `levels` objects deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: unknown = 'notes.md';
  for (let level = 0; level < levels; level++) value = { next: value };
  return value as Record<string, unknown>;
}

describe('arguments nested deeper than MAX_JSON_DEPTH', () => {
  it('are blocked by the guard with a reason that names the limit; exactly the limit is read', () => {
    const guard = createGuard();
    expect(guard.check(proposedCall({ args: nested(100_000) }), context)).toEqual({
      ok: false,
      rule: 'unreadable arguments',
      reason: `the arguments nest deeper than ${MAX_JSON_DEPTH} levels`,
    });
    expect(guard.check(proposedCall({ args: nested(MAX_JSON_DEPTH) }), context)).toEqual({ ok: true });
    expect(inventory(nested(MAX_JSON_DEPTH + 1)).truncated).toBe(true);
  });

  it('give a blocked verdict and a log line from the whole vaglio, never a RangeError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-vaglio-nesting-'));
    const vaglio = createVaglio({ log: { dir }, clock: () => new Date('2026-05-02T10:00:00Z') });
    const call = proposedCall({ executor: EXECUTORS.fs_read, args: { path: nested(100_000) } });
    expect(await vaglio.evaluate(call, context)).toMatchObject({ approved: false, blocked_by: 'guard' });
    const line = JSON.parse(await readFile(join(dir, '2026-05.jsonl'), 'utf8'));
    expect(line).toMatchObject({ arg_keys: ['path'], approved: false, blocked_by: 'guard' });
  });

  it('have no call hash (a typed error) and never match an approval', async () => {
    const deep = proposedCall({ args: nested(100_000) });
    let thrown: unknown;
    try {
      callHash(deep);
    } catch (error) {
      thrown = error;
    }
    expect(MetnosError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'arguments_too_deep' });
    const store = createApprovalStore({});
    const pending = await store.request(proposedCall());
    expect(await store.approve(pending.id, deep)).toMatchObject({ ok: false, reason: 'different_call' });
    expect(await store.check(pending.id, deep)).toMatchObject({ ok: false, reason: 'different_call' });
  });
});
