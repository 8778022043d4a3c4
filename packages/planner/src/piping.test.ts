import { describe, expect, it } from 'vitest';
import { hasReferences, PipingError, referencedSteps, resolveReferences } from './piping.ts';

const observations = [
  { ok: true, content: 'body text', metadata: { path: '/tmp/a', sizes: [3, 4] } },
  { ok: true, content: { bytes_written: 12, items: [{ id: 'x' }] } },
];

describe('resolveReferences', () => {
  it('keeps the type when the reference is the whole value', () => {
    expect(resolveReferences({ n: '{{step2.content.bytes_written}}' }, observations)).toEqual({ n: 12 });
    expect(resolveReferences({ m: '{{ step1.metadata }}' }, observations)).toEqual({
      m: observations[0]!.metadata,
    });
  });

  it('follows nested paths and array indices', () => {
    expect(resolveReferences('{{step1.metadata.sizes[1]}}', observations)).toBe(4);
    expect(resolveReferences('{{step2.content.items.0.id}}', observations)).toBe('x');
  });

  it('splices references inside longer strings', () => {
    expect(
      resolveReferences('saved to {{step1.metadata.path}} ({{step2.bytes_written}} bytes)', observations),
    ).toBe('saved to /tmp/a (12 bytes)');
  });

  it('reads a field of content directly', () => {
    expect(resolveReferences('{{step2.bytes_written}}', observations)).toBe(12);
  });

  it('throws a PipingError for a missing step or field', () => {
    expect(() => resolveReferences('{{step3.content}}', observations)).toThrowError(/only 2 step/);
    try {
      resolveReferences({ a: ['{{step1.nope}}'] }, observations);
      expect.unreachable();
    } catch (error) {
      expect(PipingError.isInstance(error)).toBe(true);
    }
  });

  it('finds references anywhere', () => {
    expect(hasReferences({ a: [{ b: 'x {{step2.y}}' }] })).toBe(true);
    expect(hasReferences({ a: 'plain' })).toBe(false);
    expect(referencedSteps({ a: '{{step3.x}} {{step1.y}}', b: ['{{step3.z}}'] })).toEqual([1, 3]);
  });
});
