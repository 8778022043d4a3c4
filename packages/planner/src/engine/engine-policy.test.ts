import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createVerifier, defineRulePack } from '@metnos/vaglio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineOver, readPlan } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';
import { createEngine, ENGINE_VARIANTS, engineVariant } from './engine.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

const plan = (data: unknown) => ({ text: JSON.stringify(data) });
const REQUEST = 'read diary.md and tell me the last 2 lines';

describe('Recovery, class by class', () => {
  it('wrong_args: the alternative is asked for canonical arguments, and may use the same tool', async () => {
    const wise = scripted([
      plan({ steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: '${step7.content}' } }] }),
      plan({ steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: '${step7.content}' } }] }),
      plan({
        steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: 2 } }],
        final_message: '${step1.content}',
      }),
    ]);
    // the Validator refuses both proposals: not a runtime failure, so this is not Recovery yet
    const { engine, stores } = engineOver(world, { wise });
    expect((await engine.runTurn(REQUEST)).termination?.cause).toBe('plan_unreadable');
    stores.close();

    const crooked = scripted([
      plan({ steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: '${RUNTIME:lang}' } }] }),
      plan({
        steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: 2 } }],
        final_message: '${step1.content}',
      }),
    ]);
    const second = engineOver(world, { wise: crooked });
    const result = await second.engine.runTurn(REQUEST);
    second.stores.close();
    expect(result).toMatchObject({ layer: 'recovery', finalKind: 'answer', finalMessage: 'four\nfive' });
    const retryPrompt = String(crooked.requests[1]?.messages[0]?.content);
    expect(retryPrompt).toContain('was given wrong arguments');
    expect(retryPrompt).toContain('canonical arguments');
    expect(retryPrompt).not.toContain('Do not use: fs_read');
  });

  it('missing_input: the alternative reads elsewhere; when it fails too the Terminator names the missing input', async () => {
    const wise = scripted([
      plan({ steps: [{ tool: 'fs_read', args: { path: 'nowhere.md' } }] }),
      plan({
        steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: 1 } }],
        final_message: '${step1.content}',
      }),
    ]);
    const { engine, stores } = engineOver(world, { wise });
    expect(await engine.runTurn('read my diary and tell me the last line')).toMatchObject({
      layer: 'recovery',
      finalMessage: 'five',
    });
    expect(String(wise.requests[1]?.messages[0]?.content)).toContain('lacked an input');
    stores.close();

    const lost = scripted([
      plan({ steps: [{ tool: 'fs_read', args: { path: 'nowhere.md' } }] }),
      plan({ steps: [{ tool: 'fs_read', args: { path: 'elsewhere.md' } }] }),
    ]);
    const second = engineOver(world, { wise: lost });
    const result = await second.engine.runTurn('read my journal and tell me the last line');
    second.stores.close();
    expect(result).toMatchObject({ layer: 'terminator', termination: { cause: 'missing_input' } });
    expect(lost.requests).toHaveLength(2);
  });
});

describe('plan policy and the verifier, through the engine', () => {
  it('abortOn ends the turn without Recovery asking the model again', async () => {
    const wise = scripted([
      plan({
        steps: [{ id: 'read', tool: 'fs_read', args: { path: 'nowhere.md' } }],
        policy: { abortOn: ['read.exception.NotFound'] },
      }),
    ]);
    const { engine, stores } = engineOver(world, { wise });
    const result = await engine.runTurn('read nowhere.md');
    stores.close();
    expect(result).toMatchObject({ layer: 'terminator', termination: { cause: 'aborted' } });
    expect(result.finalMessage).toContain('fs_read');
    expect(wise.requests).toHaveLength(1);
  });

  it('a verify step that blocks keeps the answer from the person; one that warns adds an advisory', async () => {
    const pack = defineRulePack({
      id: 'rules.diary.v1',
      version: '1.0.0',
      description: 'no fives',
      rules: [
        {
          id: 'diary.no-five',
          description: 'five is private',
          check: ({ candidate }) =>
            JSON.stringify(candidate).includes('five')
              ? { outcome: 'block', reason: 'five is private' }
              : { outcome: 'warn', reason: 'checked by hand' },
        },
      ],
    });
    const verified = (tail: number) =>
      plan({
        steps: [
          { tool: 'fs_read', args: { path: 'diary.md', tail } },
          { kind: 'verify', rulePack: 'rules.diary.v1' },
        ],
        final_message: '${step1.content}',
      });
    const { engine, stores } = engineOver(
      world,
      { wise: scripted([verified(1), verified(1), plan({ steps: [], out_of_scope: 'nothing else' })]) },
      { verifier: createVerifier({ packs: [pack] }) },
    );
    const blocked = await engine.runTurn('read diary.md and tell me the last 1 lines');
    expect(blocked).toMatchObject({ layer: 'terminator', termination: { cause: 'verification_blocked' } });
    expect(blocked.finalMessage).not.toMatch(/^five$/m);
    expect(blocked.finalMessage).toContain('five is private');
    stores.close();

    const second = engineOver(
      world,
      { wise: scripted([verified(5)]) },
      { verifier: createVerifier({ packs: [pack] }) },
    );
    const head = await second.engine.runTurn('read diary.md and tell me the last 5 lines');
    second.stores.close();
    // the last five lines contain "five": blocked as well; the first lines of a file without it pass with a warning
    expect(head.termination?.cause).toBe('verification_blocked');
  });
});

