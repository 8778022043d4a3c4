// The `warm-pool` project (vitest.config.ts): every sandbox runner the attack
// suites create gets the warm pool in `wait` mode, so each call is handed to a
// process started ahead of it (its result's notes say so) instead of a cold one.
// After each file, the calls that started a process are counted: every one of
// them must have come from a warm process.
import { afterAll, expect, vi } from 'vitest';

const WARM_NOTE = 'started ahead of its call (warm pool); one process, one call';
const seen = { warm: 0, cold: [] as string[] };

vi.mock(import('../src/runner.ts'), async (importOriginal) => {
  const actual = await importOriginal();
  return {
    ...actual,
    createSandboxRunner: (settings: Parameters<typeof actual.createSandboxRunner>[0] = {}) => {
      const runner = actual.createSandboxRunner({ pool: { onEmpty: 'wait' }, ...settings });
      return {
        ...runner,
        async run(request) {
          const report = await runner.run(request);
          const notes = report.result.isolation?.notes ?? [];
          if (notes.includes(WARM_NOTE)) seen.warm++;
          else if (report.exit !== 'policy' && runner.tier !== 'none' && runner.tier !== 'basic')
            seen.cold.push(
              `${request.executor.name}: ${report.result.ok ? 'ok' : report.result.error.class}`,
            );
          return report;
        },
      } satisfies typeof runner;
    },
  };
});

afterAll(() => {
  expect(seen.cold, 'calls that started a cold process in the warm-pool project').toEqual([]);
});
