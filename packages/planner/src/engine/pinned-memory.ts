import { openDatabase } from '@metnos/autopath/stores';
import { exceedsJsonDepth, MetnosError } from '@metnos/executor-sdk';
import type Database from 'better-sqlite3';
import { and, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { z } from 'zod';
import { plannerStoreMigrations } from '../stores/migrations.ts';
import { pinnedProperties } from '../stores/schema.ts';
import type { PinnedReader } from './run-memory.ts';

const marker = Symbol.for('metnos.error.PinnedMemoryError');

/** A property that is not declared, a value of the wrong type, or a subject that is not `<type>:<id>`. */
export class PinnedMemoryError extends MetnosError {
  private readonly [marker] = true;
  constructor(message: string) {
    super({ code: 'pinned_memory', message });
    this.name = 'PinnedMemoryError';
  }
  static override isInstance(error: unknown): error is PinnedMemoryError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

const SUBJECT = /^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_.@-]{1,128}$/;
const PROPERTY = /^[a-z][a-z0-9_]{0,63}$/;

/** One pinned property as stored. */
export interface PinnedProperty {
  subject: string;
  property: string;
  value: unknown;
  updatedAt: string;
}

/**
 * Object-pinned memory (seed 003): typed properties of subjects (`user:me`,
 * `mail:work`), kept across turns in SQLite. Every property is declared
 * with a zod schema; a value is checked on the way in and again on the way
 * out, so a row edited by hand into the wrong type reads as absent, never
 * as an opaque blob. Plans read it with `$ref:pinned/<subject>/<property>`
 * (pass the store as the engine's `pinned`); steps never write it.
 *
 * @example
 * const pinned = createPinnedMemory({ path: join(dataDir, 'pinned.sqlite'), properties: { trash_folder: z.string() } });
 * pinned.set('mail:work', 'trash_folder', 'Junk');
 * pinned.get('mail:work', 'trash_folder'); // 'Junk'
 */
export function createPinnedMemory(
  settings: ({ db: Database.Database } | { path: string }) & {
    properties: Readonly<Record<string, z.ZodType>>;
    clock?: () => Date;
  },
): PinnedReader & {
  set(subject: string, property: string, value: unknown): void;
  list(subject: string): PinnedProperty[];
  forget(subject: string, property: string): boolean;
  close(): void;
} {
  const { client, owned } = openDatabase(settings, plannerStoreMigrations());
  const db = drizzle(client);
  const clock = settings.clock ?? (() => new Date());
  const schemaOf = (property: string) => {
    if (!PROPERTY.test(property) || !Object.hasOwn(settings.properties, property))
      throw new PinnedMemoryError(
        `"${property}" is not a declared property (declared: ${Object.keys(settings.properties).join(', ') || 'none'})`,
      );
    return settings.properties[property]!;
  };
  const checkSubject = (subject: string) => {
    if (!SUBJECT.test(subject))
      throw new PinnedMemoryError(`"${subject}" is not a subject such as user:me or mail:work`);
  };
  const decode = (row: { value: string }, property: string): unknown => {
    try {
      const parsed = schemaOf(property).safeParse(JSON.parse(row.value));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    get(subject, property) {
      if (!SUBJECT.test(subject) || !PROPERTY.test(property) || !Object.hasOwn(settings.properties, property))
        return undefined;
      const row = db
        .select()
        .from(pinnedProperties)
        .where(and(eq(pinnedProperties.subject, subject), eq(pinnedProperties.property, property)))
        .get();
      return row ? decode(row, property) : undefined;
    },
    set(subject, property, value) {
      checkSubject(subject);
      if (exceedsJsonDepth(value)) throw new PinnedMemoryError(`the value of "${property}" nests too deep`);
      const parsed = schemaOf(property).safeParse(value);
      if (!parsed.success)
        throw new PinnedMemoryError(
          `"${property}" of ${subject}: ${parsed.error.issues[0]?.message ?? 'wrong type'}`,
        );
      const text = JSON.stringify(parsed.data);
      const now = clock().toISOString();
      db.insert(pinnedProperties)
        .values({ subject, property, value: text, updatedAt: now })
        .onConflictDoUpdate({
          target: [pinnedProperties.subject, pinnedProperties.property],
          set: { value: text, updatedAt: now },
        })
        .run();
    },
    list(subject) {
      checkSubject(subject);
      return db
        .select()
        .from(pinnedProperties)
        .where(eq(pinnedProperties.subject, subject))
        .all()
        .filter((row) => Object.hasOwn(settings.properties, row.property))
        .map((row) => ({
          subject,
          property: row.property,
          value: decode(row, row.property),
          updatedAt: row.updatedAt,
        }))
        .filter((row) => row.value !== undefined);
    },
    forget(subject, property) {
      checkSubject(subject);
      const result = db
        .delete(pinnedProperties)
        .where(and(eq(pinnedProperties.subject, subject), eq(pinnedProperties.property, property)))
        .run();
      return result.changes > 0;
    },
    close() {
      if (owned) client.close();
    },
  };
}
