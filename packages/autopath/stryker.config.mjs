import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';

// The recognizer's decision rule: serve or miss, and how calibration sets the rule.
export default metnosStrykerConfig({
  mutate: ['src/recognizer.ts'],
  vitestConfig: 'vitest.mutation.config.ts',
});
