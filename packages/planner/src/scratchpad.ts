import { randomUUID } from 'node:crypto';
import { openDatabase } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { plannerStoreMigrations } from './stores/migrations.ts';
import { scratchpadEntries } from './stores/schema.ts';

/** Observations larger than this (serialised JSON, bytes) go to the scratchpad. */
export const SCRATCHPAD_THRESHOLD_BYTES = 4096;

const SUMMARY_EDGE = 500;

/** The synthetic observation the model sees in place of a large one. */
export interface ScratchpadObservation {
  ok: true;
  scratchpad_id: string;
  size_bytes: number;
  kind: 'text' | 'json';
  summary: string;
  metadata: Record<string, unknown>;
}

/** First 500 characters, how many were left out, last 500. */
export function summarize(text: string): string {
  if (text.length <= SUMMARY_EDGE * 2) return text;
  const omitted = text.length - SUMMARY_EDGE * 2;
  return `${text.slice(0, SUMMARY_EDGE)}\n\n[... ${omitted} characters omitted ...]\n\n${text.slice(-SUMMARY_EDGE)}`;
}

/** How `scratchpad_read` reads an entry. */
export type ScratchpadReadMode =
  | { mode: 'full' }
  | { mode: 'head'; chars?: number }
  | { mode: 'tail'; chars?: number }
  | { mode: 'range'; start: number; end: number };

/** Settings of {@link createScratchpad}: an open database, or a file path. */
export type ScratchpadSettings =
  | { db: Database.Database; clock?: () => Date; ids?: () => string }
  | { path: string; clock?: () => Date; ids?: () => string };

/**
 * Where large observations go for the rest of a turn: a SQLite table
 * (better-sqlite3). The model sees a summary and can read the rest
 * with the builtin `scratchpad_read`.
 *
 * @example
 * const scratchpad = createScratchpad({ path: join(homedir(), '.local/share/metnos/scratchpad.db') }); // no `~`: a path is taken as written
 * const observation = scratchpad.put('turn-1', bigText, { path: '/tmp/log.txt' });
 */
export function createScratchpad(settings: ScratchpadSettings) {
  const { client, owned } = openDatabase(settings, plannerStoreMigrations());
  const db: BetterSQLite3Database = drizzle(client);
  const clock = settings.clock ?? (() => new Date());
  const ids = settings.ids ?? (() => randomUUID().replaceAll('-', '').slice(0, 16));

  return {
    /** Stores `content` for `turnId` and returns the observation the model sees. */
    put(turnId: string, content: unknown, metadata: Record<string, unknown> = {}): ScratchpadObservation {
      const kind = typeof content === 'string' ? 'text' : 'json';
      const stored = typeof content === 'string' ? content : JSON.stringify(content, null, 1);
      const id = ids();
      const sizeBytes = Buffer.byteLength(stored);
      db.insert(scratchpadEntries)
        .values({
          id,
          turnId,
          kind,
          sizeBytes,
          content: stored,
          metadata: JSON.stringify(metadata),
          createdAt: clock().toISOString(),
        })
        .run();
      return {
        ok: true,
        scratchpad_id: id,
        size_bytes: sizeBytes,
        kind,
        summary: summarize(stored),
        metadata,
      };
    },

    /** Reads part of an entry of this turn; undefined when the id is not this turn's. */
    read(
      turnId: string,
      id: string,
      how: ScratchpadReadMode,
    ): { content: string; total_chars: number } | undefined {
      const row = db
        .select()
        .from(scratchpadEntries)
        .where(and(eq(scratchpadEntries.id, id), eq(scratchpadEntries.turnId, turnId)))
        .get();
      if (!row) return undefined;
      const text = row.content;
      let content: string;
      switch (how.mode) {
        case 'full':
          content = text;
          break;
        case 'head':
          content = text.slice(0, how.chars ?? 2000);
          break;
        case 'tail':
          content = text.slice(-(how.chars ?? 2000));
          break;
        case 'range':
          content = text.slice(Math.max(0, how.start), Math.max(0, how.end));
          break;
      }
      return { content, total_chars: text.length };
    },

    /** How many entries a turn has (the builtin is offered only when > 0). */
    count(turnId: string): number {
      const row = db
        .select({ count: sql<number>`count(*)` })
        .from(scratchpadEntries)
        .where(eq(scratchpadEntries.turnId, turnId))
        .get();
      return row?.count ?? 0;
    },

    close(): void {
      if (owned) client.close();
    },
  };
}

export type Scratchpad = ReturnType<typeof createScratchpad>;

/** The builtin tool's JSON Schema, offered to the model only while the turn has entries. */
export const SCRATCHPAD_READ_TOOL = {
  name: 'scratchpad_read',
  description:
    'Read a large earlier observation that was stored in the scratchpad. Use the scratchpad_id from that observation. mode: full (everything), head or tail (first/last `chars` characters, default 2000), range (characters from `start` to `end`).',
  parameters: {
    type: 'object',
    properties: {
      scratchpad_id: { type: 'string', description: 'The id from the stored observation' },
      mode: { type: 'string', enum: ['full', 'head', 'tail', 'range'] },
      chars: { type: 'integer', minimum: 1, maximum: 200000, description: 'For head and tail' },
      start: { type: 'integer', minimum: 0, description: 'For range: first character' },
      end: { type: 'integer', minimum: 0, description: 'For range: one past the last character' },
    },
    required: ['scratchpad_id', 'mode'],
    additionalProperties: false,
  },
} as const;
