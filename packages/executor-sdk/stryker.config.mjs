import { metnosStrykerConfig } from '../../tooling/stryker.preset.mjs';

// The modules where a surviving mutant is a security hole (see the root README). In
// catalog.ts only the load path is mutated: the ledger that refuses rollbacks, quarantine
// and admission (createCatalog up to load) and rehabilitation.
export default metnosStrykerConfig({
  mutate: [
    'src/signature.ts',
    'src/verify.ts',
    'src/verify-worker.ts',
    'src/signature-thread.ts',
    'src/catalog.ts:267-627',
    'src/catalog.ts:779-839',
    'src/profile.ts',
    'runtime/json-schema.mjs',
    'runtime/read-artefact.mjs',
    'runtime/statement.mjs',
    'runtime/plain-toml.mjs',
    'runtime/sodium-verify.mjs',
  ],
  vitestConfig: 'vitest.mutation.config.ts',
});
