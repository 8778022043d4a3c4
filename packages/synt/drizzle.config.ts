import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/synt db:generate -- --name=<what-changed>` diffs
 * src/store-schema.ts against the last snapshot in drizzle/meta and writes the
 * next migration; the synt's store runs them when it opens a file.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/store-schema.ts',
  out: './drizzle',
  migrations: { table: '__drizzle_migrations_synt' },
});
