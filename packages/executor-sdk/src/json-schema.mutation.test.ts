import { describe, expect, it } from 'vitest';
import { SUPPORTED_KEYWORDS, unsupportedKeywords, validate } from '../runtime/json-schema.mjs';

describe("the harness's schema checks name each problem and where it is", () => {
  it('supports exactly the keywords the loader lets through', () => {
    expect([...SUPPORTED_KEYWORDS].sort()).toEqual(
      [
        '$schema',
        '$id',
        '$ref',
        '$comment',
        'title',
        'description',
        'default',
        'examples',
        'format',
        'definitions',
        '$defs',
        'type',
        'properties',
        'required',
        'additionalProperties',
        'items',
        'enum',
        'const',
        'minimum',
        'maximum',
        'exclusiveMinimum',
        'exclusiveMaximum',
        'minLength',
        'maxLength',
        'pattern',
        'minItems',
        'maxItems',
        'oneOf',
        'anyOf',
        'allOf',
        'not',
      ].sort(),
    );
  });

  it('types: every JSON type, integers as numbers, type lists', () => {
    expect(validate({ type: 'number' }, 3)).toEqual([]);
    expect(validate({ type: 'integer' }, 3.5)).toEqual(['/: expected integer, got number']);
    expect(validate({ type: 'null' }, [])).toEqual(['/: expected null, got array']);
    expect(validate({ type: 'array' }, null)).toEqual(['/: expected array, got null']);
    expect(validate({ type: 'boolean' }, {})).toEqual(['/: expected boolean, got object']);
    expect(validate({ type: ['string', 'null'] }, 1)).toEqual(['/: expected string or null, got integer']);
    expect(validate({ type: 'string', minLength: 5 }, 1)).toEqual(['/: expected string, got integer']);
  });

  it('enum and const compare deeply', () => {
    expect(validate({ enum: [1, { a: [1] }] }, 2)).toEqual(['/: expected one of [1,{"a":[1]}]']);
    expect(validate({ enum: [{ a: [1] }] }, { a: [1] })).toEqual([]);
    expect(validate({ enum: [{ a: [1] }] }, { a: [1], b: 2 })).toEqual(['/: expected one of [{"a":[1]}]']);
    expect(validate({ enum: [{ a: 1 }] }, { b: 1 })).toEqual(['/: expected one of [{"a":1}]']);
    expect(validate({ enum: [[1]] }, { 0: 1 })).toEqual(['/: expected one of [[1]]']);
    expect(validate({ const: [1, 2] }, [1, 3])).toEqual(['/: expected [1,2]']);
    expect(validate({ const: null }, {})).toEqual(['/: expected null']);
    expect(validate({ const: { a: null } }, { a: null })).toEqual([]);
  });

  it('number bounds, inclusive and exclusive', () => {
    const schema = { minimum: 1, maximum: 3 };
    expect(validate(schema, 1)).toEqual([]);
    expect(validate(schema, 3)).toEqual([]);
    expect(validate(schema, 0)).toEqual(['/: must be >= 1']);
    expect(validate(schema, 4)).toEqual(['/: must be <= 3']);
    const exclusive = { exclusiveMinimum: 1, exclusiveMaximum: 3 };
    expect(validate(exclusive, 2)).toEqual([]);
    expect(validate(exclusive, 1)).toEqual(['/: must be > 1']);
    expect(validate(exclusive, 3)).toEqual(['/: must be < 3']);
    expect(validate(schema, 'a')).toEqual([]);
  });

  it('string lengths in code points and unicode patterns', () => {
    expect(validate({ minLength: 2 }, '😀')).toEqual(['/: shorter than 2']);
    expect(validate({ minLength: 2 }, 'ab')).toEqual([]);
    expect(validate({ maxLength: 2 }, 'abc')).toEqual(['/: longer than 2']);
    expect(validate({ maxLength: 2 }, '😀😀')).toEqual([]);
    expect(validate({ pattern: '^\\p{Lu}' }, 'abc')).toEqual(['/: does not match ^\\p{Lu}']);
    expect(validate({ pattern: '^\\p{Lu}' }, 'Abc')).toEqual([]);
    expect(validate({ minLength: 9 }, 5)).toEqual([]);
  });

  it('array bounds and items, with the index in the path', () => {
    expect(validate({ minItems: 2 }, [1])).toEqual(['/: fewer than 2 items']);
    expect(validate({ maxItems: 1 }, [1, 2])).toEqual(['/: more than 1 items']);
    expect(validate({ minItems: 1, maxItems: 1 }, [1])).toEqual([]);
    expect(validate({ items: { type: 'string' } }, ['a', 2, 'c', 4])).toEqual([
      '/1: expected string, got integer',
      '/3: expected string, got integer',
    ]);
    expect(validate({ properties: { list: { items: { type: 'string' } } } }, { list: [1] })).toEqual([
      '/list/0: expected string, got integer',
    ]);
  });

  it('objects: required, properties, closed and schema-valued additional properties', () => {
    const schema = {
      properties: {
        a: { type: 'string' },
        nested: { properties: { b: { type: 'integer' } }, additionalProperties: false },
      },
      required: ['a', 'c'],
      additionalProperties: { type: 'number' },
    };
    expect(validate(schema, { a: 1, nested: { b: 'x', z: 1 }, extra: 's', fine: 2 })).toEqual([
      '/: missing required property "c"',
      '/a: expected string, got integer',
      '/nested/b: expected integer, got string',
      '/nested: unexpected property "z"',
      '/extra: expected number, got string',
    ]);
    expect(validate({ required: ['toString'] }, {})).toEqual(['/: missing required property "toString"']);
    expect(validate({ properties: { toString: { type: 'string' } } }, { toString: 1 })).toEqual([
      '/toString: expected string, got integer',
    ]);
    expect(validate({ additionalProperties: false }, { a: 1 })).toEqual(['/: unexpected property "a"']);
    expect(validate({ additionalProperties: true }, { a: 1 })).toEqual([]);
    expect(validate({ required: ['a'] }, [])).toEqual([]);
  });

  it('boolean schemas', () => {
    expect(validate(false, 1)).toEqual(['/: no value is allowed here']);
    expect(validate({ properties: { a: false } }, { a: 1 })).toEqual(['/a: no value is allowed here']);
    expect(validate(true, 1)).toEqual([]);
  });

  it('combinators', () => {
    const oneOf = { oneOf: [{ type: 'integer' }, { minimum: 1 }] };
    expect(validate(oneOf, 0)).toEqual([]);
    expect(validate(oneOf, 2)).toEqual(['/: must match exactly one of oneOf']);
    expect(validate(oneOf, 0.5)).toEqual(['/: must match exactly one of oneOf']);
    expect(validate({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 1)).toEqual([
      '/: matches none of anyOf',
    ]);
    expect(validate({ anyOf: [{ type: 'string' }, { type: 'null' }] }, null)).toEqual([]);
    expect(validate({ allOf: [{ minimum: 1 }, { maximum: 3 }] }, 5)).toEqual(['/: must be <= 3']);
    expect(validate({ not: { type: 'string' } }, 's')).toEqual(['/: matches a forbidden schema']);
    expect(validate({ not: { type: 'string' } }, 1)).toEqual([]);
  });

  it('$ref: local pointers, escapes, the whole document, and refusals', () => {
    const root = {
      definitions: {
        Name: { type: 'string' },
        'a/b': { type: 'boolean' },
        'a~b': { type: 'null' },
        'a b': { const: 1 },
      },
    };
    expect(validate({ $ref: '#/definitions/Name' }, 1, root)).toEqual(['/: expected string, got integer']);
    expect(validate({ $ref: '#/definitions/a~1b' }, 1, root)).toEqual(['/: expected boolean, got integer']);
    expect(validate({ $ref: '#/definitions/a~0b' }, 1, root)).toEqual(['/: expected null, got integer']);
    expect(validate({ $ref: '#/definitions/a%20b' }, 2, root)).toEqual(['/: expected 1']);
    expect(validate({ $ref: '#' }, 1, { type: 'string' })).toEqual(['/: expected string, got integer']);
    expect(validate({ $ref: 'other.json#/x' }, 1, root)).toEqual(['/: unresolvable $ref other.json#/x']);
    expect(validate({ $ref: '#/definitions/%E0' }, 1, root)).toEqual([
      '/: unresolvable $ref #/definitions/%E0',
    ]);
    expect(validate({ $ref: '#/definitions/Name/type/x' }, 1, root)).toEqual([
      '/: unresolvable $ref #/definitions/Name/type/x',
    ]);
    expect(validate({ $ref: '#/definitions/Name', maxLength: 1 }, 'ab', root)).toEqual(['/: longer than 1']);
  });

  it('stops at 64 levels of schema', () => {
    const loop = { properties: { next: { $ref: '#' } } };
    let value: unknown = {};
    for (let level = 0; level < 40; level++) value = { next: value };
    expect(validate(loop, value)).toEqual([`/${Array(33).fill('next').join('/')}: schema nesting too deep`]);
    let shallow: unknown = {};
    for (let level = 0; level < 32; level++) shallow = { next: shallow };
    expect(validate(loop, shallow)).toEqual([]);
  });
});

describe('unsupportedKeywords', () => {
  it('walks every place a subschema can sit', () => {
    expect(
      unsupportedKeywords({
        $defs: { A: { if: {} } },
        definitions: { B: { dependentSchemas: {} } },
        properties: { c: { else: {} } },
        items: { contains: {} },
        additionalProperties: { propertyNames: {} },
        not: { uniqueItems: true },
        oneOf: [{ dependentRequired: {} }],
        anyOf: [{}, { minContains: 1 }],
        allOf: [{ prefixItems: [] }],
        required: ['x'],
      }),
    ).toEqual([
      '/$defs/A/if',
      '/definitions/B/dependentSchemas',
      '/properties/c/else',
      '/items/contains',
      '/additionalProperties/propertyNames',
      '/not/uniqueItems',
      '/oneOf/0/dependentRequired',
      '/anyOf/1/minContains',
      '/allOf/0/prefixItems',
    ]);
  });

  it('passes over non-objects and empty containers', () => {
    expect(unsupportedKeywords(true)).toEqual([]);
    expect(unsupportedKeywords(null)).toEqual([]);
    expect(unsupportedKeywords({ properties: null, oneOf: null, items: true })).toEqual([]);
    expect(unsupportedKeywords({ enum: [{ if: 1 }], const: { contains: 1 }, default: { else: 1 } })).toEqual(
      [],
    );
  });
});
