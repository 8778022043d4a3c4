import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/autopath db:generate -- --name=<what-changed>` diffs
 * src/stores/schema.ts against the last snapshot in drizzle/meta and writes
 * the next migration; the stores run them when they open a file.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/stores/schema.ts',
  out: './drizzle',
  migrations: { table: '__drizzle_migrations_autopath' },
});
