import { defineConfig } from 'drizzle-kit';

/**
 * `pnpm --filter @metnos/server db:generate:devices -- --name=<what-changed>` diffs
 * src/devices/tables.ts against the last snapshot in drizzle/devices/meta and writes the
 * next migration; the device store runs them when it opens devices.sqlite.
 */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/devices/tables.ts',
  out: './drizzle/devices',
  migrations: { table: '__drizzle_migrations_devices' },
});
