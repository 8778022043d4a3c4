import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  normalizeRange,
  type Plan,
  parsePlan,
  planHash,
  planTools,
  stepIdOf,
  stepNumbers,
  validatePlanShape,
} from './plan.ts';
import { validatePlan, versionFits } from './validator.ts';

let digest = 0;
/** An executor as the catalog would give it: only what the validator reads. */
function executor(name: string, version: string, input: unknown, output: unknown): VerifiedExecutor {
  return {
    name,
    version,
    manifest: {
      executor: { name, version },
      contract: {
        input_schema: 'schema.json#/definitions/Input',
        output_schema: 'schema.json#/definitions/Output',
      },
    },
    schema: { definitions: { Input: input, Output: output } },
    digests: { schema: `digest-${++digest}` },
  } as unknown as VerifiedExecutor;
}

const fsList = executor(
  'fs_list',
  '1.2.0',
  {
    type: 'object',
    properties: { path: { type: 'string' }, entries: { type: 'array' }, limit: { type: 'integer' } },
    required: ['path'],
    additionalProperties: false,
  },
  {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
      },
      meta: { type: 'object' },
      closed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      open: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
      shared: { $ref: '#/definitions/Input' },
    },
    additionalProperties: false,
  },
);
const notify = executor(
  'notify',
  '2.0.0',
  {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  },
  { type: 'string' },
);
const loose = executor('loose', '0.1.0', { type: 'object' }, { type: 'object' });
const executors = [fsList, notify, loose];

function plan(data: unknown): Plan {
  const parsed = validatePlanShape(data);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.plan;
}

const validate = (data: unknown, slots: string[] = []) => validatePlan(plan(data), executors, { slots });

describe('validatePlan: tools, versions and arguments', () => {
  it('accepts a plan whose steps fit their tools and reference earlier outputs', () => {
    expect(
      validate({
        steps: [
          { id: 'list', tool: 'fs_list', version: '^1.2', args: { path: '/w' }, produces: 'evidence.list' },
          {
            tool: 'notify',
            args: { text: 'found ${step1.content.items[*].name} in ${RUNTIME:now}' },
            depends: ['list', 1],
          },
          { tool: 'notify', args: { text: '$ref:evidence.list.items' } },
          { kind: 'decision', draft: '${step1.items|count}', evidence: ['evidence.list', 'list', 's2'] },
          { kind: 'verify', rulePack: 'rules.answer.v1', depends: ['s4'] },
        ],
        final_message: '${step2.content} ${step1.content.items.length} ${step1.ok} ${step1.metadata.x}',
      }),
    ).toEqual([]);
  });

  it('refuses an unknown tool and a version outside the range', () => {
    expect(validate({ steps: [{ tool: 'nope', args: {} }] })).toEqual(['step 1 (nope): no such tool']);
    expect(validate({ steps: [{ tool: 'fs_list', version: '>=2.0.0, <3', args: { path: '/w' } }] })).toEqual([
      'step 1 (fs_list): the catalog has fs_list 1.2.0, outside the range ">=2.0.0, <3"',
    ]);
    expect(versionFits(fsList, '>=1.0.0,<2')).toBe(true);
    expect(versionFits(executor('pre', '2.0.0-beta.1', {}, {}), '>=1.0.0')).toBe(true);
    expect(normalizeRange(' >=1.0.0 , <2 ')).toBe('>=1.0.0 <2');
  });

  it('names each argument that does not fit the schema, and passes over placeholders', () => {
    expect(validate({ steps: [{ tool: 'fs_list', args: { path: 3, extra: 1 } }] })).toEqual([
      'step 1 (fs_list): argument / must NOT have additional properties',
    ]);
    expect(validate({ steps: [{ tool: 'fs_list', args: { path: 3 } }] })).toEqual([
      'step 1 (fs_list): argument /path must be string',
    ]);
    expect(
      validate({
        steps: [
          { tool: 'fs_list', args: { path: '/w' } },
          { tool: 'fs_list', args: { path: '/w', limit: '${step1.content.items|count}' } },
        ],
      }),
    ).toEqual([]);
    expect(
      validate({
        steps: [{ tool: 'fs_list', args: { path: '/w', limit: 'x ${FILLER:n}' } }],
        fillers: { n: { prompt: 'n?' } },
      }),
    ).toEqual([]);
    expect(validate({ steps: [{ tool: 'fs_list', args: { path: '/w', limit: 'ten' } }] })).toEqual([
      'step 1 (fs_list): argument /limit must be integer',
    ]);
  });

  it('feeds from_step as entries, and refuses it toward a tool that takes none or a later step', () => {
    expect(
      validate({
        steps: [
          { tool: 'fs_list', args: { path: '/w' } },
          { tool: 'fs_list', args: { path: '/w', from_step: 1 } },
        ],
      }),
    ).toEqual([]);
    expect(
      validate({
        steps: [
          { tool: 'fs_list', args: { path: '/w' } },
          { tool: 'notify', args: { text: 'x', from_step: 1 } },
        ],
      }),
    ).toEqual(['step 2 (notify): notify takes no entries, so from_step cannot feed it']);
    for (const from of [2, 0, 1.5, '1']) {
      expect(
        validate({
          steps: [
            { tool: 'fs_list', args: { path: '/w' } },
            { tool: 'fs_list', args: { path: '/w', from_step: from } },
          ],
        }),
      ).toEqual(['step 2 (fs_list): from_step must be the number of an earlier step']);
    }
  });

  it('refuses arguments nested deeper than the limit before anything else', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 70; level++) deep = [deep];
    const shaped = plan({ steps: [{ tool: 'nope', args: {} }] });
    (shaped.steps[0] as { args: unknown }).args = { a: deep };
    expect(validatePlan(shaped, executors)).toEqual(['step 1 (nope): arguments nest deeper than 64 levels']);
  });
});

