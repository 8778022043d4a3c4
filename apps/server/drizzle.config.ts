import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/server db:generate -- --name=<what-changed>` diffs
 * src/scheduler/tables.ts against the last snapshot in drizzle/meta and writes
 * the next migration; the scheduler store runs them when it opens its file.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/scheduler/tables.ts',
  out: './drizzle',
  migrations: { table: '__drizzle_migrations_server' },
});
