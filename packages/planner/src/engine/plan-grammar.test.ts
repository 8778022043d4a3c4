import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createCatalog,
  createInvoker,
  createProcessRunner,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createVerifier, defineRulePack, messageOf } from '@metnos/vaglio';
import { beforeAll, describe, expect, it } from 'vitest';
import { approveAll, createWorld, scripted } from '../__fixtures__/world.ts';
import { createTurnBudget } from './budget.ts';
import { type ExecuteSettings, executePlan } from './executor.ts';
import { type Plan, validatePlanShape } from './plan.ts';
import { templatize } from './slots.ts';
import { validatePlan } from './validator.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
let executors: VerifiedExecutor[];
let invoker: ReturnType<typeof createInvoker>;

/** A transient failure on the first call (a counter file in the workspace), then the answer. */
const flakyCode = `import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineExecutor, fail, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) {
  const mark = join(ctx.workspace, args.mark);
  if (!existsSync(mark)) { writeFileSync(mark, '1'); return fail('RateLimited', 'slow down'); }
  return ok({ value: 'steady' });
} });
`;
const flakySchema = {
  definitions: {
    Input: { type: 'object', properties: { mark: { type: 'string' } }, required: ['mark'] },
    Output: { type: 'object', properties: { value: { type: 'string' } } },
  },
};

