import { describe, expect, it } from 'vitest';
import { belowThreshold, formatTable, type MutationReport, moduleScores, regressions } from './mutation.ts';

function mutants(counts: Record<string, number>): Array<{ status: string }> {
  return Object.entries(counts).flatMap(([status, count]) =>
    Array.from({ length: count }, () => ({ status })),
  );
}

const report: MutationReport = {
  files: {
    'src/guard.ts': { mutants: mutants({ Killed: 80, Timeout: 5, Survived: 10, NoCoverage: 5 }) },
    'src/call-hash.ts': { mutants: mutants({ Killed: 40, Survived: 10, CompileError: 3, Ignored: 7 }) },
    'src/empty.ts': { mutants: mutants({ Ignored: 2 }) },
  },
};

describe('mutation scores', () => {
  it('count killed and timed-out mutants over the valid ones, per module, sorted by name', () => {
    expect(moduleScores('vaglio', report)).toEqual([
      { module: 'vaglio/src/call-hash.ts', killed: 40, timedOut: 0, survived: 10, noCoverage: 0, score: 80 },
      { module: 'vaglio/src/empty.ts', killed: 0, timedOut: 0, survived: 0, noCoverage: 0, score: 100 },
      { module: 'vaglio/src/guard.ts', killed: 80, timedOut: 5, survived: 10, noCoverage: 5, score: 85 },
    ]);
  });

  it('fail the modules below the threshold and mark them in the table', () => {
    const scores = moduleScores('vaglio', report);
    expect(belowThreshold(scores, 85).map((row) => row.module)).toEqual(['vaglio/src/call-hash.ts']);
    const table = formatTable(scores, 85).split('\n');
    expect(table[0]).toMatch(/^\| module +\| +score \| killed \| timeout \| survived \| no cov \| +\|$/);
    expect(table[2]).toContain('| vaglio/src/call-hash.ts |  80.0% |');
    expect(table[2]?.endsWith('| ✗ |')).toBe(true);
    expect(table[4]?.endsWith('|   |')).toBe(true);
  });
});

describe('regressions against the committed baseline', () => {
  const at = (line: number, status: string, replacement = 'true') => ({
    status,
    mutatorName: 'ConditionalExpression',
    replacement,
    location: { start: { line, column: 5 }, end: { line, column: 9 } },
  });
  const baseline: MutationReport = {
    files: {
      'src/call-hash.ts': { source: 'v1', mutants: [at(3, 'Killed'), at(4, 'Timeout'), at(5, 'Survived')] },
      'src/guard.ts': { source: 'g1', mutants: [at(7, 'Killed')] },
    },
  };

  it('names every mutant the baseline caught that now survives or is no longer covered', () => {
    const now: MutationReport = {
      files: {
        'src/call-hash.ts': {
          source: 'v1',
          mutants: [at(3, 'Survived'), at(4, 'NoCoverage'), at(5, 'Survived')],
        },
        'src/guard.ts': { source: 'g1', mutants: [at(7, 'Killed')] },
      },
    };
    expect(regressions('vaglio', baseline, now)).toEqual([
      'vaglio/src/call-hash.ts:3:5 ConditionalExpression',
      'vaglio/src/call-hash.ts:4:5 ConditionalExpression',
    ]);
  });

  it('leaves out mutants of changed code and other replacements: those are new mutants, judged by the score', () => {
    const now: MutationReport = {
      files: {
        'src/call-hash.ts': { source: 'v2', mutants: [at(3, 'Survived')] },
        'src/guard.ts': { source: 'g1', mutants: [at(7, 'Survived', 'false')] },
        'src/new.ts': { source: 'n1', mutants: [at(1, 'Survived')] },
      },
    };
    expect(regressions('vaglio', baseline, now)).toEqual([]);
  });
});
