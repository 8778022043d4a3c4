import { describe, expect, it } from 'vitest';
import { SUPPORTED_KEYWORDS, unsupportedKeywords, validate } from '../runtime/json-schema.mjs';
import { hostValidator } from './invoke.ts';
import type { VerifiedExecutor } from './verify.ts';

/** Definitions every case's schema may refer to. */
const shared = {
  Name: { type: 'string', maxLength: 3 },
  Obj: { type: 'object', properties: { a: { type: 'integer', minimum: 10 } } },
  'a/b': { type: 'boolean' },
  'a b': { type: 'null' },
};

/** [label, the Input schema, values to check] — every schema is one the loader accepts. */
const cases: Array<[string, unknown, unknown[]]> = [
  ['string type', { type: 'string' }, ['a', '', 1, null, [], {}, true]],
  ['integer type', { type: 'integer' }, [1, -0, 1.5, '1', 1e21, null]],
  ['number range', { type: 'number', minimum: 0, exclusiveMaximum: 10 }, [0, 9.99, 10, -1, '5']],
  ['exclusive minimum, maximum', { exclusiveMinimum: 0, maximum: 1 }, [0, 0.1, 1, 1.01, 'x']],
  ['type list', { type: ['string', 'null'] }, [null, 's', 0, false]],
  [
    'enum',
    { enum: [1, 'a', null, { x: [1, 2] }, [1, 2]] },
    [1, 'a', null, { x: [1, 2] }, { x: [2, 1] }, [1, 2], [2, 1], 2, '1'],
  ],
  [
    'const object',
    { const: { a: 1, b: [true] } },
    [{ b: [true], a: 1 }, { a: 1 }, { a: 1, b: [true], c: 0 }, { a: 1, b: [false] }],
  ],
  ['const null', { const: null }, [null, 0, '', false]],
  ['const zero', { const: 0 }, [0, -0, false, null, '0']],
  [
    'string length in code points',
    { type: 'string', minLength: 2, maxLength: 3 },
    ['a', 'ab', 'abcd', '😀😀', '😀', 'é́'],
  ],
  ['unicode pattern', { type: 'string', pattern: '^\\p{Lu}' }, ['Ábc', 'abc', '']],
  ['unanchored pattern ignores non-strings', { pattern: 'b' }, ['abc', 'xyz', 12, null]],
  [
    'closed object',
    { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false },
    [{ a: 'x' }, {}, { a: 'x', b: 1 }, { a: 1 }, [], 'a'],
  ],
  [
    'additionalProperties schema',
    { properties: { a: {} }, additionalProperties: { type: 'number' } },
    [{ a: 's', b: 1 }, { b: 's' }, {}],
  ],
  ['required alone', { required: ['a'] }, [{ a: null }, {}, 'str', ['a']]],
  [
    'array bounds and items',
    { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 2 },
    [[], [1], [1, 2, 3], [1, 'a'], {}],
  ],
  ['array keywords ignore non-arrays', { items: { type: 'string' }, maxItems: 1 }, [{ 0: 1 }, 'abc', [1]]],
  ['boolean subschemas', { properties: { never: false, always: true } }, [{ never: 1 }, { always: 1 }, {}]],
  ['oneOf', { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 1 }] }, [0, 2, 0.5, 1.5]],
  ['anyOf', { anyOf: [{ type: 'string' }, { type: 'null' }] }, ['s', null, 1]],
  ['allOf', { allOf: [{ minimum: 1 }, { maximum: 3 }] }, [0, 2, 4]],
  ['not', { not: { type: 'string' } }, ['s', 1, null]],
  ['local $ref', { $ref: '#/definitions/Name' }, ['abc', 'abcd', 1]],
  ['$ref with siblings', { $ref: '#/definitions/Name', minLength: 2 }, ['a', 'ab', 'abcd']],
  ['$ref into a nested schema', { $ref: '#/definitions/Obj/properties/a' }, [10, 9, 'x']],
  ['$ref with an escaped slash', { $ref: '#/definitions/a~1b' }, [true, 'true']],
  ['$ref with a percent-encoded space', { $ref: '#/definitions/a%20b' }, [null, 0]],
  ['$ref to $defs', { $ref: '#/$defs/Flag' }, [true, 1]],
  [
    'recursive $ref',
    { type: 'object', properties: { child: { $ref: '#/definitions/Input' } }, additionalProperties: false },
    [{}, { child: { child: {} } }, { child: { x: 1 } }, { child: 1 }],
  ],
  [
    '$ref to the whole document',
    { type: 'object', properties: { anything: { $ref: '#' } } },
    [{ anything: 1 }, { anything: { deep: [1] } }],
  ],
  [
    'annotations are not assertions',
    {
      title: 'T',
      description: 'D',
      default: 'x',
      examples: ['y'],
      format: 'email',
      $comment: 'c',
      type: 'string',
    },
    ['not an email', 3],
  ],
];

function host(schema: Record<string, unknown>, key: string) {
  const executor = {
    manifest: {
      contract: {
        input_schema: 'schema.json#/definitions/Input',
        output_schema: 'schema.json#/definitions/Input',
      },
    },
    digests: { schema: `case:${key}` },
    schema,
  } as unknown as VerifiedExecutor;
  return hostValidator(executor, 'input');
}

describe('the child-side JSON Schema validator', () => {
  it('agrees with the host (Ajv) on every case of the supported subset', () => {
    const disagreements: string[] = [];
    cases.forEach(([label, input, values], index) => {
      const document = JSON.parse(
        JSON.stringify({ definitions: { ...shared, Input: input }, $defs: { Flag: { type: 'boolean' } } }),
      );
      expect([label, unsupportedKeywords(document)]).toEqual([label, []]);
      const ajv = host(document, String(index));
      for (const value of values) {
        const hostValid = ajv(value);
        const childErrors = validate(document.definitions.Input, value, document);
        if (hostValid !== (childErrors.length === 0)) {
          disagreements.push(
            `${label}: ${JSON.stringify(value)} host=${hostValid} child=${JSON.stringify(childErrors)}`,
          );
        }
      }
    });
    expect(disagreements).toEqual([]);
  });

  it('explains what is wrong and where', () => {
    const schema = {
      type: 'object',
      properties: { path: { type: 'string' }, lines: { type: 'integer', minimum: 1 } },
      required: ['path'],
      additionalProperties: false,
    };
    expect(validate(schema, { lines: 0, extra: 1 })).toEqual([
      '/: missing required property "path"',
      '/lines: must be >= 1',
      '/: unexpected property "extra"',
    ]);
    expect(validate(schema, 'x')).toEqual(['/: expected object, got string']);
    expect(validate({ $ref: '#/definitions/missing' }, 1)).toEqual([
      '/: unresolvable $ref #/definitions/missing',
    ]);
    expect(validate({ $ref: '#/__proto__' }, 1)).toEqual(['/: unresolvable $ref #/__proto__']);
  });

  it('lists keywords outside the subset with where they are', () => {
    expect(
      unsupportedKeywords({
        definitions: {
          Input: { type: 'object', properties: { a: { uniqueItems: true } }, if: {} },
          Output: { items: { contains: {} } },
        },
        patternProperties: {},
      }),
    ).toEqual([
      '/definitions/Input/properties/a/uniqueItems',
      '/definitions/Input/if',
      '/definitions/Output/items/contains',
      '/patternProperties',
    ]);
    expect(SUPPORTED_KEYWORDS.has('$ref')).toBe(true);
  });
});
