import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutorRunner, readPublicKey } from '@metnos/executor-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLaptopAuditLog } from '../src/audit.ts';
import { createExecutorCache } from '../src/cache.ts';
import { createPermissionRunner } from '../src/confinement.ts';
import { createGuard } from '../src/guard.ts';
import { createLedger, type Ledger } from '../src/ledger/ledger.ts';
import {
  argsDigest,
  type LaptopFrame,
  type Operation,
  signCallToken,
  UNDO_EXECUTOR,
} from '../src/protocol/index.ts';
import { createLaptopRuntime } from '../src/runtime.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');
const DEVICE = 'dev_0123456789abcdef';
const server = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const link = { confirmBefore: async () => {} };

let root: string;
let grant: string;
let ledger: Ledger;
let proposed: Operation[];

/** A runner that answers with the operations the test proposes: the runtime's checks are under test. */
const proposing: ExecutorRunner = {
  tier: 'none',
  run: async () => ({
    result: { ok: true, content: { operations: proposed }, isolation: { tier: 'none', layers: ['test'] } },
    durationMs: 1,
    stdout: '',
    exit: 'ok',
  }),
};

async function runtime(runner: ExecutorRunner = proposing) {
  const trustedKeys = [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'))];
  const cache = createExecutorCache({ dir: join(root, 'state', 'cache'), trustedKeys });
  await cp(join(REPO, 'executors', 'photo_organize'), join(cache.dir, 'photo_organize'), {
    recursive: true,
    filter: (source) => !source.includes('/tests'),
  });
  const digest = (await cache.verify('photo_organize')).digests.code;
  const laptop = createLaptopRuntime({
    device: DEVICE,
    ledger,
    cache,
    runner,
    audit: createLaptopAuditLog({ dir: join(root, 'state', 'audit') }),
    trashDir: join(root, 'state', 'trash'),
    guard: () =>
      createGuard({
        grant,
        home: join(root, 'home'),
        configDir: join(root, 'home', '.config', 'metnos'),
        stateDir: join(root, 'state'),
      }),
  });
  const call = (args: unknown, overrides: { device?: string; token?: string } = {}) => {
    const key = randomBytes(12).toString('base64url');
    const trace = `tr_${key}`;
    const token =
      overrides.token ??
      signCallToken(
        {
          device: overrides.device ?? DEVICE,
          executor: 'photo_organize',
          digest,
          trace,
          key,
          args: argsDigest(args),
        },
        server.privateKey,
      );
    return {
      frame: { type: 'call' as const, key, trace, token, executor: 'photo_organize', version: '1.0.0', args },
    };
  };
  const undo = (target: string) => {
    const key = randomBytes(12).toString('base64url');
    const token = signCallToken(
      {
        device: DEVICE,
        executor: UNDO_EXECUTOR,
        digest: target,
        trace: 'tr_undo',
        key,
        args: argsDigest({ target }),
      },
      server.privateKey,
    );
    return laptop.undo({ type: 'undo', key, trace: 'tr_undo', token, target }, server.publicKey, link);
  };
  return { laptop, call, undo };
}

const resultOf = (frame: LaptopFrame) => (frame.type === 'result' ? frame.result : frame);

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'metnos-laptop-runtime-'));
  grant = join(root, 'home', 'Pictures');
  await mkdir(grant, { recursive: true });
  await mkdir(join(root, 'home', '.ssh'), { recursive: true });
  ledger = createLedger({ path: join(root, 'state', 'ledger.sqlite') });
  proposed = [];
});

afterEach(async () => {
  ledger.close();
  await rm(root, { recursive: true, force: true });
});

