import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.ts';
import {
  type ApprovalDb,
  type ApprovalRecord,
  createApprovalStore,
  createFileApprovalDb,
} from './approval-store.ts';
import { callHash } from './call-hash.ts';
import { ApprovalStoreError } from './errors.ts';
import { createManualClock, EXECUTORS, proposedCall } from './test/index.ts';

const temp = useTempDirs('metnos-approvals-mutation-');
const send = proposedCall({
  executor: EXECUTORS.telegram_send,
  args: { chat: 'me', text: 'hi' },
  turnId: 't',
  stepIndex: 1,
});
const failures = {
  unknown: { ok: false, reason: 'unknown', message: 'no approval with this id' },
  expired: {
    ok: false,
    reason: 'expired',
    message: 'the approval has expired; the call must be proposed and confirmed again',
  },
  already_used: {
    ok: false,
    reason: 'already_used',
    message: 'the approval was already used; each approval works once',
  },
  denied: { ok: false, reason: 'denied', message: 'the approval was refused' },
  different_executor: {
    ok: false,
    reason: 'different_executor',
    message: 'the approval was given for another executor or version',
  },
  different_call: {
    ok: false,
    reason: 'different_call',
    message: 'the approval was given for a different call (arguments, turn or step changed)',
  },
  not_approved: { ok: false, reason: 'not_approved', message: 'the call is still waiting for approval' },
};

function memoryDb(initial: ApprovalRecord[] = []) {
  const saves: ApprovalRecord[][] = [];
  let loads = 0;
  const db: ApprovalDb = {
    async load() {
      loads++;
      return initial.map((record) => ({ ...record }));
    },
    async save(records) {
      saves.push(records);
    },
  };
  return { db, saves, loads: () => loads };
}

function setup(extra: Parameters<typeof createApprovalStore>[0] = {}) {
  const clock = createManualClock('2026-05-02T10:00:00Z');
  let next = 0;
  const memory = memoryDb();
  const store = createApprovalStore({ clock, ids: () => `a${++next}`, db: memory.db, ...extra });
  return { clock, store, memory };
}