describe('turn budgets', () => {
  it('a spent token budget ends the turn as budget_exhausted, not as an unreachable model', async () => {
    const wise = scripted([{ text: readPlan('diary.md', 2) }]);
    const { engine, stores } = engineOver(
      world,
      { wise, fast: scripted([{ text: '{"verb":"read"}' }]) },
      { budget: { tokens: 0 } },
    );
    const result = await engine.runTurn(REQUEST);
    stores.close();
    expect(result).toMatchObject({ layer: 'terminator', termination: { cause: 'budget_exhausted' } });
    expect(result.finalMessage).toContain('model tokens');
  });

  it('a spent tool-call budget stops the plan at the call that would go over', async () => {
    const wise = scripted([
      plan({
        steps: [
          { tool: 'fs_read', args: { path: 'diary.md', tail: 1 } },
          { tool: 'fs_read', args: { path: 'diary.md', tail: 2 }, depends: [1] },
        ],
      }),
    ]);
    const { engine, stores } = engineOver(world, { wise }, { budget: { toolCalls: 1 } });
    const result = await engine.runTurn('read diary.md twice');
    stores.close();
    expect(result).toMatchObject({ layer: 'terminator', termination: { cause: 'budget_exhausted' } });
    expect(result.finalMessage).toContain('1 tool calls');
    expect(wise.requests).toHaveLength(1);
  });
});

describe("failures that are not the plan's fault", () => {
  it('a shortcut whose replay times out or is rate-limited is kept and never becomes an anti-autopath; a real failure drops it', async () => {
    await writeSignedExecutor({
      root: world.executors,
      name: 'gate',
      key: world.key,
      errorClasses: ['RateLimited', 'Broken'],
      contract: { idempotent: false, side_effects: false },
      sandboxToml: `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576`,
      code: `import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  const state = readFileSync(join(ctx.workspace, 'gate.txt'), 'utf8').trim();
  if (state === 'busy') return fail('RateLimited', 'busy');
  if (state === 'broken') return fail('Broken', 'broken');
  return ok({ open: true });
} });
`,
    });
    await world.catalog.load();
    const gate = (state: string) => writeFile(join(world.workspace, 'gate.txt'), state);
    await gate('open');
    const gatePlan = plan({ steps: [{ tool: 'gate', args: {} }], final_message: 'open' });
    const { engine, stores } = engineOver(world, {
      wise: scripted([gatePlan, gatePlan, gatePlan, gatePlan]),
    });
    expect((await engine.runTurn('open the gate')).layer).toBe('engine');
    await gate('busy');
    for (let round = 0; round < 3; round++) await engine.runTurn('open the gate');
    await gate('open');
    const after = await engine.runTurn('open the gate');
    expect(after).toMatchObject({ layer: 'fastpath', modelCalls: 0, finalMessage: 'open' });
    await gate('broken');
    await engine.runTurn('open the gate');
    await gate('open');
    expect((await engine.runTurn('open the gate')).layer).not.toBe('fastpath');
    stores.close();
  });
});

describe('turn progress', () => {
  it('reports each layer tried, why it passed, and each step started and finished, in order', async () => {
    const { engine, stores } = engineOver(world, { wise: scripted([{ text: readPlan('diary.md', 2) }]) });
    const events: unknown[] = [];
    const result = await engine.runTurn(REQUEST, { onEvent: (event) => events.push(event) });
    const throwing = await engine.runTurn(REQUEST, {
      onEvent: () => {
        throw new Error('a listener that fails');
      },
    });
    stores.close();
    expect(result.finalKind).toBe('answer');
    expect(throwing).toMatchObject({ finalKind: 'answer', layer: 'fastpath' });
    expect(events.map((event) => JSON.stringify(event))).toEqual([
      JSON.stringify({ type: 'layer', layer: 'pre-fastpath' }),
      expect.stringContaining('"type":"pass","layer":"pre-fastpath"'),
      JSON.stringify({ type: 'layer', layer: 'fastpath' }),
      expect.stringContaining('"type":"pass","layer":"fastpath"'),
      JSON.stringify({ type: 'layer', layer: 'autopath' }),
      expect.stringContaining('"type":"pass","layer":"autopath"'),
      JSON.stringify({ type: 'layer', layer: 'proposal' }),
      JSON.stringify({ type: 'step', phase: 'started', number: 1, tool: 'fs_read' }),
      JSON.stringify({ type: 'step', phase: 'finished', number: 1, tool: 'fs_read', ok: true, attempts: 1 }),
    ]);
  });
});

describe('engine variants', () => {
  it('oneshot never serves from memory; strict never recovers; unknown names are refused', async () => {
    const {
      engine: learning,
      stores,
      settings,
    } = engineOver(world, {
      wise: scripted([{ text: readPlan('diary.md', 2) }, { text: readPlan('diary.md', 2) }]),
    });
    await learning.runTurn(REQUEST);
    expect((await learning.runTurn(REQUEST)).layer).toBe('fastpath');
    const oneshot = createEngine(settings, engineVariant('oneshot'));
    const again = await oneshot.runTurn(REQUEST);
    expect(again.layer).toBe('engine');
    expect(again.modelCalls).toBeGreaterThan(0);
    stores.close();

    const failing = scripted([
      plan({ steps: [{ tool: 'crasher', args: {} }] }),
      plan({ steps: [{ tool: 'fs_read', args: { path: 'diary.md', tail: 1 } }] }),
    ]);
    const strictEngine = engineOver(world, { wise: failing });
    const strict = createEngine(strictEngine.settings, ENGINE_VARIANTS.strict);
    const ended = await strict.runTurn('crash for me');
    strictEngine.stores.close();
    expect(ended.layer).toBe('terminator');
    expect(failing.requests).toHaveLength(1);
    expect(() => engineVariant('turbo')).toThrow(
      /unknown engine variant "turbo" \(known: learning, oneshot, strict\)/,
    );
  });
});
