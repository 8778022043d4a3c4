import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/laptop-agent db:generate -- --name=<what-changed>` diffs
 * src/ledger/tables.ts against the last snapshot in drizzle/meta and writes the
 * next migration; the ledger runs them when it opens its file.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/ledger/tables.ts',
  out: './drizzle',
  migrations: { table: '__drizzle_migrations_laptop' },
});
