import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEmbedder } from './__fixtures__/embedder.ts';
import { approveAll, createWorld, scripted } from './__fixtures__/world.ts';
import { createEngine } from './engine/engine.ts';
import type { Plan } from './engine/plan.ts';
import { findPlaceholders, PlanReferenceError, resolvePlaceholders } from './engine/references.ts';
import { createGapLog } from './engine/terminator.ts';
import { validatePlan } from './engine/validator.ts';
import { hardenArgs } from './hardening.ts';
import { hardenToolArgs } from './llm/tool-args.ts';
import { createPlanner } from './turn.ts';
import { createTurnLog } from './turn-log.ts';

/** `{ "a": { "a": … "leaf" } }`, `levels` objects deep, built without recursion. */
function nestedObjects(levels: number, leaf: unknown = 'leaf'): Record<string, unknown> {
  let value: unknown = leaf;
  for (let level = 0; level < levels; level++) value = { a: value };
  return value as Record<string, unknown>;
}

/** The same, as JSON text (what a model writes). */
function nestedText(levels: number): string {
  return `${'{"a":'.repeat(levels)}"leaf"${'}'.repeat(levels)}`;
}

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

function engineWith(model: ReturnType<typeof scripted>) {
  return createEngine({
    catalog: world.catalog,
    invoker: world.invoker,
    reviewer: approveAll,
    models: { fast: scripted([]), wise: model },
    embedder: testEmbedder(),
    fastpath: createFastpathStore({ path: join(world.root, `fastpath-${Math.random()}.sqlite`) }),
    autopath: createAutopathStore({ path: join(world.root, `autopath-${Math.random()}.sqlite`) }),
    gaps: createGapLog({ path: join(world.root, `gaps-${Math.random()}.sqlite`) }),
    workspace: world.workspace,
  });
}

describe('model plans nested too deeply (the engine)', () => {
  it('ends the turn with plan_unreadable naming the limit when a plan argument nests 2,000 levels', async () => {
    const deepPlan = `{"steps":[{"tool":"fs_write","args":{"path":"x.txt","content":${nestedText(2_000)}}}],"final_message":"done"}`;
    const model = scripted([{ text: deepPlan }, { text: deepPlan }]);
    const result = await engineWith(model).runTurn('write the deep thing to x.txt');
    expect(result).toMatchObject({
      layer: 'terminator',
      finalKind: 'terminated',
      termination: { cause: 'plan_unreadable' },
    });
    expect(result.termination?.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('the Validator reports a step whose arguments nest too deeply instead of walking them', () => {
    const plan: Plan = {
      version: '1',
      steps: [{ tool: 'fs_write', args: { path: 'x.txt', content: nestedObjects(5_000) } }],
      fillers: {},
      final_message: '',
    };
    expect(validatePlan(plan, world.catalog.executors())).toEqual([
      `step 1 (fs_write): arguments nest deeper than ${MAX_JSON_DEPTH} levels`,
    ]);
  });

  it('the reference resolver refuses a value nested too deeply with a PlanReferenceError', () => {
    const value = { content: nestedObjects(5_000, '${RUNTIME:now}') };
    let thrown: unknown;
    try {
      resolvePlaceholders(value, { observations: [], runtime: { now: 'noon' } });
    } catch (error) {
      thrown = error;
    }
    expect(PlanReferenceError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    expect(findPlaceholders(nestedObjects(100_000, '${RUNTIME:now}'))).toEqual([
      expect.objectContaining({ kind: 'runtime', name: 'now' }),
    ]);
  });
});

function loopWith(
  model: ReturnType<typeof scripted>,
  extra: Partial<Parameters<typeof createPlanner>[0]> = {},
) {
  return createPlanner({
    catalog: world.catalog,
    invoker: world.invoker,
    models: { fast: model },
    reviewer: approveAll,
    scratchpad: world.scratchpad,
    workspace: world.workspace,
    retry: { sleep: async () => {} },
    ...extra,
  });
}

describe('model tool calls nested too deeply (the loop)', () => {
  it('answers "tool unavailable", keeps the turn going and still writes the turn log line', async () => {
    const turns = join(world.root, `turns-${Math.random()}`);
    const model = scripted([
      { calls: [{ name: 'fs_read', args: { path: nestedObjects(10_000) } }] },
      { calls: [{ name: 'fs_read', args: `{"path":${nestedText(10_000)}}` }] },
      { text: 'I could not read it.' },
    ]);
    const result = await loopWith(model, { turnLog: createTurnLog({ dir: turns }) }).runTurn(
      'read the deep file',
    );
    expect(result.finalKind).toBe('answer');
    expect(result.steps.map((step) => [step.validation, step.result])).toEqual([
      ['rejected', 'tool unavailable'],
      ['rejected', 'tool unavailable'],
    ]);
    for (const step of result.steps) {
      expect(step.raw_args).toBe(`[arguments nested deeper than ${MAX_JSON_DEPTH} levels, not kept]`);
    }
    const [file] = await readdir(turns);
    const line = JSON.parse(await readFile(join(turns, file!), 'utf8'));
    expect(line.steps).toHaveLength(2);
  });

  it('refuses an online plan whose step arguments nest too deeply', async () => {
    const model = scripted([
      { text: `{"steps":[{"tool":"fs_read","args":{"path":${nestedText(10_000)}}}],"answer":"done"}` },
    ]);
    const result = await loopWith(model, { mode: 'online' }).runTurn('read the deep file');
    expect(result.finalKind).toBe('error');
    expect(result.finalMessage).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('hardens arguments at exactly the limit and refuses one level more, as text or as a value', () => {
    const atLimit = nestedObjects(MAX_JSON_DEPTH);
    for (const harden of [hardenArgs, hardenToolArgs]) {
      expect(harden(atLimit)).toMatchObject({ ok: true });
      expect(harden(JSON.stringify(atLimit))).toMatchObject({ ok: true });
      expect(harden(nestedObjects(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: false });
      expect(harden(nestedText(100_000))).toMatchObject({
        ok: false,
        reason: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
      });
    }
  });
});
