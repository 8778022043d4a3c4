import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../test/scripted-model.ts';
import {
  createInMemoryRuntimeMemory,
  MemoryScopeError,
  type RuntimeMemoryAdapter,
  scopedMemory,
} from './memory.ts';
import { createSqliteRuntimeMemory } from './memory-sqlite.ts';
import { createAgentRuntime } from './runtime.ts';

const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));
async function sqliteFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-agent-memory-'));
  made.push(dir);
  return join(dir, 'agents.sqlite');
}

const adapters: Array<[string, () => Promise<RuntimeMemoryAdapter>]> = [
  ['in memory', async () => createInMemoryRuntimeMemory()],
  ['SQLite', async () => createSqliteRuntimeMemory({ path: await sqliteFile() })],
];

describe.each(adapters)('runtime memory (%s)', (_name, open) => {
  it('keeps agent:{id} and shared per run, global across runs', async () => {
    const memory = await open();
    await memory.set({ run: 'r1', scope: 'shared', key: 'plan' }, { steps: ['read', 'mail'] });
    await memory.set({ run: 'r1', scope: 'agent:router', key: 'notes' }, ['billing']);
    await memory.set({ run: 'r1', scope: 'global', key: 'owner' }, 'ada');
    expect(await memory.get({ run: 'r1', scope: 'shared', key: 'plan' })).toEqual({
      steps: ['read', 'mail'],
    });
    expect(await memory.get({ run: 'r2', scope: 'shared', key: 'plan' })).toBeUndefined();
    expect(await memory.get({ run: 'r2', scope: 'agent:router', key: 'notes' })).toBeUndefined();
    expect(await memory.get({ run: 'r2', scope: 'global', key: 'owner' })).toBe('ada');
    expect(await memory.list('r1', 'agent:router')).toEqual([{ key: 'notes', value: ['billing'] }]);
    await memory.delete({ run: 'r9', scope: 'global', key: 'owner' });
    expect(await memory.get({ run: 'r1', scope: 'global', key: 'owner' })).toBeUndefined();
  });

  it('refuses unknown scopes and values that are not JSON', async () => {
    const memory = await open();
    await expect(memory.set({ run: 'r', scope: 'secret' as never, key: 'k' }, 1)).rejects.toThrow(
      MemoryScopeError,
    );
    await expect(memory.set({ run: 'r', scope: 'shared', key: 'k' }, 10n)).rejects.toThrow(MemoryScopeError);
    await expect(memory.set({ run: 'r', scope: 'shared', key: '' }, 1)).rejects.toThrow(MemoryScopeError);
  });

  it("keeps an agent out of another agent's scratch", async () => {
    const view = scopedMemory(await open(), 'r', 'router');
    await view.set('agent:router', 'k', 1);
    await expect(view.get('agent:actor', 'k')).rejects.toSatisfy(MemoryScopeError.isInstance);
    expect(await view.get('agent:router', 'k')).toBe(1);
  });

  it("is where the runtime writes each agent's answer: shared, agent:{id}:answer", async () => {
    const memory = await open();
    const runtime = createAgentRuntime({
      agents: [
        {
          id: 'router',
          systemPrompt: '',
          provider: createScriptedModel([{ text: 'to the actor' }]),
          executors: [],
        },
        { id: 'actor', systemPrompt: '', provider: createScriptedModel([{ text: 'done' }]), executors: [] },
      ],
      memory,
    });
    await runtime.run({
      goal: 'x',
      runId: 'r-answers',
      plan: { entry: 'router', edges: [{ from: 'router', to: 'actor' }] },
    });
    expect(await memory.list('r-answers', 'shared')).toEqual([
      { key: 'agent:actor:answer', value: 'done' },
      { key: 'agent:router:answer', value: 'to the actor' },
    ]);
  });
});

describe('the SQLite memory', () => {
  it('keeps global entries and finished runs across a reopen', async () => {
    const path = await sqliteFile();
    const first = createSqliteRuntimeMemory({ path });
    await first.set({ run: 'r1', scope: 'global', key: 'owner' }, 'ada');
    await first.set({ run: 'r1', scope: 'shared', key: 'agent:actor:answer' }, 'done');
    first.close();
    const second = createSqliteRuntimeMemory({ path });
    expect(await second.get({ run: 'r2', scope: 'global', key: 'owner' })).toBe('ada');
    expect(await second.get({ run: 'r1', scope: 'shared', key: 'agent:actor:answer' })).toBe('done');
    second.close();
  });
});
