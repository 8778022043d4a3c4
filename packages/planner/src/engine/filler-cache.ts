import { openDatabase } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { plannerStoreMigrations } from '../stores/migrations.ts';
import { fillerAnswers } from '../stores/schema.ts';

/** Where filler answers are kept between turns: a `Map` in one process, a SQLite file across processes. */
export interface FillerCache {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** The longest filler answer kept: fillers are one short line. */
const MAX_VALUE = 500;

/**
 * Filler answers in SQLite, so a plan served from memory by a later process
 * (each `metnos ask` is one) fills its `${FILLER:…}` slots from what the
 * model said the first time instead of asking again. Keys are the plan's
 * hash, the filler's name and the request's slots, so another request's
 * slots or an edited plan ask anew. A row edited into something no filler
 * could answer (empty, over 500 characters, several lines) reads as absent.
 *
 * @example
 * const cache = createFillerCache({ path: join(dataDir, 'fillers.sqlite') });
 * const engine = createEngine({ ...settings, fillerCache: cache });
 */
export function createFillerCache(
  settings: { db: Database.Database } | { path: string },
): FillerCache & { close(): void } {
  const { client, owned } = openDatabase(settings, plannerStoreMigrations());
  const db = drizzle(client);
  const usable = (value: string) => value.length > 0 && value.length <= MAX_VALUE && !value.includes('\n');
  return {
    get(key) {
      const row = db.select().from(fillerAnswers).where(eq(fillerAnswers.key, key)).get();
      return row && usable(row.value) ? row.value : undefined;
    },
    set(key, value) {
      if (!usable(value)) return;
      const createdAt = new Date().toISOString();
      db.insert(fillerAnswers)
        .values({ key, value, createdAt })
        .onConflictDoUpdate({ target: fillerAnswers.key, set: { value, createdAt } })
        .run();
    },
    close() {
      if (owned) client.close();
    },
  };
}
