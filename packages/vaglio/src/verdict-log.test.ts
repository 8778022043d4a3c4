import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVerdictLog, type VerdictLogEntry } from './verdict-log.ts';

const entry = (turnId: string): VerdictLogEntry => ({
  ts: '2026-05-02T10:00:00.000Z',
  turn_id: turnId,
  step: 1,
  executor: 'fs_read',
  executor_version: '1.0.0',
  arg_keys: ['path'],
  approved: true,
  blocked_by: null,
  score: 0.9,
  judge_kind: 'rules',
  reason: 'score 0.90',
});

describe('the verdict log', () => {
  it('starts a verdict on a fresh line when the file ends in a partial one, and reads past the broken line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-verdict-log-'));
    const log = createVerdictLog({ dir });
    await log.append(entry('t1'));
    const file = log.fileFor('2026-05-02T10:00:00.000Z');
    await writeFile(file, '{"ts":"2026-05-02T10:00:0', { flag: 'a' });
    await log.append(entry('t3'));
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[2]!)).toMatchObject({ turn_id: 't3' });
    expect((await log.read('2026-05')).map((verdict) => verdict.turn_id)).toEqual(['t1', 't3']);
    expect(await log.read('2026-06')).toEqual([]);
  });
});
