import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { beforeAll, describe, expect, it } from 'vitest';
import { engineOver, readPlan } from '../__fixtures__/engine.ts';
import { approveAll, createWorld, scripted } from '../__fixtures__/world.ts';
import { canonicalJson } from './plan.ts';
import { createReplayStore, REPLAY_FORMAT, type ReplayBundle, ReplayError, replayTurn } from './replay.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});

const AS_OF = new Date('2026-11-22T07:45:00.000Z');

async function recordedTurn(request = 'read diary.md and tell me the last 2 lines') {
  const store = createReplayStore({ dir: join(world.root, `replay-${Math.random().toString(36).slice(2)}`) });
  const { engine, stores } = engineOver(
    world,
    { wise: scripted([{ text: readPlan('diary.md', 2) }]) },
    { replay: store, clock: () => AS_OF },
  );
  const result = await engine.runTurn(request);
  stores.close();
  return { store, result, bundle: store.load(result.turnId) };
}

const replaySettings = () => ({
  executors: world.catalog.executors(),
  invoker: world.invoker,
  reviewer: approveAll,
  workspace: world.workspace,
  home: world.root,
});

describe('the replay bundle of a turn', () => {
  it('pins asOf, records every model call with its lineage, the executors, the step order and result hashes', async () => {
    const { result, bundle } = await recordedTurn();
    expect(result).toMatchObject({ finalKind: 'answer', asOf: AS_OF.toISOString() });
    expect(bundle).toMatchObject({
      format: REPLAY_FORMAT,
      turnId: result.turnId,
      asOf: AS_OF.toISOString(),
      runtime: { now: AS_OF.toISOString() },
      layer: 'engine',
      finalMessage: result.finalMessage,
    });
    const proposal = bundle.modelCalls.find((call) => call.tier === 'wise');
    expect(proposal).toMatchObject({
      provider: 'test',
      model: 'scripted',
      parameters: { temperature: 0, seed: 0 },
      response: { text: readPlan('diary.md', 2) },
    });
    expect(proposal?.promptRevision).toMatch(/^[0-9a-f]{16}$/);
    expect(proposal?.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(bundle.executors.map((executor) => executor.name)).toEqual(['fs_read']);
    expect(bundle.executors[0]?.digests.code).toBeTruthy();
    expect(bundle.runs).toHaveLength(1);
    expect(bundle.runs[0]).toMatchObject({ order: [1], ended: { ok: true } });
    expect(bundle.runs[0]?.steps[0]?.resultHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a turn served from memory has a bundle too, with no model call', async () => {
    const store = createReplayStore({ dir: join(world.root, 'replay-memory') });
    const { engine, stores } = engineOver(
      world,
      { wise: scripted([{ text: readPlan('diary.md', 1) }]) },
      { replay: store },
    );
    await engine.runTurn('read diary.md and tell me the last 1 lines');
    const again = await engine.runTurn('read diary.md and tell me the last 1 lines');
    stores.close();
    expect(again.layer).toBe('fastpath');
    const bundle = store.load(again.turnId);
    expect(bundle).toMatchObject({ layer: 'fastpath', modelCalls: [] });
    const report = await replayTurn(bundle, replaySettings());
    expect(report.divergence).toBeUndefined();
    expect(report.matched).toBe(1);
  });
});

describe('replayTurn', () => {
  it('reproduces a recorded turn step by step', async () => {
    const { bundle } = await recordedTurn();
    const report = await replayTurn(bundle, replaySettings());
    expect(report.divergence).toBeUndefined();
    expect(report.matched).toBe(1);
  });

  it('names the first divergence of a tampered bundle: a recorded result', async () => {
    const { bundle } = await recordedTurn();
    const tampered = structuredClone(bundle) as ReplayBundle;
    const step = tampered.runs[0]!.steps[0]!;
    (step.result as { content: string }).content = 'one\ntwo';
    step.resultHash = createHash('sha256').update(canonicalJson(step.result)).digest('hex');
    const report = await replayTurn(tampered, replaySettings());
    expect(report.divergence).toMatchObject({
      at: 'result',
      run: 1,
      step: 1,
      tool: 'fs_read',
      expected: step.resultHash,
      message: 'run 1, step 1 (fs_read): the result differs from the record',
    });
  });

  it('names a recorded result edited without its hash', async () => {
    const { bundle } = await recordedTurn();
    const tampered = structuredClone(bundle) as ReplayBundle;
    (tampered.runs[0]!.steps[0]!.result as { content: string }).content = 'edited';
    expect((await replayTurn(tampered, replaySettings())).divergence).toMatchObject({
      at: 'result',
      step: 1,
      message:
        'run 1, step 1 (fs_read): the recorded result does not match the recorded hash (the bundle was edited)',
    });
  });

  it('names a plan that is not the one a recorded model answer gives', async () => {
    const { bundle } = await recordedTurn();
    const tampered = structuredClone(bundle) as ReplayBundle;
    const step = tampered.runs[0]!.plan.steps[0] as { args: Record<string, unknown> };
    step.args.tail = 4;
    expect((await replayTurn(tampered, replaySettings())).divergence).toMatchObject({ at: 'plan', run: 1 });
    tampered.runs[0]!.planHash = (await import('./plan.ts')).planHash(tampered.runs[0]!.plan);
    expect((await replayTurn(tampered, replaySettings())).divergence).toMatchObject({ at: 'model', run: 1 });
  });

  it('finds a divergence in the world: the file the turn read has changed', async () => {
    await writeFile(join(world.workspace, 'moving.md'), 'a\nb\nc\n');
    const store = createReplayStore({ dir: join(world.root, 'replay-moving') });
    const { engine, stores } = engineOver(
      world,
      { wise: scripted([{ text: readPlan('moving.md', 1) }]) },
      { replay: store },
    );
    const result = await engine.runTurn('read moving.md and tell me the last 1 lines');
    stores.close();
    const bundle = store.load(result.turnId);
    expect((await replayTurn(bundle, replaySettings())).divergence).toBeUndefined();
    await writeFile(join(world.workspace, 'moving.md'), 'a\nb\nd\n');
    expect((await replayTurn(bundle, replaySettings())).divergence).toMatchObject({ at: 'result', step: 1 });
  });

  it('reads a recorded plan with the grammar and the Validator before running anything', async () => {
    const { bundle } = await recordedTurn();
    const hostile = structuredClone(bundle) as ReplayBundle;
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let level = 0; level < 200; level++) deep = deep.next = {} as Record<string, unknown>;
    (hostile.runs[0]!.plan.steps[0] as { args: Record<string, unknown> }).args = {
      path: root,
      ['__proto__']: 1,
    };
    expect((await replayTurn(hostile, replaySettings())).divergence).toMatchObject({ at: 'plan', run: 1 });
    const unknownTool = structuredClone(bundle) as ReplayBundle;
    (unknownTool.runs[0]!.plan.steps[0] as { tool: string }).tool = 'shell_exec';
    expect((await replayTurn(unknownTool, replaySettings())).divergence?.message).toMatch(/not valid/);
  });

  it('refuses a bundle whose executor is not the one the turn ran', async () => {
    const { bundle } = await recordedTurn();
    const tampered = structuredClone(bundle) as ReplayBundle;
    tampered.executors[0]!.digests.code = 'blake3:0';
    expect((await replayTurn(tampered, replaySettings())).divergence).toMatchObject({
      at: 'executor',
      tool: 'fs_read',
    });
  });
});

describe('replay and side effects', () => {
  it('never runs a step with side effects again, even from a bundle stripped of its record', async () => {
    await writeSignedExecutor({
      root: world.executors,
      name: 'marker',
      key: world.key,
      contract: { idempotent: false, side_effects: true },
      sandboxToml: `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576`,
      code: `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { writeFileSync(join(ctx.workspace, 'marker.txt'), 'x'); return ok({ marked: true }); } });
`,
    });
    await world.catalog.load();
    const store = createReplayStore({ dir: join(world.root, 'replay-marker') });
    const { engine, stores } = engineOver(
      world,
      {
        wise: scripted([
          { text: JSON.stringify({ steps: [{ tool: 'marker', args: {} }], final_message: 'marked' }) },
        ]),
      },
      { replay: store },
    );
    const result = await engine.runTurn('leave a marker');
    stores.close();
    expect(result.finalMessage).toBe('marked');
    const marker = join(world.workspace, 'marker.txt');
    await rm(marker);
    const bundle = store.load(result.turnId);
    const report = await replayTurn(bundle, replaySettings());
    expect(report.divergence).toBeUndefined();
    expect(report.notRerun).toEqual([{ run: 1, step: 1, tool: 'marker' }]);
    const stripped = structuredClone(bundle) as ReplayBundle;
    stripped.runs[0]!.steps = [];
    expect((await replayTurn(stripped, replaySettings())).divergence).toMatchObject({ at: 'end' });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('the replay store', () => {
  it('keeps a bundle per turn, 0600, and refuses ids that are not plain names', async () => {
    const { store, result } = await recordedTurn();
    const dir = join(world.root, 'replay-ids');
    const own = createReplayStore({ dir });
    own.save(store.load(result.turnId));
    const { statSync } = await import('node:fs');
    expect(statSync(join(dir, `${result.turnId}.json`)).mode & 0o777).toBe(0o600);
    expect(() => own.load('../escape')).toThrow(ReplayError);
    expect(() => own.load('missing-turn')).toThrow(/no replay bundle/);
    await writeFile(join(dir, 'garbage.json'), '{"format":"other"}');
    expect(() => own.load('garbage')).toThrow(/is not a metnos.replay\/1 bundle/);
    expect(JSON.parse(await readFile(join(dir, `${result.turnId}.json`), 'utf8')).turnId).toBe(result.turnId);
  });
});