describe('approval store decisions', () => {
  it('expires after 15 minutes by default: usable until just before, refused at the instant', async () => {
    const { clock, store } = setup();
    const pending = await store.request(send);
    expect(pending).toEqual({ id: 'a1', callHash: callHash(send), expiresAt: '2026-05-02T10:15:00.000Z' });
    clock.advance(15 * 60_000 - 1);
    expect(await store.approve('a1', send)).toEqual({ ok: true, ...pending });
    clock.advance(1);
    expect(await store.check('a1', send)).toEqual(failures.expired);
  });

  it('records the call identity, never its arguments, with its times and state', async () => {
    const { store } = setup({ ttlMs: 1000 });
    await store.request(send);
    expect(await store.get('a1')).toEqual({
      id: 'a1',
      callHash: callHash(send),
      executor: 'telegram_send',
      version: '1.0.0',
      createdAt: '2026-05-02T10:00:00.000Z',
      expiresAt: '2026-05-02T10:00:01.000Z',
      state: 'pending',
    });
    const copy = await store.get('a1');
    copy!.state = 'approved';
    expect((await store.get('a1'))?.state).toBe('pending');
    expect(await store.get('nope')).toBeUndefined();
  });

  it('reuses only a live pending approval of the same call', async () => {
    const { clock, store } = setup({ ttlMs: 1000 });
    expect((await store.request(send)).id).toBe('a1');
    expect((await store.request(structuredClone(send))).id).toBe('a1');
    expect((await store.request({ ...send, stepIndex: 2 })).id).toBe('a2');
    await store.approve('a1', send);
    expect((await store.request(send)).id).toBe('a3');
    clock.advance(1000);
    expect((await store.request(send)).id).toBe('a4');
  });

  it('answers each refusal with its reason and message, in order of precedence', async () => {
    const { clock, store } = setup();
    expect(await store.approve('ghost', send)).toEqual(failures.unknown);
    expect(await store.check('ghost', send)).toEqual(failures.unknown);
    expect(await store.deny('ghost')).toEqual(failures.unknown);

    await store.request(send);
    expect(await store.check('a1', send)).toEqual(failures.not_approved);
    expect(await store.approve('a1', { ...send, executor: { ...send.executor, name: 'other' } })).toEqual(
      failures.different_executor,
    );
    expect(await store.approve('a1', { ...send, executor: { ...send.executor, version: '2.0.0' } })).toEqual(
      failures.different_executor,
    );
    expect(await store.approve('a1', { ...send, args: { chat: 'me', text: 'bye' } })).toEqual(
      failures.different_call,
    );
    expect(await store.approve('a1', send)).toMatchObject({ ok: true, id: 'a1' });
    expect(await store.approve('a1', send)).toEqual(failures.already_used);
    expect(await store.check('a1', { ...send, turnId: 'other' })).toEqual(failures.different_call);
    expect(await store.check('a1', send)).toMatchObject({ ok: true, id: 'a1' });
    expect(await store.check('a1', send)).toEqual(failures.already_used);
    expect(await store.approve('a1', send)).toEqual(failures.already_used);
    expect(await store.deny('a1')).toEqual(failures.already_used);
    clock.advance(16 * 60_000);
    expect(await store.check('a1', send)).toEqual(failures.already_used);
  });

  it('refuses a denied approval for good, even before it would expire', async () => {
    const { store } = setup();
    const pending = await store.request(send);
    expect(await store.deny('a1')).toEqual({ ok: true, ...pending });
    expect(await store.approve('a1', send)).toEqual(failures.denied);
    expect(await store.check('a1', send)).toEqual(failures.denied);
    expect((await store.get('a1'))?.state).toBe('denied');
  });

  it('can deny an approved call before it runs', async () => {
    const { store } = setup();
    await store.request(send);
    await store.approve('a1', send);
    expect(await store.deny('a1')).toMatchObject({ ok: true });
    expect(await store.check('a1', send)).toEqual(failures.denied);
  });

  it('checks expiry before identity', async () => {
    const { clock, store } = setup({ ttlMs: 1000 });
    await store.request(send);
    clock.advance(1000);
    expect(await store.approve('a1', { ...send, executor: { ...send.executor, name: 'other' } })).toEqual(
      failures.expired,
    );
  });

  it('keeps finished approvals for a day after they expire, then forgets them', async () => {
    const { clock, store } = setup({ ttlMs: 1000 });
    await store.request(send);
    clock.advance(1000 + 24 * 60 * 60_000);
    await store.request({ ...send, stepIndex: 9 });
    expect(await store.check('a1', send)).toEqual(failures.expired);
    clock.advance(1);
    await store.request({ ...send, stepIndex: 10 });
    expect(await store.check('a1', send)).toEqual(failures.unknown);
  });

  it('takes its own retention', async () => {
    const { clock, store } = setup({ ttlMs: 1000, retainMs: 0 });
    await store.request(send);
    clock.advance(1001);
    await store.request({ ...send, stepIndex: 2 });
    expect(await store.get('a1')).toBeUndefined();
  });

  it('loads once, saves a snapshot after every change and none after a refusal', async () => {
    const initial: ApprovalRecord = {
      id: 'old',
      callHash: callHash(send),
      executor: 'telegram_send',
      version: '1.0.0',
      createdAt: '2026-05-02T09:59:00.000Z',
      expiresAt: '2026-05-02T10:14:00.000Z',
      state: 'pending',
    };
    const memory = memoryDb([initial]);
    const clock = createManualClock('2026-05-02T10:00:00Z');
    const store = createApprovalStore({ clock, ids: () => 'new', db: memory.db });
    expect(await store.request(send)).toEqual({
      id: 'old',
      callHash: initial.callHash,
      expiresAt: initial.expiresAt,
    });
    expect(memory.saves).toHaveLength(0);
    await store.approve('old', send);
    await store.approve('old', send);
    await store.check('old', send);
    await store.check('ghost', send);
    await store.deny('ghost');
    expect(memory.loads()).toBe(1);
    expect(memory.saves.map((records) => records.map((record) => record.state))).toEqual([
      ['approved'],
      ['used'],
    ]);
    memory.saves[0]![0]!.state = 'denied';
    expect((await store.get('old'))?.state).toBe('used');
  });

  it('goes on saving after a failed save', async () => {
    let fail = true;
    const saved: string[] = [];
    const store = createApprovalStore({
      ids: () => 'x',
      db: {
        load: async () => [],
        save: async (records) => {
          if (fail) {
            fail = false;
            throw new Error('disk full');
          }
          saved.push(records.map((record) => record.state).join());
        },
      },
    });
    await expect(store.request(send)).rejects.toThrow('disk full');
    expect(await store.approve('x', send)).toMatchObject({ ok: true });
    expect(saved).toEqual(['approved']);
  });

  it('keeps nothing on disk without a path or a db', async () => {
    const store = createApprovalStore({ ids: () => 'm' });
    expect((await store.request(send)).id).toBe('m');
    expect(await store.approve('m', send)).toMatchObject({ ok: true });
  });
});

describe('the JSON file store', () => {
  it('reads a missing file as empty and writes the records, mode 0600, in a created folder', async () => {
    const dir = await temp.make();
    const path = join(dir, 'deep', 'approvals.json');
    const db = createFileApprovalDb(path);
    expect(await db.load()).toEqual([]);
    const record: ApprovalRecord = {
      id: 'a',
      callHash: 'h',
      executor: 'e',
      version: '1',
      createdAt: 'c',
      expiresAt: 'x',
      state: 'used',
    };
    await db.save([record]);
    expect(await readFile(path, 'utf8')).toBe(
      `${JSON.stringify({ version: 1, approvals: [record] }, null, 2)}\n`,
    );
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await db.load()).toEqual([record]);
    expect(await createApprovalStore({ path }).get('a')).toEqual(record);
  });

  it('refuses files that are not JSON, not a store, or not readable, with typed errors naming the path', async () => {
    const dir = await temp.make();
    const cases: Array<[string, string | undefined, string]> = [
      ['broken.json', '{', 'is not JSON; move it away to start an empty approval store'],
      ['other.json', '{"version":2,"approvals":[]}', 'is not a Metnos approval store'],
      ['bad-state.json', '{"version":1,"approvals":[{"id":"a"}]}', 'is not a Metnos approval store'],
      ['folder.json', undefined, 'cannot read the approval store'],
    ];
    for (const [name, content, message] of cases) {
      const path = join(dir, name);
      if (content === undefined) await mkdir(path);
      else await writeFile(path, content);
      const error = await createFileApprovalDb(path)
        .load()
        .catch((caught: unknown) => caught);
      expect(ApprovalStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ path });
      expect((error as Error).message).toContain(message);
    }
  });

  it('reports a write it cannot make as a typed error', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, 'file'), 'x');
    const path = join(dir, 'file', 'approvals.json');
    const error = await createFileApprovalDb(path)
      .save([])
      .catch((caught: unknown) => caught);
    expect(ApprovalStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ path, message: `cannot write the approval store ${path}` });
  });
});
