import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatModel } from '../llm/types.ts';
import { createFillerCache } from './filler-cache.ts';
import { resolveFillers } from './fillers.ts';
import { parsePlan } from './plan.ts';

const dir = mkdtempSync(join(tmpdir(), 'metnos-fillers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const parsed = parsePlan(
  JSON.stringify({
    steps: [{ tool: 'mail_move', args: { destination: '${FILLER:trash_folder}' } }],
    fillers: { trash_folder: { prompt: 'What is the trash folder?', default: 'Trash', tier: 'fast' } },
    final_message: 'done',
  }),
);
if (!parsed.ok) throw new Error(parsed.errors.join('; '));
const plan = parsed.plan;

/** A fast tier that answers `answer` and counts how often it was asked. */
function countingModel(answer: string): ChatModel & { calls: number } {
  const model = {
    id: 'counting',
    provider: 'scripted',
    calls: 0,
    async generate() {
      model.calls += 1;
      return { text: answer, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
  return model as unknown as ChatModel & { calls: number };
}

describe('filler answers kept in SQLite', () => {
  it('asks the model once; a later process over the same file fills the slot from the record', async () => {
    const path = join(dir, 'fillers.sqlite');
    const first = countingModel('Cestino');
    const cacheA = createFillerCache({ path });
    const values = await resolveFillers(plan, {
      request: 'move the spam to trash',
      models: { fast: first },
      cache: cacheA,
    });
    cacheA.close();
    expect(values).toEqual({ trash_folder: 'Cestino' });
    expect(first.calls).toBe(1);

    const later = countingModel('something else');
    const cacheB = createFillerCache({ path });
    const again = await resolveFillers(plan, {
      request: 'move the spam to trash',
      models: { fast: later },
      cache: cacheB,
    });
    cacheB.close();
    expect(again).toEqual({ trash_folder: 'Cestino' });
    expect(later.calls).toBe(0);
  });

  it('asks again for other slots, and reads a row edited into no filler answer as absent', async () => {
    const path = join(dir, 'edited.sqlite');
    const cache = createFillerCache({ path });
    await resolveFillers(plan, { request: 'r', models: { fast: countingModel('Trash') }, cache });
    const other = countingModel('Bin');
    expect(
      await resolveFillers(plan, {
        request: 'r',
        slots: { account: 'work' },
        models: { fast: other },
        cache,
      }),
    ).toEqual({ trash_folder: 'Bin' });
    expect(other.calls).toBe(1);
    cache.close();

    const db = new Database(path);
    db.prepare('UPDATE filler_answers SET value = ?').run('line one\nline two');
    db.close();
    const reopened = createFillerCache({ path });
    const asked = countingModel('Trash');
    await resolveFillers(plan, { request: 'r', models: { fast: asked }, cache: reopened });
    reopened.close();
    expect(asked.calls).toBe(1);
  });
});
