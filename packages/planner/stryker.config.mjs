import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';

// The engine modules where a surviving mutant is a correctness hole (see the root README):
// step references, slots, the validator and the plan grammar.
export default metnosStrykerConfig({
  mutate: [
    'src/engine/references.ts',
    'src/engine/slots.ts',
    'src/engine/validator.ts',
    'src/engine/plan.ts',
  ],
  vitestConfig: 'vitest.mutation.config.ts',
});
