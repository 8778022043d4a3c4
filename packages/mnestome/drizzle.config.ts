import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/mnestome db:generate -- --name=<what-changed>` diffs
 * src/schema.ts against the last snapshot in drizzle/meta and writes the next
 * migration; the mnestome runs them when it opens a file.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/schema.ts',
  out: './drizzle',
  migrations: { table: '__drizzle_migrations_mnestome' },
});
