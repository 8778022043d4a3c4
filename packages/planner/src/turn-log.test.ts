import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTurnLog, type TurnLogEntry } from './turn-log.ts';

const entry = (turnId: string): TurnLogEntry => ({
  turn_id: turnId,
  ts_start: Date.parse('2026-05-02T10:00:00Z') / 1000,
  ts_end: Date.parse('2026-05-02T10:00:01Z') / 1000,
  user_query: 'read diary.md',
  mode: 'local',
  candidates: ['fs_read'],
  steps: [],
  final_message: 'done',
  final_kind: 'answer',
  tokens: { input: 1, output: 1 },
  cost_usd: undefined,
});

describe('the turn log', () => {
  it('starts a turn on a fresh line when the file ends in a partial one, and reads past the broken line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'metnos-turn-log-'));
    const log = createTurnLog({ dir });
    await log.append(entry('t1'));
    const file = join(dir, '2026-05-02.jsonl');
    await writeFile(file, '{"turn_id":"t2","ts_st', { flag: 'a' });
    await log.append(entry('t3'));
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[2]!)).toMatchObject({ turn_id: 't3' });
    expect((await log.read('2026-05-02')).map((turn) => turn.turn_id)).toEqual(['t1', 't3']);
    expect(await log.read('2026-05-03')).toEqual([]);
  });
});