describe('validatePlan: references', () => {
  const listThen = (reference: string) => ({
    steps: [
      { tool: 'fs_list', args: { path: '/w' }, produces: 'evidence.list' },
      { tool: 'notify', args: { text: reference } },
    ],
  });

  it('refuses a step placeholder that points at the same, a later or no step', () => {
    expect(validate({ steps: [{ tool: 'notify', args: { text: '${step1.content}' } }] })).toEqual([
      'step 1 (notify): ${step1.content} must point at an earlier step (1..0)',
    ]);
    expect(validate(listThen('${step0.content}'))).toEqual([
      'step 2 (notify): ${step0.content} must point at an earlier step (1..1)',
    ]);
    expect(validate(listThen('${step3.content}'))).toEqual([
      'step 2 (notify): ${step3.content} must point at an earlier step (1..1)',
    ]);
  });

  it('refuses fields the earlier tool does not produce, following arrays, and allows what is open', () => {
    expect(validate(listThen('${step1.content.nope}'))).toEqual([
      'step 2 (notify): ${step1.content.nope}: fs_list does not produce "nope"',
    ]);
    expect(validate(listThen('${step1.nope}'))).toEqual([
      'step 2 (notify): ${step1.nope}: fs_list does not produce "nope"',
    ]);
    expect(validate(listThen('${step1.content.items[*].size}'))).toEqual([]);
    expect(validate(listThen('${step1.content.closed.b}'))).toEqual([
      'step 2 (notify): ${step1.content.closed.b}: fs_list does not produce "closed.b"',
    ]);
    for (const open of [
      '${step1.content.items[0].size}',
      '${step1.content.open.b}',
      '${step1.content.meta.any}',
      '${step1.content.shared.x}',
      '${step1.content.items.length}',
      '${step1.content.length}',
      '${step1.error.x}',
    ]) {
      expect(validate(listThen(open))).toEqual([]);
    }
    const fromLoose = {
      steps: [
        { tool: 'loose', args: {} },
        { tool: 'notify', args: { text: '${step1.content.a.b}' } },
      ],
    };
    expect(validate(fromLoose)).toEqual([]);
    const fromString = {
      steps: [
        { tool: 'notify', args: { text: 'x' } },
        { tool: 'notify', args: { text: '${step2.content.a}' } },
        { tool: 'notify', args: { text: '${step1.content.a}' } },
      ],
    };
    expect(validate(fromString)).toEqual([
      'step 2 (notify): ${step2.content.a} must point at an earlier step (1..1)',
      'step 3 (notify): ${step1.content.a}: notify does not produce "a"',
    ]);
  });

  it('refuses a placeholder on a verify step, and passes over unknown tools and decisions', () => {
    expect(
      validate({
        steps: [
          { tool: 'fs_list', args: { path: '/w' } },
          { kind: 'verify', rulePack: 'rules.answer.v1' },
          { kind: 'decision', draft: '${step1.content.x}' },
          { tool: 'notify', args: { text: '${step2.x} ${step3.anything}' } },
        ],
      }),
    ).toEqual([
      'step 3 (decision): ${step1.content.x}: fs_list does not produce "x"',
      'step 4 (notify): ${step2.x} points at a verify step, which runs last and produces nothing',
    ]);
  });

  it('checks $ref against the keys earlier steps produce', () => {
    expect(validate(listThen('$ref:evidence.list.items'))).toEqual([]);
    expect(validate(listThen('$ref:evidence.list.nope'))).toEqual([
      'step 2 (notify): $ref:evidence.list.nope: fs_list does not produce "nope"',
    ]);
    expect(validate(listThen('$ref:evidence.other'))).toEqual([
      'step 2 (notify): $ref:evidence.other names nothing in run memory (evidence.list)',
    ]);
    expect(validate({ steps: [{ tool: 'notify', args: { text: '$ref:evidence.x' } }] })).toEqual([
      'step 1 (notify): $ref:evidence.x names nothing in run memory (no step produces a key)',
    ]);
    expect(validate(listThen('$ref:input.request'))).toEqual([]);
    expect(validate(listThen('$ref:runtime.now'))).toEqual([]);
    expect(
      validate({
        steps: [
          { tool: 'notify', args: { text: '$ref:evidence.later' } },
          { tool: 'fs_list', args: { path: '/w' }, produces: 'evidence.later' },
          { tool: 'notify', args: { text: 'x' }, produces: 'evidence.text' },
          { tool: 'notify', args: { text: '$ref:evidence.text.anything' } },
        ],
      }),
    ).toEqual([
      'step 1 (notify): $ref:evidence.later reads "evidence.later", which step 2 produces later',
      'step 4 (notify): $ref:evidence.text.anything: notify does not produce "anything"',
    ]);
  });

  it('refuses a key produced twice', () => {
    expect(
      validate({
        steps: [
          { tool: 'fs_list', args: { path: '/a' }, produces: 'evidence.x' },
          { tool: 'fs_list', args: { path: '/b' }, produces: 'evidence.x' },
        ],
      }),
    ).toEqual(['step 2 (fs_list): "evidence.x" is produced twice']);
  });

  it('refuses undeclared fillers, unknown runtime keys and slots the request does not bind', () => {
    expect(
      validate(
        {
          steps: [
            {
              tool: 'notify',
              args: {
                text: '${FILLER:a} ${FILLER:b} ${RUNTIME:lang} ${RUNTIME:today} ${RUNTIME:secret} ${SLOT:path_1} ${SLOT:path_2}',
              },
            },
          ],
          fillers: { a: { prompt: 'a?' } },
        },
        ['path_1'],
      ),
    ).toEqual([
      'step 1 (notify): ${FILLER:b} names a filler that "fillers" does not declare',
      'step 1 (notify): ${RUNTIME:secret} is not a runtime key (actor, lang, channel, now, today)',
      'step 1 (notify): ${SLOT:path_2} is not bound by the request',
    ]);
    expect(validate({ steps: [{ tool: 'notify', args: { text: '${SLOT:path_1}' } }] })).toEqual([
      'step 1 (notify): ${SLOT:path_1} is not bound by the request',
    ]);
  });

  it('checks the final messages, the plan’s and each branch’s, after every step', () => {
    expect(
      validate({
        steps: [
          { id: 'a', tool: 'fs_list', args: { path: '/w' } },
          { id: 'b', tool: 'notify', args: { text: 'x' } },
        ],
        final_message: '${step2.content} ${step3.content}',
        policy: {
          branch: [
            { on: 'a.exception.NotFound', goto: 'b', final_message: '${FILLER:x}' },
            { on: 'a.exception.Other', goto: 'b' },
          ],
        },
      }),
    ).toEqual([
      'final_message: ${step3.content} must point at an earlier step (1..2)',
      'policy.branch[0].final_message: ${FILLER:x} names a filler that "fillers" does not declare',
    ]);
  });
});

