import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { blob, index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { type Embedder, isFittable } from './embedder.ts';
import { VectorIndexError } from './errors.ts';
import { blobToVector, openDatabase, type StoreLocation, vectorToBlob } from './stores/sqlite.ts';

/** The SQLite table behind every vector index; `space` keeps several indexes apart in one file. */
export const memoryVectors = sqliteTable(
  'memory_vectors',
  {
    id: text('id').primaryKey(),
    space: text('space').notNull(),
    text: text('text').notNull(),
    label: text('label'),
    embedderId: text('embedder_id').notNull(),
    vector: blob('vector', { mode: 'buffer' }).notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('memory_vectors_space').on(table.space)],
);

const SCHEMA = `CREATE TABLE IF NOT EXISTS memory_vectors (
  id TEXT PRIMARY KEY,
  space TEXT NOT NULL,
  text TEXT NOT NULL,
  label TEXT,
  embedder_id TEXT NOT NULL,
  vector BLOB NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_vectors_space ON memory_vectors (space);`;

/** A stored request: its text, the plan (or intent) it is labelled with, when it was stored. */
export interface VectorEntry {
  id: string;
  text: string;
  label: string | null;
  createdAt: string;
}

/** One search result: a stored entry and its cosine with the query. */
export interface SearchHit extends VectorEntry {
  score: number;
}

/** What a label looks like from one query: its nearest entry and its centroid. */
export interface LabelSimilarity {
  label: string;
  /** Cosine with the label's nearest entry. */
  nearest: number;
  nearestId: string;
  /** Cosine with the normalised mean of the label's vectors. */
  centroid: number;
  /** Entries carrying the label (after exclusions). */
  count: number;
}

/** Settings of {@link createVectorIndex}. */
export interface VectorIndexSettings {
  /** Several indexes can share one database; each reads and writes only its space. Default `default`. */
  space?: string;
  /**
   * For an embedder with `fit` (inverse frequency): refit and re-embed the whole
   * store once it has grown by this fraction since the last fit. Default 0.1;
   * `false` leaves refitting to {@link VectorIndex.refit}.
   */
  autoRefit?: number | false;
  /** The clock, injected for replayable tests. */
  now?: () => Date;
  /** Entry ids, injected for replayable tests. */
  newId?: () => string;
}

/** A request to store. */
export interface NewVectorEntry {
  id?: string;
  text: string;
  label?: string | null;
}

/**
 * Stored requests and their vectors. Vectors persist in SQLite; search is
 * exact, in memory, over one contiguous matrix.
 */
export interface VectorIndex {
  readonly embedder: Embedder;
  readonly size: number;
  /** Grows on every change; caches keyed on it stay valid while it holds. */
  readonly version: number;
  add(entries: NewVectorEntry[]): Promise<VectorEntry[]>;
  /** Removes entries by id; returns how many were there. */
  remove(ids: string[]): number;
  /** The `topK` stored entries closest to `text`, best first. */
  search(text: string, topK?: number): Promise<SearchHit[]>;
  searchVector(vector: Float32Array, topK?: number, options?: ScanOptions): SearchHit[];
  /** Every label's nearest entry and centroid as seen from `vector`, best nearest first. */
  labelSimilarities(vector: Float32Array, options?: ScanOptions): LabelSimilarity[];
  /** Embeds texts with the index's embedder (fitted on the store when it can be). */
  embed(texts: string[]): Promise<Float32Array[]>;
  entries(): VectorEntry[];
  /** Refits a fittable embedder on the stored texts and labels, and re-embeds the store. */
  refit(): Promise<void>;
  close(): void;
}

/** Entries a scan leaves out, e.g. the query's own copy during leave-one-out calibration. */
export interface ScanOptions {
  excludeIds?: ReadonlySet<string>;
}

/**
 * The in-memory side: one Float32Array holding every vector, dimension-major
 * (all entries' first coordinate, then all second coordinates…). A query then
 * costs one contiguous pass per non-zero coordinate, which is what makes
 * sparse lexical vectors cheap, and dense ones no dearer than row-major.
 */
class VectorMatrix {
  readonly dimensions: number;
  data: Float32Array;
  capacity: number;
  size = 0;

  constructor(dimensions: number, capacity = 256) {
    this.dimensions = dimensions;
    this.capacity = capacity;
    this.data = new Float32Array(dimensions * capacity);
  }

  append(vector: Float32Array): number {
    if (this.size === this.capacity) this.grow();
    const row = this.size++;
    this.write(row, vector);
    return row;
  }

  write(row: number, vector: Float32Array): void {
    for (let dimension = 0; dimension < this.dimensions; dimension++) this.data[dimension * this.capacity + row] = vector[dimension]!;
  }

  /** Moves the last row into `row` (order is not kept) and shrinks by one. */
  removeSwap(row: number): void {
    const last = this.size - 1;
    if (row !== last) {
      for (let dimension = 0; dimension < this.dimensions; dimension++) {
        this.data[dimension * this.capacity + row] = this.data[dimension * this.capacity + last]!;
      }
    }
    this.size = last;
  }

  row(row: number): Float32Array {
    const vector = new Float32Array(this.dimensions);
    for (let dimension = 0; dimension < this.dimensions; dimension++) vector[dimension] = this.data[dimension * this.capacity + row]!;
    return vector;
  }

  scores(query: Float32Array): Float32Array {
    const scores = new Float32Array(this.size);
    const { data, capacity, size } = this;
    for (let dimension = 0; dimension < this.dimensions; dimension++) {
      const weight = query[dimension]!;
      if (weight === 0) continue;
      const offset = dimension * capacity;
      for (let row = 0; row < size; row++) scores[row]! += weight * data[offset + row]!;
    }
    return scores;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const data = new Float32Array(this.dimensions * capacity);
    for (let dimension = 0; dimension < this.dimensions; dimension++) {
      data.set(this.data.subarray(dimension * this.capacity, dimension * this.capacity + this.size), dimension * capacity);
    }
    this.data = data;
    this.capacity = capacity;
  }
}

interface LabelSum {
  sum: Float64Array;
  count: number;
  /** Squared norm of `sum`, refreshed lazily. */
  squaredNorm: number | undefined;
}

function topHits(scores: Float32Array, topK: number, skip: (row: number) => boolean): Array<{ row: number; score: number }> {
  const best: Array<{ row: number; score: number }> = [];
  for (let row = 0; row < scores.length; row++) {
    const score = scores[row]!;
    if (best.length === topK && score <= best[best.length - 1]!.score) continue;
    if (skip(row)) continue;
    let position = best.length;
    while (position > 0 && best[position - 1]!.score < score) position--;
    best.splice(position, 0, { row, score });
    if (best.length > topK) best.pop();
  }
  return best;
}

/**
 * Opens (or creates) a vector index in a SQLite database, given an open
 * better-sqlite3 client (`{ db }`) or a file path (`{ path }`). Rows written
 * by another embedder (another `embedder.id`) are re-embedded from their text
 * on open, so switching models never mixes vector spaces.
 *
 * Beyond ~100k entries an exact scan stops being cheap; the README describes
 * the path to an approximate index.
 *
 * @example
 * const index = await createVectorIndex({ path: 'memory.sqlite' }, createHashingEmbedder());
 * await index.add([{ text: 'play some jazz', label: 'plan-music' }]);
 * const [hit] = await index.search('put on jazz', 1);
 */
export async function createVectorIndex(
  location: StoreLocation,
  embedder: Embedder,
  settings: VectorIndexSettings = {},
): Promise<VectorIndex> {
  const { client, owned } = openDatabase(location);
  client.exec(SCHEMA);
  const db = drizzle(client);
  const space = settings.space ?? 'default';
  const now = settings.now ?? (() => new Date());
  const newId = settings.newId ?? randomUUID;
  const autoRefit = settings.autoRefit ?? 0.1;
  const dimensions = embedder.dimensions;

  let matrix = new VectorMatrix(dimensions);
  let rows: VectorEntry[] = [];
  let positions = new Map<string, number>();
  let labels = new Map<string, LabelSum>();
  let version = 0;
  let fittedAt = -1;

  const checkVector = (vector: Float32Array) => {
    if (vector.length !== dimensions) {
      throw new VectorIndexError({
        code: 'dimension_mismatch',
        message: `vector has ${vector.length} dimensions, the index (${embedder.id}) has ${dimensions}`,
      });
    }
  };

  const labelAdd = (label: string | null, vector: Float32Array, sign: 1 | -1) => {
    if (label === null) return;
    let entry = labels.get(label);
    if (!entry) labels.set(label, (entry = { sum: new Float64Array(dimensions), count: 0, squaredNorm: undefined }));
    for (let dimension = 0; dimension < dimensions; dimension++) entry.sum[dimension]! += sign * vector[dimension]!;
    entry.count += sign;
    entry.squaredNorm = undefined;
    if (entry.count === 0) labels.delete(label);
  };

  const rebuild = (entries: VectorEntry[], vectors: Float32Array[]) => {
    matrix = new VectorMatrix(dimensions, Math.max(256, entries.length));
    rows = [];
    positions = new Map();
    labels = new Map();
    entries.forEach((entry, position) => {
      matrix.append(vectors[position]!);
      positions.set(entry.id, rows.length);
      rows.push(entry);
      labelAdd(entry.label, vectors[position]!, 1);
    });
    version++;
  };

  const updateVectors = client.transaction((changes: Array<{ id: string; vector: Float32Array }>) => {
    for (const change of changes) {
      db.update(memoryVectors)
        .set({ vector: vectorToBlob(change.vector), embedderId: embedder.id })
        .where(and(eq(memoryVectors.space, space), eq(memoryVectors.id, change.id)))
        .run();
    }
  });

  /** Fits (when possible) and re-embeds every entry; rewrites only the rows whose bytes changed. */
  const refit = async (stored?: Map<string, Float32Array>) => {
    const current = rows.slice();
    if (isFittable(embedder)) embedder.fit(current.map((entry) => ({ text: entry.text, label: entry.label })));
    const vectors = current.length > 0 ? await embedder.embed(current.map((entry) => entry.text)) : [];
    const before = stored ?? new Map(current.map((entry, position) => [entry.id, matrix.row(positions.get(entry.id) ?? position)]));
    const changes = current
      .map((entry, position) => ({ id: entry.id, vector: vectors[position]! }))
      .filter((change) => !vectorToBlob(change.vector).equals(vectorToBlob(before.get(change.id) ?? new Float32Array(0))));
    if (changes.length > 0) updateVectors(changes);
    rebuild(current, vectors);
    fittedAt = current.length;
  };

  // Load what is stored.
  const stored = db.select().from(memoryVectors).where(eq(memoryVectors.space, space)).all();
  rows = stored.map((row) => ({ id: row.id, text: row.text, label: row.label, createdAt: row.createdAt }));
  const storedVectors = new Map<string, Float32Array>();
  for (const row of stored) {
    const vector = blobToVector(row.vector);
    if (vector && vector.length === dimensions && row.embedderId === embedder.id) storedVectors.set(row.id, vector);
  }
  if (isFittable(embedder) || storedVectors.size < rows.length) {
    await refit(storedVectors);
  } else {
    rebuild(rows, rows.map((entry) => storedVectors.get(entry.id)!));
  }

  const insert = client.transaction((entries: Array<VectorEntry & { vector: Float32Array }>) => {
    for (const entry of entries) {
      db.insert(memoryVectors)
        .values({ id: entry.id, space, text: entry.text, label: entry.label, embedderId: embedder.id, vector: vectorToBlob(entry.vector), createdAt: entry.createdAt })
        .run();
    }
  });

  const skipper = (options?: ScanOptions) => {
    const excluded = options?.excludeIds;
    if (!excluded || excluded.size === 0) return () => false;
    return (row: number) => excluded.has(rows[row]!.id);
  };

  const index: VectorIndex = {
    embedder,
    get size() {
      return rows.length;
    },
    get version() {
      return version;
    },
    async add(entries) {
      if (entries.length === 0) return [];
      const createdAt = now().toISOString();
      const vectors = await embedder.embed(entries.map((entry) => entry.text));
      const added = entries.map((entry, position) => {
        checkVector(vectors[position]!);
        return { id: entry.id ?? newId(), text: entry.text, label: entry.label ?? null, createdAt, vector: vectors[position]! };
      });
      insert(added);
      for (const entry of added) {
        matrix.append(entry.vector);
        positions.set(entry.id, rows.length);
        rows.push({ id: entry.id, text: entry.text, label: entry.label, createdAt });
        labelAdd(entry.label, entry.vector, 1);
      }
      version++;
      if (isFittable(embedder) && autoRefit !== false && rows.length >= Math.max(1, fittedAt) * (1 + autoRefit)) await refit();
      return added.map(({ vector: _vector, ...entry }) => entry);
    },
    remove(ids) {
      const present = ids.filter((id) => positions.has(id));
      if (present.length === 0) return 0;
      db.delete(memoryVectors)
        .where(and(eq(memoryVectors.space, space), inArray(memoryVectors.id, present)))
        .run();
      for (const id of present) {
        const row = positions.get(id)!;
        const entry = rows[row]!;
        labelAdd(entry.label, matrix.row(row), -1);
        const last = rows.length - 1;
        matrix.removeSwap(row);
        if (row !== last) {
          rows[row] = rows[last]!;
          positions.set(rows[row]!.id, row);
        }
        rows.pop();
        positions.delete(id);
      }
      version++;
      return present.length;
    },
    async search(text, topK = 10) {
      const [vector] = await embedder.embed([text]);
      return index.searchVector(vector!, topK);
    },
    searchVector(vector, topK = 10, options) {
      checkVector(vector);
      const scores = matrix.scores(vector);
      return topHits(scores, topK, skipper(options)).map(({ row, score }) => ({ ...rows[row]!, score }));
    },
    labelSimilarities(vector, options) {
      checkVector(vector);
      const scores = matrix.scores(vector);
      const skip = skipper(options);
      const nearest = new Map<string, { score: number; row: number; excluded: number[] }>();
      for (let row = 0; row < scores.length; row++) {
        const label = rows[row]!.label;
        if (label === null) continue;
        let best = nearest.get(label);
        if (!best) nearest.set(label, (best = { score: Number.NEGATIVE_INFINITY, row: -1, excluded: [] }));
        if (skip(row)) {
          best.excluded.push(row);
          continue;
        }
        if (scores[row]! > best.score) {
          best.score = scores[row]!;
          best.row = row;
        }
      }
      const result: LabelSimilarity[] = [];
      for (const [label, best] of nearest) {
        if (best.row < 0) continue;
        const sum = labels.get(label)!;
        sum.squaredNorm ??= sum.sum.reduce((total, value) => total + value * value, 0);
        let projection = 0;
        for (let dimension = 0; dimension < dimensions; dimension++) {
          if (vector[dimension] !== 0) projection += vector[dimension]! * sum.sum[dimension]!;
        }
        let squaredNorm = sum.squaredNorm;
        if (best.excluded.length > 0) {
          // Leave the excluded entries out of the centroid too: |s - e|² = |s|² - 2 s·e + |e|².
          const excluded = new Float64Array(dimensions);
          for (const row of best.excluded) {
            const vectorOfRow = matrix.row(row);
            for (let dimension = 0; dimension < dimensions; dimension++) excluded[dimension]! += vectorOfRow[dimension]!;
            projection -= scores[row]!;
          }
          let along = 0;
          let own = 0;
          for (let dimension = 0; dimension < dimensions; dimension++) {
            along += sum.sum[dimension]! * excluded[dimension]!;
            own += excluded[dimension]! * excluded[dimension]!;
          }
          squaredNorm += own - 2 * along;
        }
        const centroid = squaredNorm > 1e-12 ? projection / Math.sqrt(squaredNorm) : 0;
        result.push({ label, nearest: best.score, nearestId: rows[best.row]!.id, centroid, count: sum.count - best.excluded.length });
      }
      return result.sort((left, right) => right.nearest - left.nearest);
    },
    embed(texts) {
      return embedder.embed(texts);
    },
    entries() {
      return rows.slice();
    },
    refit: () => refit(),
    close() {
      if (owned) client.close();
    },
  };
  return index;
}