beforeAll(async () => {
  world = await createWorld();
  const sandboxToml = `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576`;
  await writeSignedExecutor({
    root: world.executors,
    name: 'flaky',
    key: world.key,
    sandboxToml,
    errorClasses: ['RateLimited'],
    code: flakyCode,
    schema: flakySchema,
  });
  await writeSignedExecutor({
    root: world.executors,
    name: 'flaky_once',
    key: world.key,
    sandboxToml,
    errorClasses: ['RateLimited'],
    code: flakyCode,
    schema: flakySchema,
    contract: { idempotent: false, side_effects: true },
  });
  await writeSignedExecutor({
    root: world.executors,
    name: 'clock',
    key: world.key,
    sandboxToml,
    code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args, ctx) { return ok({ now: new Date().toISOString(), asOf: ctx.asOf ?? null }); } });
`,
  });
  const catalog = createCatalog({ root: world.executors, trustedKeys: [world.key] });
  await catalog.load();
  executors = catalog.executors();
  invoker = createInvoker({ catalog, runner: createProcessRunner() });
  await writeFile(join(world.workspace, 'notes.md'), 'alpha\nbeta\n');
});

const plan = (data: unknown): Plan => {
  const parsed = validatePlanShape(data);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.plan;
};

function settings(extra: Partial<ExecuteSettings> = {}): ExecuteSettings {
  return {
    executors,
    invoker,
    reviewer: approveAll,
    request: 'test',
    turnId: `t-${Math.random().toString(36).slice(2)}`,
    workspace: world.workspace,
    home: world.root,
    runtime: { actor: 'user', lang: 'en', channel: 'cli', now: '2026-11-22T08:00:00.000Z' },
    ...extra,
  };
}

const noWait = { sleep: async () => {} };

/** Blocks a candidate that mentions "beta", warns on one that mentions "alpha". */
const testPack = defineRulePack({
  id: 'rules.grammar.v1',
  version: '1.0.0',
  description: 'test pack',
  rules: [
    {
      id: 'grammar.no-beta',
      description: 'never emit beta',
      check: ({ candidate }) =>
        messageOf(candidate).includes('beta')
          ? { outcome: 'block', reason: 'beta is secret' }
          : { outcome: 'pass' },
    },
    {
      id: 'grammar.alpha',
      description: 'alpha is worth a note',
      check: ({ candidate }) =>
        messageOf(candidate).includes('alpha')
          ? { outcome: 'warn', reason: 'mentions alpha' }
          : { outcome: 'pass' },
    },
  ],
});
const verifier = createVerifier({ packs: [testPack] });

describe("seed 003's plan grammar, as the Validator reads it", () => {
  it('accepts ids, kinds, produces, $ref, a version range, verify and decision steps, and a policy', () => {
    const seedShaped = plan({
      version: '1',
      steps: [
        {
          id: 's1',
          kind: 'tool',
          tool: 'fs_read',
          version: '>=1.0.0,<2',
          args: { path: 'notes.md' },
          produces: 'evidence.s1',
        },
        {
          id: 's2',
          tool: 'fs_write',
          args: { path: 'copy.md', content: '$ref:evidence.s1' },
          produces: 'written.s2',
          depends: ['s1'],
        },
        { id: 'v1', kind: 'verify', rulePack: 'rules.grammar.v1' },
        {
          id: 'd1',
          kind: 'decision',
          draft: 'Copied ${step2.content.bytes_written} bytes',
          evidence: ['evidence.s1', 's2'],
        },
      ],
      policy: { abortOn: ['s1.exception.NotFound'], branch: [] },
    });
    expect(validatePlan(seedShaped, executors)).toEqual([]);
  });

  it('names every broken reference, range and policy entry', () => {
    const broken = plan({
      steps: [
        { id: 'a', tool: 'fs_read', version: '^2', args: { path: '$ref:later.key' } },
        { id: 'b', tool: 'fs_read', args: { path: 'x' }, produces: 'later.key' },
        { id: 'c', tool: 'fs_read', args: { path: 'y' }, produces: 'later.key' },
        { id: 'd', tool: 'fs_write', args: { path: 'z', content: '$ref:nowhere' } },
        { id: 'v', kind: 'verify', rulePack: 'rules.answer.v1' },
        { id: 'e', tool: 'fs_write', args: { path: 'z', content: '${step5.content}' } },
        { id: 'f', kind: 'decision', draft: 'done', evidence: ['ghost'] },
      ],
      policy: {
        abortOn: ['zz.exception.NotFound'],
        branch: [{ on: 'c.exception.NotFound', goto: 'a' }],
      },
    });
    const errors = validatePlan(broken, executors).join('\n');
    expect(errors).toContain('outside the range "^2"');
    expect(errors).toContain('$ref:later.key reads "later.key", which step 2 produces later');
    expect(errors).toContain('"later.key" is produced twice');
    expect(errors).toContain('$ref:nowhere names nothing in run memory');
    expect(errors).toContain('points at a verify step');
    expect(errors).toContain('evidence "ghost"');
    expect(errors).toContain('"zz.exception.NotFound" names no step "zz"');
    expect(errors).toContain('goto must be a step after c.exception.NotFound');
  });

  it('refuses a step that waits for a step only a branch starts', () => {
    const waiting = plan({
      steps: [
        { id: 'a', tool: 'fs_read', args: { path: 'missing.md' } },
        { id: 'b', tool: 'fs_read', args: { path: 'notes.md' } },
        { id: 'c', tool: 'fs_write', args: { path: 'o.md', content: '${step2.content}' } },
      ],
      policy: { branch: [{ on: 'a.exception.NotFound', goto: 'b' }] },
    });
    expect(validatePlan(waiting, executors)).toContain(
      'step 3: waits for step 2, which only a branch starts',
    );
  });

  it('a remembered template keeps the structure: only values the request gave become slots', () => {
    const learned = plan({
      steps: [
        { id: 's1', tool: 'fs_read', version: '>=1', args: { path: 'diary.md', tail: 1 }, produces: 'doc' },
        { tool: 'fs_write', args: { path: 'out.md', content: '$ref:doc' }, depends: [1] },
      ],
      final_message: 'last 1 line',
    });
    const { template, slots } = templatize(learned, 'read diary.md and copy the last 1 lines');
    expect(template.version).toBe('1');
    expect(template.steps[1]).toMatchObject({ depends: [1] });
    expect(template.steps[0]).toMatchObject({
      id: 's1',
      version: '>=1',
      args: { path: '${SLOT:path_1}', tail: '${SLOT:number_1}' },
    });
    expect(template.final_message).toBe('last ${SLOT:number_1} line');
    expect(slots).toEqual(['number_1', 'path_1']);
    expect(validatePlanShape(template).ok).toBe(true);
  });

  it('keeps old plans valid: no kind means a tool step', () => {
    expect(validatePlanShape({ steps: [{ tool: 'fs_read', args: { path: 'a' } }] }).ok).toBe(true);
    expect(validatePlanShape({ steps: [{ kind: 'verify', rulePack: 'rules.answer.v1' }] })).toMatchObject({
      ok: false,
    });
  });
});

describe('the Executor runs the grammar', () => {
  it('keeps an output in run memory under its key and hands it on whole through $ref', async () => {
    const outcome = await executePlan(
      plan({
        steps: [
          { tool: 'fs_read', args: { path: 'notes.md' }, produces: 'doc.s1' },
          { tool: 'fs_write', args: { path: 'copy.md', content: '$ref:doc.s1' } },
        ],
        final_message: 'copied',
      }),
      settings(),
    );
    expect(outcome.ok).toBe(true);
    expect(await readFile(join(world.workspace, 'copy.md'), 'utf8')).toBe('alpha\nbeta\n');
    expect(outcome.memory).toEqual([
      { key: 'doc.s1', value: 'alpha\nbeta\n', step: 1, schema: 'fs_read@1.0.0#output' },
    ]);
  });

  it('fails a $ref to a pinned property nobody pinned, and reads one that is', async () => {
    const steps = [{ tool: 'fs_read', args: { path: '$ref:pinned/user:me/notes_file' } }];
    const missing = await executePlan(plan({ steps }), settings());
    expect(missing).toMatchObject({ ok: false, error: { class: 'BadReference' } });
    const pinned = {
      get: (subject: string, property: string) =>
        subject === 'user:me' && property === 'notes_file' ? 'notes.md' : undefined,
    };
    const found = await executePlan(plan({ steps }), settings({ pinned }));
    expect(found).toMatchObject({ ok: true, finalMessage: 'alpha\nbeta\n' });
  });

  it('emits the decision once the verify step passes it, with the warnings as advisories', async () => {
    const outcome = await executePlan(
      plan({
        steps: [
          { tool: 'fs_read', args: { path: 'notes.md', tail: 2 }, produces: 'notes' },
          { kind: 'decision', draft: 'First line: alpha', evidence: ['notes'] },
          { kind: 'verify', rulePack: 'rules.grammar.v1' },
        ],
      }),
      settings({ verifier }),
    );
    expect(outcome).toMatchObject({
      ok: true,
      finalMessage: 'First line: alpha',
      candidate: { kind: 'answer', message: 'First line: alpha', cites: ['step1'] },
      advisories: ['grammar.alpha: mentions alpha'],
    });
    expect(outcome.verdicts.map((verdict) => verdict.outcome)).toEqual(['warn']);
  });

  it('stops a plan the verifier blocks with VerificationBlocked, which no alternative can fix', async () => {
    const blocked = plan({
      steps: [
        { tool: 'fs_read', args: { path: 'notes.md' } },
        { kind: 'verify', rulePack: 'rules.grammar.v1' },
      ],
      final_message: '${step1.content}',
    });
    const outcome = await executePlan(blocked, settings({ verifier }));
    expect(outcome).toMatchObject({
      ok: false,
      failedStep: 2,
      error: { class: 'VerificationBlocked' },
      recovery: 'out_of_scope',
    });
    expect(outcome.ok || outcome.error.message).toContain('beta is secret');
    // no verifier at all: a plan that asked to be checked is not emitted unchecked
    expect(await executePlan(blocked, settings())).toMatchObject({
      ok: false,
      error: { class: 'VerificationBlocked' },
    });
  });

  it('ends at once on a failure policy.abortOn lists, and leaves others to Recovery', async () => {
    const steps = [{ id: 'read', tool: 'fs_read', args: { path: 'missing.md' } }];
    const aborted = await executePlan(
      plan({ steps, policy: { abortOn: ['read.exception.NotFound'] } }),
      settings(),
    );
    expect(aborted).toMatchObject({
      ok: false,
      aborted: true,
      recovery: 'out_of_scope',
      error: { class: 'NotFound' },
    });
    const plain = await executePlan(plan({ steps }), settings());
    expect(plain).toMatchObject({ ok: false, recovery: 'missing_input' });
    expect(plain.ok === false && plain.aborted).toBeFalsy();
  });

  it('takes a branch: skips what waited on the failed step and runs the fallback', async () => {
    const outcome = await executePlan(
      plan({
        steps: [
          { id: 'primary', tool: 'fs_read', args: { path: 'missing.md' } },
          { id: 'use', tool: 'fs_write', args: { path: 'out.md', content: '${step1.content}' } },
          { id: 'fallback', tool: 'fs_read', args: { path: 'notes.md', tail: 1 } },
        ],
        final_message: 'wrote ${step2.content.path}',
        policy: {
          branch: [
            {
              on: 'primary.exception.NotFound',
              goto: 'fallback',
              final_message: 'fallback: ${step3.content}',
            },
          ],
        },
      }),
      settings(),
    );
    expect(outcome).toMatchObject({ ok: true, finalMessage: 'fallback: beta', skipped: [2], order: [1, 3] });
    const untaken = await executePlan(
      plan({
        steps: [
          { id: 'primary', tool: 'fs_read', args: { path: 'notes.md', tail: 1 } },
          { id: 'fallback', tool: 'fs_read', args: { path: 'notes.md' } },
        ],
        final_message: '${step1.content}',
        policy: { branch: [{ on: 'primary.exception.NotFound', goto: 'fallback' }] },
      }),
      settings(),
    );
    expect(untaken).toMatchObject({ ok: true, finalMessage: 'beta', order: [1] });
  });

  it('retries a transient failure of an idempotent executor, never one of an executor that is not', async () => {
    const retried = await executePlan(
      plan({
        steps: [{ tool: 'flaky', args: { mark: 'flaky-1' } }],
        final_message: '${step1.content.value}',
      }),
      settings({ retry: noWait }),
    );
    expect(retried).toMatchObject({ ok: true, finalMessage: 'steady' });
    expect(retried.steps[0]?.attempts).toBe(2);
    const once = await executePlan(
      plan({ steps: [{ tool: 'flaky_once', args: { mark: 'flaky-2' } }] }),
      settings({ retry: noWait }),
    );
    expect(once).toMatchObject({ ok: false, error: { class: 'RateLimited' } });
    expect(once.steps[0]?.attempts).toBe(1);
  });

  it('refuses the call past the tool-call budget with BudgetExhausted', async () => {
    const budget = createTurnBudget({ toolCalls: 1 });
    const outcome = await executePlan(
      plan({
        steps: [
          { tool: 'fs_read', args: { path: 'notes.md' } },
          { tool: 'fs_read', args: { path: 'notes.md', tail: 1 }, depends: [1] },
        ],
      }),
      settings({ budget }),
    );
    expect(outcome).toMatchObject({
      ok: false,
      failedStep: 2,
      error: { class: 'BudgetExhausted' },
      recovery: 'out_of_scope',
    });
    expect(budget.spent.toolCalls).toBe(1);
  });

  it('asks each filler of the model of its tier', async () => {
    const fast = scripted([{ text: 'from fast' }]);
    const wise = scripted([{ text: 'from wise' }]);
    const outcome = await executePlan(
      plan({
        steps: [{ tool: 'fs_write', args: { path: 'f.md', content: '${FILLER:name}' } }],
        fillers: { name: { prompt: 'a name', tier: 'wise' } },
        final_message: '${FILLER:name}',
      }),
      settings({ fillerModels: { fast, wise } }),
    );
    expect(outcome).toMatchObject({ ok: true, finalMessage: 'from wise', fillers: { name: 'from wise' } });
    expect(fast.requests).toHaveLength(0);
  });

  it('records the dispatch order, and replays a given order one step at a time', async () => {
    const parallel = plan({
      steps: [
        { tool: 'fs_read', args: { path: 'notes.md' } },
        { tool: 'fs_read', args: { path: 'diary.md', tail: 1 } },
        { tool: 'fs_write', args: { path: 'both.md', content: '${step1.content}${step2.content}' } },
      ],
    });
    expect((await executePlan(parallel, settings())).order).toEqual([1, 2, 3]);
    const ordered = await executePlan(parallel, settings({ order: [2, 1, 3] }));
    expect(ordered.order).toEqual([2, 1, 3]);
    expect(ordered.ok).toBe(true);
    expect(await executePlan(parallel, settings({ order: [3, 1, 2] }))).toMatchObject({
      ok: false,
      error: { message: 'the recorded step order does not fit the plan' },
    });
  });

  it("pins the executors' clock to the turn's asOf", async () => {
    const asOf = '2026-03-01T09:30:00.000Z';
    const outcome = await executePlan(plan({ steps: [{ tool: 'clock', args: {} }] }), settings({ asOf }));
    expect(outcome.steps[0]?.result).toMatchObject({ ok: true, content: { now: asOf, asOf } });
  });
});
