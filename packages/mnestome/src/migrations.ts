import { packageMigrations, type StoreMigrations } from '@metnos/autopath/stores';

let migrations: StoreMigrations | undefined;

/**
 * The mnestome's migrations, in `packages/mnestome/drizzle` (shipped in the
 * package), recorded in their own table so the graph can share a file with
 * other Metnos stores.
 *
 * @example
 * openDatabase({ path: 'mnestome.sqlite' }, mnestomeMigrations());
 */
export function mnestomeMigrations(): StoreMigrations {
  migrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_mnestome');
  return migrations;
}
