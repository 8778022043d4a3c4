import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { birth } from '../src/birth.ts';
import { trustKeyIn } from './fixtures.ts';

describe('birth', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'metnos-sandbox-birth-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('runs an executor through the shared runner', async () => {
    const { dir, key } = await writeSignedExecutor({ root, name: 'echo' });
    await trustKeyIn(root, key);
    const harness = birth(dir);
    const result = await harness.invoke({ hello: 'world' });
    expect(result).toMatchObject({ ok: true, content: { echo: { hello: 'world' } } });
  });
});
