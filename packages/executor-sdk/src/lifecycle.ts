import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { LifecycleError } from './errors.ts';
import { hasOnlyKeys, isOptionalString, isPlainObject, isVersionOneMap } from './shape.ts';
import { writeFileAtomicSync } from './sign.ts';

/** How many transitions a record keeps, the latest. */
const HISTORY_LENGTH = 50;

/** The states an executor version moves through. */
export const LIFECYCLE_STATES = [
  'seed',
  'active',
  'quarantined',
  'below_threshold',
  'fused',
  'archived',
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/**
 * Allowed transitions, as data. Archiving is reversible (rehabilitation);
 * quarantine returns to active only after a new valid signature or an explicit
 * rehabilitation. Every state in which a version can fail verification (loaded,
 * or archived and being rehabilitated) can go to quarantine.
 */
export const LIFECYCLE_TRANSITIONS: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  seed: ['active', 'quarantined'],
  active: ['fused', 'quarantined', 'below_threshold', 'archived'],
  fused: ['archived', 'active', 'quarantined'],
  quarantined: ['active', 'archived'],
  below_threshold: ['active', 'archived', 'quarantined'],
  archived: ['active', 'quarantined'],
};

/** True when the state machine allows `from → to`. */
export function canTransition(from: LifecycleState, to: LifecycleState): boolean {
  return LIFECYCLE_TRANSITIONS[from].includes(to);
}

const historyEntrySchema = z.object({
  from: z.enum(LIFECYCLE_STATES).nullable(),
  to: z.enum(LIFECYCLE_STATES),
  at: z.string(),
  reason: z.string().optional(),
});

const recordSchema = z.object({
  state: z.enum(LIFECYCLE_STATES),
  reason: z.string().optional(),
  since: z.string(),
  /** Signature digest at the time of quarantine, so a re-signed copy can leave it. */
  signature: z.string().optional(),
  /** Where an archived version lived before it was moved. */
  path: z.string().optional(),
  history: z.array(historyEntrySchema),
});

export const lifecycleFileSchema = z.object({
  version: z.literal(1),
  executors: z.record(z.string(), recordSchema),
});

export type LifecycleRecord = z.infer<typeof recordSchema>;
type LifecycleFile = z.infer<typeof lifecycleFileSchema>;

const isState = (value: unknown) => LIFECYCLE_STATES.includes(value as LifecycleState);

/** What `lifecycleFileSchema` accepts unchanged, checked by hand (see shape.ts). */
export function isLifecycleFile(data: unknown): data is LifecycleFile {
  return isVersionOneMap(
    data,
    (record) =>
      isPlainObject(record) &&
      hasOnlyKeys(record, ['state', 'since', 'history'], ['reason', 'signature', 'path']) &&
      isState(record.state) &&
      typeof record.since === 'string' &&
      isOptionalString(record.reason) &&
      isOptionalString(record.signature) &&
      isOptionalString(record.path) &&
      Array.isArray(record.history) &&
      record.history.every(
        (entry) =>
          isPlainObject(entry) &&
          hasOnlyKeys(entry, ['from', 'to', 'at'], ['reason']) &&
          (entry.from === null || isState(entry.from)) &&
          isState(entry.to) &&
          typeof entry.at === 'string' &&
          isOptionalString(entry.reason),
      ),
  );
}

/**
 * The persisted lifecycle of every executor version, keyed `name@version`,
 * in one JSON file written atomically (a kill -9 leaves the old or the new file).
 *
 * @example
 * const store = await openLifecycleStore('/work/executors/.state/lifecycle.json');
 * await store.transition('fs_read@1.0.0', 'archived', 'not used for 90 days');
 */
export async function openLifecycleStore(path: string, clock: () => Date = () => new Date()) {
  let records: Record<string, LifecycleRecord> = {};
  try {
    const data: unknown = JSON.parse(await readFile(path, 'utf8'));
    const parsed = isLifecycleFile(data)
      ? { success: true as const, data }
      : lifecycleFileSchema.safeParse(data);
    if (!parsed.success) throw new LifecycleError(`${path} is not a Metnos lifecycle file`);
    records = parsed.data.executors;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw LifecycleError.isInstance(error) ? error : new LifecycleError(`cannot read ${path}`, error);
    }
  }

  let dirty = false;
  /** The clock's time as ISO text, spelled once per millisecond: a load enters thousands of records. */
  let lastMs = Number.NaN;
  let lastText = '';
  const timestamp = () => {
    const date = clock();
    const ms = date.getTime();
    if (ms !== lastMs) {
      lastText = date.toISOString();
      lastMs = ms;
    }
    return lastText;
  };
  /** Writes the file if anything changed: one line, as a catalog of thousands writes it at every load. */
  const saveNow = (): void => {
    if (!dirty) return;
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomicSync(path, `${JSON.stringify({ version: 1, executors: records })}\n`);
    dirty = false;
  };

  function set(
    id: string,
    to: LifecycleState,
    reason: string | undefined,
    extra: Partial<LifecycleRecord> = {},
  ) {
    const now = timestamp();
    const previous = records[id];
    const step = { from: previous?.state ?? null, to, at: now, reason };
    records[id] = {
      ...previous,
      ...extra,
      state: to,
      reason,
      since: previous?.state === to ? previous.since : now,
      history: previous ? [...previous.history, step].slice(-HISTORY_LENGTH) : [step],
    };
    dirty = true;
  }

  return {
    path,
    get(id: string): LifecycleRecord | undefined {
      return records[id];
    },
    all(): Readonly<Record<string, LifecycleRecord>> {
      return records;
    },
    /** Records a first sighting (`seed` or `active`) without a transition check. */
    introduce(id: string, state: LifecycleState, reason?: string): void {
      if (!records[id]) set(id, state, reason);
    },
    /** Moves `id` to `to`, refusing transitions the state machine does not allow. */
    transition(id: string, to: LifecycleState, reason?: string, extra: Partial<LifecycleRecord> = {}): void {
      const current = records[id];
      if (!current) throw new LifecycleError(`unknown executor version ${id}`);
      if (current.state === to) {
        if (reason !== current.reason || Object.keys(extra).length > 0) set(id, to, reason, extra);
        return;
      }
      if (!canTransition(current.state, to)) {
        throw new LifecycleError(`${id} cannot go from ${current.state} to ${to}`);
      }
      set(id, to, reason, extra);
    },
    /** Writes the file if anything changed. */
    async save(): Promise<void> {
      saveNow();
    },
    /** {@link save} without leaving the calling thread (see `writeFileAtomicSync`). */
    saveNow,
  };
}

export type LifecycleStore = Awaited<ReturnType<typeof openLifecycleStore>>;