describe('validatePlan: depends, decisions and policy', () => {
  it('refuses depends on the same, a later or an unknown step', () => {
    expect(
      validate({
        steps: [
          { id: 'a', tool: 'notify', args: { text: 'x' }, depends: ['a', 2, 'ghost'] },
          { kind: 'verify', rulePack: 'rules.answer.v1', depends: [3] },
          { kind: 'decision', draft: 'x', depends: ['s3'] },
        ],
      }),
    ).toEqual([
      'step 1 (notify): depends on "a", which is not an earlier step',
      'step 1 (notify): depends on "2", which is not an earlier step',
      'step 1 (notify): depends on "ghost", which is not an earlier step',
      'step 2 (verify): depends on "3", which is not an earlier step',
      'step 3 (decision): depends on "s3", which is not an earlier step',
    ]);
  });

  it('allows one decision citing earlier evidence only', () => {
    expect(
      validate({
        steps: [
          { tool: 'notify', args: { text: 'x' }, produces: 'evidence.n' },
          { kind: 'decision', draft: 'a', evidence: ['evidence.n', 's1', 'evidence.none', 's3', 's2'] },
          { kind: 'decision', draft: 'b' },
        ],
      }),
    ).toEqual([
      'step 2 (decision): evidence "evidence.none" is neither an earlier step nor a key an earlier step produces',
      'step 2 (decision): evidence "s3" is neither an earlier step nor a key an earlier step produces',
      'step 2 (decision): evidence "s2" is neither an earlier step nor a key an earlier step produces',
      'step 3 (decision): a plan has at most one decision',
    ]);
  });

  it('checks that policy names real tool steps and branches forward to a step that does not wait for the failure', () => {
    expect(
      validate({
        steps: [
          { id: 'a', tool: 'notify', args: { text: 'x' } },
          { id: 'b', tool: 'notify', args: { text: 'y' } },
          { id: 'c', tool: 'notify', args: { text: 'z' }, depends: ['a'] },
          { id: 'v', kind: 'verify', rulePack: 'rules.answer.v1' },
        ],
        policy: {
          abortOn: ['ghost.exception.X', 'v.exception.*', 'a.exception.*'],
          branch: [
            { on: 'b.exception.Down', goto: 'a' },
            { on: 'b.exception.Down', goto: 'b' },
            { on: 'a.exception.Down', goto: 'c' },
            { on: 'a.exception.Down', goto: 'nowhere' },
          ],
        },
      }),
    ).toEqual([
      'policy.abortOn: "ghost.exception.X" names no step "ghost"',
      'policy.abortOn: "v.exception.*": only tool steps raise exceptions',
      'policy.branch[0]: goto must be a step after b.exception.Down',
      'policy.branch[1]: goto must be a step after b.exception.Down',
      'policy.branch[2]: "c" waits for the step whose failure starts it',
      'policy.branch[3]: goto "nowhere" names no step',
      'step 4: waits for step 1, which only a branch starts',
      'step 4: waits for step 2, which only a branch starts',
      'step 4: waits for step 3, which only a branch starts',
    ]);
  });

  it('refuses a step that waits for a step only a branch starts', () => {
    expect(
      validate({
        steps: [
          { id: 'a', tool: 'notify', args: { text: 'x' } },
          { id: 'fallback', tool: 'notify', args: { text: 'y' } },
          { id: 'after', tool: 'notify', args: { text: 'z' }, depends: ['fallback'] },
        ],
        policy: { branch: [{ on: 'a.exception.Down', goto: 'fallback' }] },
      }),
    ).toEqual(['step 3: waits for step 2, which only a branch starts']);
    expect(
      validate({
        steps: [
          { id: 'a', tool: 'notify', args: { text: 'x' } },
          { id: 'fallback', tool: 'notify', args: { text: 'y' } },
        ],
        policy: { branch: [{ on: 'ghost.exception.Down', goto: 'fallback' }] },
      }),
    ).toEqual(['policy.branch[0]: "ghost.exception.Down" names no step "ghost"']);
  });
});

