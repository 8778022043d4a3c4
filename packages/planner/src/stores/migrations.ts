import { packageMigrations, type StoreMigrations } from '@metnos/autopath/stores';

let migrations: StoreMigrations | undefined;

/**
 * The migrations of the scratchpad and the gap log, in `packages/planner/drizzle`
 * (shipped in the package), recorded in their own table so these stores can
 * share a file with `@metnos/autopath`'s.
 *
 * @example
 * openDatabase({ path: 'scratchpad.db' }, plannerStoreMigrations());
 */
export function plannerStoreMigrations(): StoreMigrations {
  migrations ??= packageMigrations(import.meta.url, '__drizzle_migrations_planner');
  return migrations;
}
