import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';

// The modules where a surviving mutant is a security hole (see the root README).
export default metnosStrykerConfig({
  mutate: [
    'src/policy.ts',
    'src/forbidden.ts',
    'src/resolve-path.ts',
    'src/domains.ts',
    'src/bwrap-flags.ts',
  ],
  vitestConfig: 'vitest.mutation.config.ts',
});