describe('the plan grammar', () => {
  it('reads a plan from bare JSON, from a fenced block, or from text around it', () => {
    const json = '{"steps":[{"tool":"notify","args":{"text":"hi"}}]}';
    for (const text of [
      json,
      `Here:\n\`\`\`json\n${json}\n\`\`\`\nthanks`,
      `\`\`\`\n${json}\n\`\`\``,
      `plan: ${json} (end)`,
    ]) {
      const parsed = parsePlan(text);
      expect(parsed).toEqual({
        ok: true,
        plan: {
          version: '1',
          steps: [{ tool: 'notify', args: { text: 'hi' } }],
          fillers: {},
          final_message: '',
        },
      });
    }
  });

  it('gives typed failures for text with no JSON, broken JSON and a wrong shape', () => {
    expect(parsePlan('no json here')).toEqual({ ok: false, errors: ['the answer holds no JSON object'] });
    expect(parsePlan('```json\n   \n```')).toEqual({
      ok: false,
      errors: ['the answer holds no JSON object'],
    });
    const broken = parsePlan('{"steps": [}');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.errors[0]).toMatch(/^the JSON does not parse: /);
    expect(parsePlan('{"steps":[]}')).toEqual({
      ok: false,
      errors: ['steps: a plan needs at least one tool step, or "out_of_scope" with the reason'],
    });
    expect(parsePlan('{"steps":[],"out_of_scope":"no mail tool"}')).toMatchObject({ ok: true });
    expect(validatePlanShape(null)).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^\(plan\): /)],
    });
  });

  it('reports at most eight problems, each with its path', () => {
    const steps = Array.from({ length: 10 }, () => ({ tool: '', args: {} }));
    const parsed = validatePlanShape({ steps: [...steps, { tool: 'x' }] });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toHaveLength(8);
    expect(parsed.errors[0]).toMatch(/^steps\.0/);
  });

  it('holds step ids, memory keys, rule packs, exceptions and ranges to their forms', () => {
    const one = (step: unknown, extra: Record<string, unknown> = {}) =>
      validatePlanShape({ steps: [{ tool: 'notify', args: {} }, step], ...extra }).ok;
    expect(one({ id: 'a-b_1', tool: 't' })).toBe(true);
    expect(one({ id: 'a b', tool: 't' })).toBe(false);
    expect(one({ id: 'x'.repeat(33), tool: 't' })).toBe(false);
    expect(one({ tool: 't', produces: 'evidence.s1' })).toBe(true);
    expect(one({ tool: 't', produces: 'a.b.c.d' })).toBe(true);
    expect(one({ tool: 't', produces: 'a.b.c.d.e' })).toBe(false);
    expect(one({ tool: 't', produces: '1a' })).toBe(false);
    expect(one({ kind: 'verify', rulePack: 'rules.answer.v1' })).toBe(true);
    expect(one({ kind: 'verify', rulePack: 'rules.mail-send.v12' })).toBe(true);
    expect(one({ kind: 'verify', rulePack: 'answer.v1' })).toBe(false);
    expect(one({ kind: 'verify', rulePack: 'rules.Answer.v1' })).toBe(false);
    expect(one({ tool: 't', version: '>=2.0.0, <3' })).toBe(true);
    expect(one({ tool: 't', version: 'latest' })).toBe(false);
    expect(one({ tool: 't', depends: [0] })).toBe(false);
    expect(one({ tool: 't', unknown: 1 })).toBe(false);
    expect(one({ kind: 'decision', draft: '' })).toBe(false);
    expect(one({ kind: 'decision', draft: { kind: 'mail' } })).toBe(true);
    expect(one({ tool: 't' }, { policy: { abortOn: ['s1.exception.*', 's2.exception.NotFound'] } })).toBe(
      true,
    );
    expect(one({ tool: 't' }, { policy: { abortOn: ['s1.exception.9x'] } })).toBe(false);
    expect(one({ tool: 't' }, { policy: { branch: [{ on: 's1.failed', goto: 's2' }] } })).toBe(false);
    expect(one({ tool: 't' }, { fillers: { 'bad name': { prompt: 'x' } } })).toBe(false);
    expect(one({ tool: 't' }, { fillers: { ok: { prompt: 'x' } } })).toBe(true);
    expect(one({ tool: 't' }, { version: '2' })).toBe(false);
  });

  it('names steps by id or number, lists tools once, and hashes plans by content', () => {
    const shaped = plan({
      steps: [
        { tool: 'a', args: {} },
        { id: 's1', tool: 'b', args: {} },
        { kind: 'verify', rulePack: 'rules.answer.v1' },
        { tool: 'a', args: {} },
      ],
    });
    expect(stepIdOf(shaped.steps[0]!, 1)).toBe('s1');
    expect(stepIdOf(shaped.steps[1]!, 2)).toBe('s1');
    expect([...stepNumbers(shaped)]).toEqual([
      ['s1', 2],
      ['s2', 2],
      ['s3', 3],
      ['s4', 4],
    ]);
    expect(planTools(shaped)).toEqual(['a', 'b']);
    expect(canonicalJson({ b: [1, { d: undefined, c: null }], a: 'x' })).toBe(
      '{"a":"x","b":[1,{"c":null,"d":null}]}',
    );
    expect(planHash({ b: 1, a: 2 })).toBe(planHash({ a: 2, b: 1 }));
    expect(planHash({ a: 1 })).not.toBe(planHash({ a: 2 }));
    expect(planHash({ a: 1 })).toMatch(/^[0-9a-f]{32}$/);
  });
});
