import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

describe('text_stats birth', () => {
  it('counts lines, words, characters and bytes of accented text', async () => {
    const result = await executor.invoke({ text: 'Perché no?\n\nÈ già tardi.\n' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        lines: 3,
        words: 5,
        chars: 25,
        bytes: 28,
        blank_lines: 1,
        longest_line: 12,
        head: [],
        tail: [],
      },
    });
  });

  it('returns the first and last lines, counting a final line without newline', async () => {
    const text = ['one', 'two', 'three', 'four', 'five'].join('\r\n');
    const result = await executor.invoke({ text, head: 2, tail: 2 });
    expect(result).toMatchObject({
      ok: true,
      content: { lines: 5, head: ['one', 'two'], tail: ['four', 'five'] },
    });
  });

  it('handles empty text and emoji', async () => {
    expect(await executor.invoke({ text: '' })).toMatchObject({
      ok: true,
      content: { lines: 0, words: 0, chars: 0, bytes: 0 },
    });
    expect(await executor.invoke({ text: '👋🏽 hi' })).toMatchObject({
      ok: true,
      content: { words: 2, chars: 5, bytes: 11 },
    });
  });

  it('rejects a missing text with InvalidInput', async () => {
    expect(await executor.invoke({ head: 3 })).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
  });
});
