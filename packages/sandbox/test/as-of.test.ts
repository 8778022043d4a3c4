import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readPublicKey, verifyExecutor } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { birth } from '../src/birth.ts';
import { createSandboxRunner } from '../src/index.ts';
import { createLab, type Lab } from './fixtures.ts';

// The turn's pinned instant crosses the sandbox: the seed time_now, verified with the release key
// and run in the full sandbox, answers "now" with the pinned instant, however late the call runs.
const REPO = join(import.meta.dirname, '..', '..', '..');
const TIME_NOW = join(REPO, 'executors', 'time_now');
const AS_OF = '2026-04-25T08:14:33.881Z';

describe('a sandboxed call pinned to asOf', () => {
  let lab: Lab;
  let seed: ReturnType<typeof birth>;
  beforeAll(async () => {
    lab = await createLab('metnos-sandbox-as-of-');
    seed = birth(TIME_NOW, { trustedKeys: [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'))] });
  });
  afterAll(() => rm(lab.root, { recursive: true, force: true }));

  it('time_now without `at` answers exactly asOf, the same a second later', async () => {
    const first = await seed.invoke({}, { asOf: AS_OF });
    expect(first).toMatchObject({
      ok: true,
      content: { utc: AS_OF, epoch_ms: Date.parse(AS_OF), timezone: 'UTC' },
      isolation: { tier: 'full' },
    });
    await sleep(1100);
    const second = await seed.invoke({}, { asOf: AS_OF });
    expect(second.ok && second.content).toEqual(first.ok && first.content);
  });

  it('time_now without asOf answers the real time', async () => {
    const before = Date.now();
    const result = await seed.invoke({});
    expect(result).toMatchObject({ ok: true, isolation: { tier: 'full' } });
    const epoch = (result as { content: { epoch_ms: number } }).content.epoch_ms;
    expect(epoch).toBeGreaterThanOrEqual(before);
    expect(epoch).toBeLessThanOrEqual(Date.now());
  });

  it('refuses an asOf that is not an instant as InvalidInput before setting anything up', async () => {
    const executor = await verifyExecutor(TIME_NOW, {
      trustedKeys: [await readPublicKey(join(REPO, 'keys', 'metnos-release.pub'))],
    });
    const runner = createSandboxRunner({ audit: false, home: join(lab.root, 'home') });
    const report = await runner.run({
      executor,
      args: {},
      context: {
        traceId: randomUUID(),
        workspace: join(lab.root, 'workspace'),
        caller: { kind: 'test' },
        asOf: '2026-04-25 08:14',
      },
    });
    expect(report).toMatchObject({ exit: 'policy', result: { ok: false, error: { class: 'InvalidInput' } } });
  });
});
