import { openDatabase } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import { and, asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { plannerStoreMigrations } from '../stores/migrations.ts';
import { agentMemory } from '../stores/schema.ts';
import { type MemoryAddress, memoryText, type RuntimeMemoryAdapter, runOf } from './memory.ts';

/** A stored value read back; a row edited into something that is not JSON reads as absent. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The runtime's memory in SQLite (the planner's `agent_memory` table, made
 * by its migrations when the file opens): `global` entries outlive the
 * process, and a run's `shared` and `agent:{id}` entries can be read after it.
 * Takes an open client or a path, like the planner's other stores.
 *
 * @example
 * const memory = createSqliteRuntimeMemory({ path: join(dataDir, 'agents.sqlite') });
 * const runtime = createAgentRuntime({ agents, memory });
 */
export function createSqliteRuntimeMemory(
  settings: { db: Database.Database } | { path: string },
): RuntimeMemoryAdapter & { close(): void } {
  const { client, owned } = openDatabase(settings, plannerStoreMigrations());
  const db = drizzle(client);
  const where = (address: MemoryAddress) =>
    and(
      eq(agentMemory.run, runOf(address)),
      eq(agentMemory.scope, address.scope),
      eq(agentMemory.key, address.key),
    );
  return {
    async get(address) {
      memoryText(address);
      const row = db.select().from(agentMemory).where(where(address)).get();
      return row ? parsed(row.value) : undefined;
    },
    async set(address, value) {
      const text = memoryText(address, value);
      const updatedAt = new Date().toISOString();
      db.insert(agentMemory)
        .values({ run: runOf(address), scope: address.scope, key: address.key, value: text, updatedAt })
        .onConflictDoUpdate({
          target: [agentMemory.run, agentMemory.scope, agentMemory.key],
          set: { value: text, updatedAt },
        })
        .run();
    },
    async delete(address) {
      memoryText(address);
      db.delete(agentMemory).where(where(address)).run();
    },
    async list(run, scope) {
      memoryText({ run, scope, key: '-' });
      return db
        .select()
        .from(agentMemory)
        .where(and(eq(agentMemory.run, scope === 'global' ? '' : run), eq(agentMemory.scope, scope)))
        .orderBy(asc(agentMemory.key))
        .all()
        .map((row) => ({ key: row.key, value: parsed(row.value) }));
    },
    close() {
      if (owned) client.close();
    },
  };
}
