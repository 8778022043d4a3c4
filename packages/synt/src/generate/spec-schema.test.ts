import { describe, expect, it } from 'vitest';
import { CSV_SUM_SPEC } from '../test/index.ts';
import { checkSpecification, readModelJson, specificationSchema } from './spec-schema.ts';

const check = (spec: unknown, existing: string[] = []) => {
  const parsed = specificationSchema.safeParse(spec);
  if (!parsed.success) return `shape: ${parsed.error.issues[0]?.path.join('.')}`;
  const checked = checkSpecification(parsed.data, { existing: new Set(existing) });
  return checked.ok ? 'ok' : checked.reason;
};

describe('the specification a model drafts', () => {
  it('is read from the answer (bare or fenced) through its schema', () => {
    expect(
      readModelJson(`\`\`\`json\n${JSON.stringify(CSV_SUM_SPEC)}\n\`\`\``, specificationSchema),
    ).toMatchObject({
      ok: true,
      value: { name: 'csv_sum' },
    });
    expect(readModelJson('the spec is below', specificationSchema)).toEqual({
      ok: false,
      reason: 'the answer is not one JSON object',
    });
    expect(readModelJson(`${'['.repeat(80)}${']'.repeat(80)}`, specificationSchema)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('nests deeper'),
    });
    expect(
      readModelJson(JSON.stringify({ ...CSV_SUM_SPEC, exec: ['sh'] }), specificationSchema),
    ).toMatchObject({
      ok: false,
    });
  });

  it('is checked beyond its shape', () => {
    expect(check(CSV_SUM_SPEC)).toBe('ok');
    expect(check(CSV_SUM_SPEC, ['csv_sum'])).toContain('exists already');
    expect(check({ ...CSV_SUM_SPEC, error_classes: ['PolicyViolation'] })).toContain("the host's to emit");
    expect(check({ ...CSV_SUM_SPEC, error_classes: ['Timeout', 'ColumnNotFound'] })).toContain(
      'a runtime class',
    );
    expect(
      check({ ...CSV_SUM_SPEC, profile: { ...CSV_SUM_SPEC.profile, fs_read: ['/etc', 'notes'] } }),
    ).toContain('profile:');
    expect(
      check({ ...CSV_SUM_SPEC, profile: { ...CSV_SUM_SPEC.profile, network: ['$CREDENTIAL:mail'] } }),
    ).toContain('offered no credentials');
    expect(
      check({ ...CSV_SUM_SPEC, birth_tests: CSV_SUM_SPEC.birth_tests.filter((test) => !test.expect.ok) }),
    ).toContain('at least one case must succeed');
    expect(
      check({ ...CSV_SUM_SPEC, birth_tests: [{ ...CSV_SUM_SPEC.birth_tests[0]!, args: { path: 'x' } }] }),
    ).toContain('unknown argument path');
    expect(
      check({
        ...CSV_SUM_SPEC,
        birth_tests: [{ ...CSV_SUM_SPEC.birth_tests[0]!, files: { '../escape': 'x' } }],
      }),
    ).toMatch(/^shape: birth_tests/);
  });
});
