import { describe, expect, it } from 'vitest';
import { unifiedDiff } from './diff.ts';

describe('unifiedDiff', () => {
  it('shows a new file as every line added', () => {
    expect(unifiedDiff('', 'a\nb\n', { from: '/dev/null', to: 'b/x.ts' })).toBe(
      '--- /dev/null\n+++ b/x.ts\n@@ -0,0 +1,2 @@\n+a\n+b',
    );
  });

  it('shows a change with its context, in hunks', () => {
    const before = Array.from({ length: 20 }, (_, index) => `line ${index}`).join('\n');
    const after = before.replace('line 2', 'line two').replace('line 17', 'line seventeen');
    const diff = unifiedDiff(before, after, { from: 'a', to: 'b' });
    expect(diff.match(/^@@/gm)).toHaveLength(2);
    expect(diff).toContain('-line 2\n+line two');
    expect(diff).toContain('-line 17\n+line seventeen');
    expect(unifiedDiff('same\n', 'same\n', { from: 'a', to: 'b' })).toContain('(no change)');
  });
});
