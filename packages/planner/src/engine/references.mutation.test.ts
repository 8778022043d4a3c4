import { MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import {
  entriesOf,
  findPlaceholders,
  followPath,
  PlanReferenceError,
  referencedStepNumbers,
  refOf,
  resolvePlaceholders,
} from './references.ts';

function thrown(run: () => unknown): PlanReferenceError {
  try {
    run();
  } catch (error) {
    if (PlanReferenceError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

const observations = [
  { ok: true, content: { items: [{ name: 'a.md' }, { name: 'b.md' }], total: 2, text: 'hello' } },
  undefined,
  { ok: true, content: ['x', 'y', 'z'] },
  { ok: true, content: 'plain' },
];

describe('refOf', () => {
  it('reads "$ref:<path>" strings and { $ref } objects, nothing else', () => {
    expect(refOf('$ref:evidence.s1.items[0]')).toBe('evidence.s1.items[0]');
    expect(refOf({ $ref: 'evidence.s1' })).toBe('evidence.s1');
    expect(refOf('$ref:')).toBeUndefined();
    expect(refOf(' $ref:a')).toBeUndefined();
    expect(refOf('$ref:a b')).toBeUndefined();
    expect(refOf(`$ref:${'a'.repeat(256)}`)).toBe('a'.repeat(256));
    expect(refOf(`$ref:${'a'.repeat(257)}`)).toBeUndefined();
    expect(refOf({ $ref: 'a', other: 1 })).toBeUndefined();
    expect(refOf({ other: 'a' })).toBeUndefined();
    expect(refOf({ $ref: 3 })).toBeUndefined();
    expect(refOf({ $ref: 'a b' })).toBeUndefined();
    expect(refOf(['$ref:a'])).toBeUndefined();
    expect(refOf(null)).toBeUndefined();
    expect(refOf(7)).toBeUndefined();
  });
});

describe('findPlaceholders', () => {
  it('finds every kind, at any depth, in document order', () => {
    expect(
      findPlaceholders({
        a: 'x ${step2.content.items[*].name} y ${ FILLER:folder }',
        b: ['${RUNTIME:now}', { c: '${SLOT:path_1}', d: '$ref:memory.k' }],
        e: '${step1.content.items|count}',
        f: '${step3}',
        g: 42,
      }),
    ).toEqual([
      {
        text: '${step2.content.items[*].name}',
        kind: 'step',
        step: 2,
        path: ['content', 'items', '*', 'name'],
        count: false,
      },
      { text: '${ FILLER:folder }', kind: 'filler', name: 'folder' },
      { text: '${RUNTIME:now}', kind: 'runtime', name: 'now' },
      { text: '${SLOT:path_1}', kind: 'slot', name: 'path_1' },
      { text: '$ref:memory.k', kind: 'ref', name: 'memory.k' },
      {
        text: '${step1.content.items|count}',
        kind: 'step',
        step: 1,
        path: ['content', 'items'],
        count: true,
      },
      { text: '${step3}', kind: 'step', step: 3, path: [], count: false },
    ]);
  });

  it('reads index paths and ignores what is not a placeholder', () => {
    expect(findPlaceholders('${step1.content.items[1].name}')[0]).toMatchObject({
      path: ['content', 'items', '1', 'name'],
    });
    expect(findPlaceholders('$step1 ${step} ${FILLER:} ${RUNTIME:Now} ${SLOT:path} {step1}')).toEqual([]);
  });

  it('visits a shared object once and survives cycles', () => {
    const shared = { p: '${FILLER:x}' };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic.self = cyclic;
    expect(findPlaceholders(cyclic)).toEqual([{ text: '${FILLER:x}', kind: 'filler', name: 'x' }]);
  });
});

describe('followPath', () => {
  const root = {
    items: [
      { name: 'a', tags: ['t'] },
      { name: 'b', tags: [] },
    ],
    text: 'abc',
    nothing: null,
  };

  it('follows fields and indexes, projects with *, and counts lists and strings with length', () => {
    expect(followPath(root, ['items', '1', 'name'], 'p')).toBe('b');
    expect(followPath(root, ['items', '*', 'name'], 'p')).toEqual(['a', 'b']);
    expect(followPath(root, ['items', '*', 'tags', 'length'], 'p')).toEqual([1, 0]);
    expect(followPath(root, ['items', 'length'], 'p')).toBe(2);
    expect(followPath(root, ['text', 'length'], 'p')).toBe(3);
    expect(followPath(root, [], 'p')).toBe(root);
    expect(followPath({ length: 9 }, ['length'], 'p')).toBe(9);
  });

  it('refuses a projection over something that is not a list', () => {
    const error = thrown(() => followPath(root, ['text', '*'], '${step1.text[*]}'));
    expect(error).toMatchObject({
      placeholder: '${step1.text[*]}',
      message: '${step1.text[*]}: [*] needs a list',
    });
  });

  it('names the path up to the missing field', () => {
    expect(thrown(() => followPath(root, ['items', '0', 'size', 'x'], 'p')).message).toBe(
      'p: no field "items.0.size"',
    );
    expect(thrown(() => followPath(root, ['nothing', 'x'], 'p')).message).toBe('p: no field "nothing.x"');
    expect(thrown(() => followPath(root, ['text', 'x'], 'p')).message).toBe('p: no field "text.x"');
    expect(thrown(() => followPath(root, ['toString'], 'p')).message).toBe('p: no field "toString"');
    expect(thrown(() => followPath(5, ['length'], 'p')).message).toBe('p: no field "length"');
  });
});

describe('resolvePlaceholders', () => {
  const scope = {
    observations,
    fillers: { folder: 'Trash' },
    runtime: { now: '2026-05-02T10:00:00Z' },
    slots: { path_1: 'notes/a.md' },
  };

  it('keeps the type of a placeholder that is the whole string, spaces around it included', () => {
    expect(resolvePlaceholders('${step1.content.items}', scope)).toEqual([
      { name: 'a.md' },
      { name: 'b.md' },
    ]);
    expect(resolvePlaceholders('  ${step1.content.total}  ', scope)).toBe(2);
    expect(resolvePlaceholders('${step1.total}', scope)).toBe(2);
    expect(resolvePlaceholders('${step1.ok}', scope)).toBe(true);
    expect(resolvePlaceholders('${step3}', scope)).toEqual(observations[2]);
    expect(resolvePlaceholders('${step3.content[1]}', scope)).toBe('y');
  });

  it('counts lists, strings and single values', () => {
    expect(resolvePlaceholders('${step1.content.items|count}', scope)).toBe(2);
    expect(resolvePlaceholders('${step1.text|count}', scope)).toBe(5);
    expect(resolvePlaceholders('${step1.total|count}', scope)).toBe(1);
    expect(
      resolvePlaceholders('${step1.content.missing_ok|count}', {
        observations: [{ content: { missing_ok: 0 } }],
      }),
    ).toBe(0);
  });

  it('splices placeholders into longer text: strings as they are, lists of scalars joined, the rest as JSON', () => {
    expect(resolvePlaceholders('Moved to ${FILLER:folder} at ${RUNTIME:now}', scope)).toBe(
      'Moved to Trash at 2026-05-02T10:00:00Z',
    );
    expect(resolvePlaceholders('names: ${step1.content.items[*].name}', scope)).toBe('names: a.md, b.md');
    expect(resolvePlaceholders('n=${step1.total}', scope)).toBe('n=2');
    expect(resolvePlaceholders('first: ${step1.content.items[0]}', scope)).toBe('first: {"name":"a.md"}');
    expect(resolvePlaceholders('all: ${step1.content.items}', scope)).toBe(
      'all: [{"name":"a.md"},{"name":"b.md"}]',
    );
    expect(
      resolvePlaceholders('mixed: ${step1.content.x}', {
        observations: [{ content: { x: [1, null, 'a'] } }],
      }),
    ).toBe('mixed: 1, , a');
    expect(resolvePlaceholders('${SLOT:path_1} and ${SLOT:path_1}', scope)).toBe('notes/a.md and notes/a.md');
  });

  it('walks arrays and objects and leaves other values alone', () => {
    expect(
      resolvePlaceholders({ a: ['${FILLER:folder}', 3, null, true], b: { c: '${SLOT:path_1}' } }, scope),
    ).toEqual({
      a: ['Trash', 3, null, true],
      b: { c: 'notes/a.md' },
    });
    expect(resolvePlaceholders(5, scope)).toBe(5);
    expect(resolvePlaceholders(null, scope)).toBeNull();
  });

  it('reads run memory through refs, and refuses a ref with no run memory', () => {
    const calls: string[][] = [];
    const refs = (path: string, text: string) => {
      calls.push([path, text]);
      return { read: path };
    };
    expect(
      resolvePlaceholders({ a: '$ref:evidence.s1', b: { $ref: 'evidence.s2' } }, { observations, refs }),
    ).toEqual({
      a: { read: 'evidence.s1' },
      b: { read: 'evidence.s2' },
    });
    expect(calls).toEqual([
      ['evidence.s1', '$ref:evidence.s1'],
      ['evidence.s2', '$ref:evidence.s2'],
    ]);
    expect(thrown(() => resolvePlaceholders('$ref:evidence.s1', { observations }))).toMatchObject({
      placeholder: '$ref:evidence.s1',
      message: '$ref:evidence.s1: run memory is not available here',
    });
  });

  it('refuses what cannot be resolved with a typed error naming the placeholder', () => {
    expect(thrown(() => resolvePlaceholders('${step2.content}', scope))).toMatchObject({
      code: 'plan_reference',
      placeholder: '${step2.content}',
      message: '${step2.content}: step 2 has not produced a result',
    });
    expect(thrown(() => resolvePlaceholders('x ${step9}', scope)).message).toBe(
      '${step9}: step 9 has not produced a result',
    );
    expect(thrown(() => resolvePlaceholders('${FILLER:other}', scope)).message).toBe(
      '${FILLER:other}: the filler has no value',
    );
    expect(thrown(() => resolvePlaceholders('${FILLER:other}', { observations })).message).toBe(
      '${FILLER:other}: the filler has no value',
    );
    expect(thrown(() => resolvePlaceholders('${RUNTIME:later}', scope)).message).toBe(
      '${RUNTIME:later}: unknown runtime key',
    );
    expect(thrown(() => resolvePlaceholders('${RUNTIME:now}', { observations })).message).toBe(
      '${RUNTIME:now}: unknown runtime key',
    );
    expect(thrown(() => resolvePlaceholders('${SLOT:path_2}', scope)).message).toBe(
      '${SLOT:path_2}: the request has no value for this slot',
    );
    expect(thrown(() => resolvePlaceholders('${SLOT:path_1}', { observations })).message).toBe(
      '${SLOT:path_1}: the request has no value for this slot',
    );
    expect(thrown(() => resolvePlaceholders('${step4.content.x}', scope)).message).toBe(
      '${step4.content.x}: no field "content.x"',
    );
  });

  it('reads a field from the observation before its content', () => {
    const both = [{ ok: true, content: { ok: 'inner', only: 'content' } }];
    expect(resolvePlaceholders('${step1.ok}', { observations: both })).toBe(true);
    expect(resolvePlaceholders('${step1.only}', { observations: both })).toBe('content');
    expect(
      thrown(() => resolvePlaceholders('${step1.only}', { observations: [{ content: 'text' }] })).message,
    ).toBe('${step1.only}: no field "only"');
    expect(
      thrown(() => resolvePlaceholders('${step1.only}', { observations: [{ content: null }] })).message,
    ).toBe('${step1.only}: no field "only"');
  });

  it('refuses values nested deeper than the limit before walking them', () => {
    let deep: unknown = '${FILLER:folder}';
    for (let level = 0; level < MAX_JSON_DEPTH + 1; level++) deep = [deep];
    expect(thrown(() => resolvePlaceholders(deep, scope))).toMatchObject({
      placeholder: '(arguments)',
      message: `the arguments nest deeper than ${MAX_JSON_DEPTH} levels; placeholders are not resolved in them`,
    });
  });
});

describe('entriesOf and referencedStepNumbers', () => {
  it('takes a list content, the one list in an object content, or the content alone', () => {
    expect(entriesOf({ content: [1, 2] })).toEqual([1, 2]);
    expect(entriesOf({ content: { items: [3], total: 1 } })).toEqual([3]);
    expect(entriesOf({ content: { a: [1], b: [2] } })).toEqual([{ a: [1], b: [2] }]);
    expect(entriesOf({ content: { a: 1 } })).toEqual([{ a: 1 }]);
    expect(entriesOf({ content: 'x' })).toEqual(['x']);
    expect(entriesOf({ content: null })).toEqual([null]);
    expect(entriesOf({})).toEqual([]);
  });

  it('lists the steps a step depends on, sorted and once each', () => {
    expect(
      referencedStepNumbers({
        from_step: 3,
        a: '${step2.content} ${step10.x}',
        b: ['${step2.y}', '${FILLER:z}'],
      }),
    ).toEqual([2, 3, 10]);
    expect(referencedStepNumbers({ from_step: '3' })).toEqual([]);
  });
});

describe('PlanReferenceError', () => {
  it('is recognised by its marker, not by the class alone', () => {
    const error = new PlanReferenceError('${x}', 'broken');
    expect(PlanReferenceError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'PlanReferenceError', code: 'plan_reference', placeholder: '${x}' });
    expect(PlanReferenceError.isInstance(new Error('x'))).toBe(false);
  });
});
