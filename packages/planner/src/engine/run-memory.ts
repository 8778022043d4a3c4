import { canonicalJson } from './plan.ts';
import { followPath, PlanReferenceError } from './references.ts';

/** Reads object-pinned memory: a typed property of a subject, kept across turns. */
export interface PinnedReader {
  get(subject: string, property: string): unknown;
}

/** One value in run memory: a step's typed output under the key the step `produces`. */
export interface RunMemoryEntry {
  key: string;
  value: unknown;
  /** The step that produced it. */
  step: number;
  /** `<tool>@<version>#output`: the schema the harness validated the value against. */
  schema: string;
}

/** The roots a `$ref` path may start from besides produced keys. */
export type RefRoot =
  | { root: 'input' | 'runtime'; rest: string[] }
  | { root: 'pinned'; subject: string; property: string; rest: string[] }
  | { root: 'produced'; key: string; rest: string[] };

const PINNED = /^pinned\/([a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_.@-]{1,128})\/([a-z][a-z0-9_]{0,63})(.*)$/;

function restParts(rest: string): string[] {
  return rest.match(/[A-Za-z0-9_-]+|\*/g) ?? [];
}

/**
 * Splits a `$ref` path into its root and the field path after it: `input`
 * (the request and its slots), `runtime` (actor, lang, channel, now, today),
 * `pinned/<type>:<id>/<property>` (object-pinned memory), or the longest
 * key in `produced` the path starts with (`evidence.s1.items[0]` with a key
 * `evidence.s1`). Undefined when no root matches.
 */
export function refRoot(path: string, produced: Iterable<string>): RefRoot | undefined {
  const pinned = PINNED.exec(path);
  if (pinned)
    return { root: 'pinned', subject: pinned[1]!, property: pinned[2]!, rest: restParts(pinned[3]!) };
  let best: string | undefined;
  for (const key of produced) {
    const follows = path.length === key.length || path[key.length] === '.' || path[key.length] === '[';
    if (path.startsWith(key) && follows && (best === undefined || key.length > best.length)) best = key;
  }
  if (best !== undefined) return { root: 'produced', key: best, rest: restParts(path.slice(best.length)) };
  for (const root of ['input', 'runtime'] as const) {
    if (path === root || path.startsWith(`${root}.`))
      return { root, rest: restParts(path.slice(root.length)) };
  }
  return undefined;
}

/**
 * The memory of one run, in the three scopes seed 003 names:
 * - step: `scratch(step)`, a working map for one step (its attempts, its
 *   resolved arguments), dropped by `endStep` and never kept;
 * - run: typed key/value, each step's output under the key it `produces`,
 *   written once, read by `$ref`, captured whole in the replay bundle by
 *   `snapshot()`, discarded with the turn;
 * - object-pinned: read through `pinned/<subject>/<property>` from the
 *   persisted {@link PinnedReader}, never written by a step.
 *
 * @example
 * const memory = createRunMemory({ request, slots: {}, runtime });
 * memory.put({ key: 'evidence.s1', value: { lines: ['a'] }, step: 1, schema: 'fs_read@1.0.0#output' });
 * memory.read('evidence.s1.lines[0]', '$ref:evidence.s1.lines[0]'); // 'a'
 */
export function createRunMemory(settings: {
  request: string;
  slots?: Readonly<Record<string, string>>;
  runtime: Readonly<Record<string, string>>;
  pinned?: PinnedReader;
}) {
  const entries = new Map<string, RunMemoryEntry>();
  const scratches = new Map<number, Map<string, unknown>>();
  const input = { request: settings.request, slots: { ...(settings.slots ?? {}) } };

  return {
    /** Keeps a step's output; a key is written once in a run. */
    put(entry: RunMemoryEntry): void {
      if (entries.has(entry.key))
        throw new PlanReferenceError(entry.key, `run memory already holds "${entry.key}"`);
      entries.set(entry.key, entry);
    },
    /** Resolves a `$ref` path; a path nothing holds is a {@link PlanReferenceError}. */
    read(path: string, text: string): unknown {
      const found = refRoot(path, entries.keys());
      if (!found) throw new PlanReferenceError(text, `${text}: nothing in run memory is called that`);
      if (found.root === 'produced') return followPath(entries.get(found.key)!.value, found.rest, text);
      if (found.root !== 'pinned')
        return followPath(found.root === 'input' ? input : settings.runtime, found.rest, text);
      const value = settings.pinned?.get(found.subject, found.property);
      if (value === undefined)
        throw new PlanReferenceError(text, `${text}: ${found.subject} has no "${found.property}" pinned`);
      return followPath(value, found.rest, text);
    },
    /** The working map of one step. */
    scratch(step: number): Map<string, unknown> {
      const map = scratches.get(step) ?? new Map<string, unknown>();
      scratches.set(step, map);
      return map;
    },
    /** Drops a step's working map. */
    endStep(step: number): void {
      scratches.delete(step);
    },
    /** The run memory by key, in the order written, as the replay bundle keeps it. */
    snapshot(): RunMemoryEntry[] {
      return [...entries.values()].map((entry) => JSON.parse(canonicalJson(entry)) as RunMemoryEntry);
    },
    /** How many working maps are open: 0 once every step ended. */
    openScratches(): number {
      return scratches.size;
    },
  };
}

export type RunMemory = ReturnType<typeof createRunMemory>;