describe('the laptop runtime', () => {
  it('refuses a replayed token, a token for another device and one for other arguments', async () => {
    const { laptop, call } = await runtime();
    const first = call({ folder: '.' });
    expect(resultOf(await laptop.call(first.frame, server.publicKey, link))).toMatchObject({ ok: true });
    expect(await laptop.call(first.frame, server.publicKey, link)).toMatchObject({
      type: 'refused',
      code: 'replayed',
    });
    const other = call({ folder: '.' }, { device: 'dev_fedcba9876543210' });
    expect(await laptop.call(other.frame, server.publicKey, link)).toMatchObject({
      type: 'refused',
      code: 'wrong_device',
    });
    const swapped = call({ folder: '.' });
    expect(
      await laptop.call({ ...swapped.frame, args: { folder: 'elsewhere' } }, server.publicKey, link),
    ).toMatchObject({ type: 'refused', code: 'bad_token' });
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(await laptop.call(call({}).frame, stranger.publicKey, link)).toMatchObject({
      type: 'refused',
      code: 'bad_token',
    });
  });

  it('keeps replaced and deleted files in the trash area, and undo brings them back', async () => {
    await writeFile(join(grant, 'a.jpg'), 'new a');
    await writeFile(join(grant, 'b.jpg'), 'old b');
    await writeFile(join(grant, 'c.jpg'), 'c');
    proposed = [
      { op: 'move', from: 'a.jpg', to: 'b.jpg', replace: true },
      { op: 'delete', path: 'c.jpg' },
    ];
    const { laptop, call, undo } = await runtime();
    const { frame } = call({});
    const reply = await laptop.call(frame, server.publicKey, link);
    expect(reply).toMatchObject({ type: 'result', result: { ok: true, metadata: { applied: 2 } } });
    expect(reply.type === 'result' && reply.manifest?.before.map((entry) => entry.path)).toEqual([
      'a.jpg',
      'b.jpg',
      'c.jpg',
    ]);
    expect(await readFile(join(grant, 'b.jpg'), 'utf8')).toBe('new a');
    expect(resultOf(await undo(frame.key))).toMatchObject({ ok: true, metadata: { applied: 3 } });
    expect(await readFile(join(grant, 'a.jpg'), 'utf8')).toBe('new a');
    expect(await readFile(join(grant, 'b.jpg'), 'utf8')).toBe('old b');
    expect(await readFile(join(grant, 'c.jpg'), 'utf8')).toBe('c');
  });

  it('refuses to undo when a path the call freed is taken again, and changes nothing', async () => {
    await writeFile(join(grant, 'a.jpg'), 'a');
    proposed = [{ op: 'move', from: 'a.jpg', to: '2020/01/a.jpg' }];
    const { laptop, call, undo } = await runtime();
    const { frame } = call({});
    await laptop.call(frame, server.publicKey, link);
    await writeFile(join(grant, 'a.jpg'), 'a newer photo');
    expect(resultOf(await undo(frame.key))).toMatchObject({
      ok: false,
      error: {
        class: 'ChangedSince',
        message: expect.stringContaining('a.jpg is taken again since the call'),
      },
    });
    expect(await readFile(join(grant, '2020', '01', 'a.jpg'), 'utf8')).toBe('a');
  });

  it('checks every proposed operation before any is applied: no way out of the grant, no forbidden path, no link', async () => {
    await writeFile(join(grant, 'a.jpg'), 'a');
    await symlink(join(root, 'home', '.ssh'), join(grant, 'keys'));
    await writeFile(join(root, 'outside.jpg'), 'x');
    await symlink(join(root, 'outside.jpg'), join(grant, 'link.jpg'));
    const { laptop, call } = await runtime();
    for (const operations of [
      [{ op: 'move', from: 'a.jpg', to: 'keys/a.jpg' }],
      [{ op: 'move', from: 'link.jpg', to: 'b.jpg' }],
      [{ op: 'move', from: 'a.jpg', to: '.audit/a.jpg' }],
      [
        { op: 'move', from: 'a.jpg', to: 'b.jpg' },
        { op: 'delete', path: 'keys/authorized_keys' },
      ],
    ] as Operation[][]) {
      proposed = operations;
      expect(resultOf(await laptop.call(call({}).frame, server.publicKey, link))).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation', message: expect.stringMatching(/^nothing was changed/) },
      });
    }
    expect(await readFile(join(grant, 'a.jpg'), 'utf8')).toBe('a');
  });

  it('off Linux, runs the executor under Node permissions and says the tier is none', async () => {
    await writeFile(join(grant, 'a.jpg'), 'a');
    const { laptop, call } = await runtime(createPermissionRunner({ platform: 'darwin' }));
    const reply = resultOf(await laptop.call(call({}).frame, server.publicKey, link));
    expect(reply).toMatchObject({
      ok: true,
      isolation: {
        tier: 'none',
        layers: ['process', 'node-permission'],
        notes: [expect.stringContaining('no kernel isolation on darwin')],
      },
    });
  });
});
