import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';

// The modules where a surviving mutant is a security or correctness hole (see the root README).
export default metnosStrykerConfig({
  mutate: [
    'src/guard.ts',
    'src/paths.ts',
    'src/commands.ts',
    'src/shell-words.ts',
    'src/rules-judge.ts',
    'src/call-hash.ts',
    'src/approval-store.ts',
  ],
  vitestConfig: 'vitest.mutation.config.ts',
});
