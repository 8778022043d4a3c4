import { exceedsJsonDepth, MetnosError } from '@metnos/executor-sdk';

/** The three scopes: one agent's scratch, what the agents of a run share, what outlives runs. */
export type MemoryScope = `agent:${string}` | 'shared' | 'global';

/** Where an entry lives: a scope, and for `agent:*` and `shared` the run (`global` has none). */
export interface MemoryAddress {
  /** The run; ignored (and stored as none) for `global`. */
  run: string;
  scope: MemoryScope;
  key: string;
}

/**
 * Storage for the runtime's memory: a `Map` in this process
 * ({@link createInMemoryRuntimeMemory}) or SQLite (`createSqliteRuntimeMemory`).
 * Values are JSON; `global` entries outlive runs only in a durable adapter.
 */
export interface RuntimeMemoryAdapter {
  get(address: MemoryAddress): Promise<unknown>;
  set(address: MemoryAddress, value: unknown): Promise<void>;
  delete(address: MemoryAddress): Promise<void>;
  /** The entries of a scope (of a run, unless `global`), by key. */
  list(run: string, scope: MemoryScope): Promise<Array<{ key: string; value: unknown }>>;
  close?(): void;
}

const marker = Symbol.for('metnos.error.MemoryScopeError');

/** A memory operation outside what the caller may reach, or a value memory cannot keep. */
export class MemoryScopeError extends MetnosError {
  private readonly [marker] = true;

  constructor(message: string) {
    super({ code: 'memory_scope', message });
    this.name = 'MemoryScopeError';
  }

  static override isInstance(error: unknown): error is MemoryScopeError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}

const SCOPE = /^(agent:[a-zA-Z_][a-zA-Z0-9_-]*|shared|global)$/;
/** The largest value kept, as JSON text. */
export const MAX_MEMORY_VALUE_BYTES = 256 * 1024;

/** Checks a scope and key, and a value's JSON text; returns the text. */
export function memoryText(address: MemoryAddress, value?: unknown): string {
  if (!SCOPE.test(address.scope)) throw new MemoryScopeError(`"${address.scope}" is not a memory scope`);
  if (typeof address.key !== 'string' || address.key.length === 0 || address.key.length > 256)
    throw new MemoryScopeError('a memory key is 1 to 256 characters');
  if (value === undefined) return '';
  if (exceedsJsonDepth(value)) throw new MemoryScopeError('the value nests too deeply to keep');
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new MemoryScopeError(`the value is not JSON: ${(error as Error).message}`);
  }
  if (text === undefined) throw new MemoryScopeError('the value is not JSON');
  if (Buffer.byteLength(text) > MAX_MEMORY_VALUE_BYTES)
    throw new MemoryScopeError(`the value is larger than ${MAX_MEMORY_VALUE_BYTES} bytes`);
  return text;
}

/** The run an address is kept under: none for `global`. */
export const runOf = (address: MemoryAddress) => (address.scope === 'global' ? '' : address.run);

/**
 * The runtime's default memory: a `Map` in this process. `global` lasts as
 * long as the adapter does (one process); use the SQLite adapter for memory
 * that outlives it. Values are copied in and out as JSON.
 *
 * @example
 * const memory = createInMemoryRuntimeMemory();
 * const runtime = createAgentRuntime({ agents, memory });
 */
export function createInMemoryRuntimeMemory(): RuntimeMemoryAdapter {
  const entries = new Map<string, string>();
  const id = (address: MemoryAddress) => JSON.stringify([runOf(address), address.scope, address.key]);
  return {
    async get(address) {
      memoryText(address);
      const text = entries.get(id(address));
      return text === undefined ? undefined : JSON.parse(text);
    },
    async set(address, value) {
      entries.set(id(address), memoryText(address, value));
    },
    async delete(address) {
      memoryText(address);
      entries.delete(id(address));
    },
    async list(run, scope) {
      memoryText({ run, scope, key: '-' });
      const found: Array<{ key: string; value: unknown }> = [];
      for (const [entry, text] of entries) {
        const [entryRun, entryScope, key] = JSON.parse(entry) as [string, string, string];
        if (entryScope === scope && entryRun === (scope === 'global' ? '' : run))
          found.push({ key, value: JSON.parse(text) });
      }
      return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
  };
}

/** One agent's view of a run's memory: its own scratch, the shared scope, the global one. */
export interface ScopedMemory {
  get(scope: MemoryScope, key: string): Promise<unknown>;
  set(scope: MemoryScope, key: string, value: unknown): Promise<void>;
  delete(scope: MemoryScope, key: string): Promise<void>;
  list(scope: MemoryScope): Promise<Array<{ key: string; value: unknown }>>;
}

/**
 * The view of a run's memory an agent (and its custom tools) gets:
 * `agent:{its id}`, `shared` and `global`. Another agent's scratch is out of
 * reach ({@link MemoryScopeError}). Without `agentId` (the caller reading a
 * run's results) every agent's scratch can be read.
 *
 * @example
 * const memory = scopedMemory(adapter, runId, 'router');
 * await memory.set('agent:router', 'notes', ['billing']);
 */
export function scopedMemory(adapter: RuntimeMemoryAdapter, run: string, agentId?: string): ScopedMemory {
  const allowed = (scope: MemoryScope) => {
    if (agentId !== undefined && scope.startsWith('agent:') && scope !== `agent:${agentId}`)
      throw new MemoryScopeError(`agent ${agentId} cannot reach ${scope}: an agent's scratch is its own`);
    return { run, scope };
  };
  return {
    get: async (scope, key) => adapter.get({ ...allowed(scope), key }),
    set: async (scope, key, value) => adapter.set({ ...allowed(scope), key }, value),
    delete: async (scope, key) => adapter.delete({ ...allowed(scope), key }),
    list: async (scope) => adapter.list(allowed(scope).run, scope),
  };
}
