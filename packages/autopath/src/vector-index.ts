import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { type Embedder, isFittable } from './embedder.ts';
import { VectorIndexError } from './errors.ts';
import { autopathStoreMigrations } from './stores/migrations.ts';
import { memoryVectors } from './stores/schema.ts';
import { blobToVector, openDatabase, type StoreLocation, vectorToBlob } from './stores/sqlite.ts';

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
 * exact, in memory: a contiguous row-major Float32Array matrix for dense
 * vectors, posting lists per coordinate for sparse ones.
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

/** The in-memory side of an index: one vector per row, scored against a query all at once. */
interface VectorStore {
  readonly size: number;
  append(vector: Float32Array): void;
  /** Moves the last row into `row` (order is not kept) and shrinks by one. */
  removeSwap(row: number): void;
  row(row: number): Float32Array;
  /** Dot products of the query (given with its non-zero coordinates) with every row. */
  scores(query: Float32Array, nonZero: Int32Array): Float64Array;
}

/**
 * Dense vectors (ONNX models, word vectors): one contiguous Float32Array,
 * row after row, and a plain dot product per row with the accumulator in a
 * register.
 */
class DenseRows implements VectorStore {
  private data: Float32Array;
  private capacity: number;
  size = 0;
  private readonly dimensions: number;

  constructor(dimensions: number, capacity: number) {
    this.dimensions = dimensions;
    this.capacity = Math.max(16, capacity);
    this.data = new Float32Array(dimensions * this.capacity);
  }

  append(vector: Float32Array): void {
    if (this.size === this.capacity) {
      this.capacity *= 2;
      const data = new Float32Array(this.dimensions * this.capacity);
      data.set(this.data);
      this.data = data;
    }
    this.data.set(vector, this.size * this.dimensions);
    this.size++;
  }

  removeSwap(row: number): void {
    const last = this.size - 1;
    if (row !== last)
      this.data.copyWithin(row * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
    this.size = last;
  }

  row(row: number): Float32Array {
    return this.data.slice(row * this.dimensions, (row + 1) * this.dimensions);
  }

  scores(query: Float32Array, _nonZero: Int32Array): Float64Array {
    const { data, size, dimensions } = this;
    const scores = new Float64Array(size);
    for (let row = 0; row < size; row++) {
      const offset = row * dimensions;
      let sum = 0;
      for (let dimension = 0; dimension < dimensions; dimension++)
        sum += query[dimension]! * data[offset + dimension]!;
      scores[row] = sum;
    }
    return scores;
  }
}

/** A growable list of (row, value) pairs: the rows with a non-zero value in one coordinate. */
class Posting {
  rows = new Int32Array(4);
  values = new Float32Array(4);
  length = 0;

  push(row: number, value: number): void {
    if (this.length === this.rows.length) {
      const rows = new Int32Array(this.length * 2);
      rows.set(this.rows);
      const values = new Float32Array(this.length * 2);
      values.set(this.values);
      this.rows = rows;
      this.values = values;
    }
    this.rows[this.length] = row;
    this.values[this.length++] = value;
  }

  /** Drops the pair of `row` (swapping the last pair in). */
  drop(row: number): void {
    const at = this.rows.subarray(0, this.length).indexOf(row);
    if (at < 0) return;
    this.length--;
    this.rows[at] = this.rows[this.length]!;
    this.values[at] = this.values[this.length]!;
  }

  rename(from: number, to: number): void {
    const at = this.rows.subarray(0, this.length).indexOf(from);
    if (at >= 0) this.rows[at] = to;
  }
}

/**
 * Sparse vectors (the hashing embedder: ~100 non-zero coordinates of 2048):
 * one posting list per coordinate, so a query touches only the rows that
 * share a coordinate with it. Scores are the same exact dot products.
 */
class SparseColumns implements VectorStore {
  private readonly postings: Posting[];
  private readonly rowsOf: Array<{ dimensions: Int32Array; values: Float32Array }> = [];
  private readonly dimensions: number;

  constructor(dimensions: number) {
    this.dimensions = dimensions;
    this.postings = Array.from({ length: dimensions }, () => new Posting());
  }

  get size(): number {
    return this.rowsOf.length;
  }

  append(vector: Float32Array): void {
    const row = this.rowsOf.length;
    const dimensions = nonZeroOf(vector);
    const values = new Float32Array(dimensions.length);
    dimensions.forEach((dimension, position) => {
      values[position] = vector[dimension]!;
      this.postings[dimension]!.push(row, vector[dimension]!);
    });
    this.rowsOf.push({ dimensions, values });
  }

  removeSwap(row: number): void {
    const last = this.rowsOf.length - 1;
    for (const dimension of this.rowsOf[row]!.dimensions) this.postings[dimension]!.drop(row);
    if (row !== last) {
      for (const dimension of this.rowsOf[last]!.dimensions) this.postings[dimension]!.rename(last, row);
      this.rowsOf[row] = this.rowsOf[last]!;
    }
    this.rowsOf.pop();
  }

  row(row: number): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const { dimensions, values } = this.rowsOf[row]!;
    dimensions.forEach((dimension, position) => {
      vector[dimension] = values[position]!;
    });
    return vector;
  }

  scores(query: Float32Array, nonZero: Int32Array): Float64Array {
    const scores = new Float64Array(this.rowsOf.length);
    for (const dimension of nonZero) {
      const weight = query[dimension]!;
      const { rows, values, length } = this.postings[dimension]!;
      for (let position = 0; position < length; position++)
        scores[rows[position]!]! += weight * values[position]!;
    }
    return scores;
  }
}

function nonZeroOf(vector: Float32Array): Int32Array {
  let count = 0;
  for (let dimension = 0; dimension < vector.length; dimension++) if (vector[dimension] !== 0) count++;
  const found = new Int32Array(count);
  let position = 0;
  for (let dimension = 0; dimension < vector.length; dimension++)
    if (vector[dimension] !== 0) found[position++] = dimension;
  return found;
}

/** Vectors with fewer non-zero coordinates than this fraction go to posting lists. */
const SPARSE_DENSITY = 0.25;

function storeFor(dimensions: number, vectors: Float32Array[]): VectorStore {
  const sample = vectors.slice(0, 256);
  const density =
    sample.length === 0
      ? 1
      : sample.reduce((sum, vector) => sum + nonZeroOf(vector).length, 0) / (sample.length * dimensions);
  return density < SPARSE_DENSITY ? new SparseColumns(dimensions) : new DenseRows(dimensions, vectors.length);
}

interface LabelSum {
  sum: Float64Array;
  count: number;
  /** Squared norm of `sum`, refreshed lazily. */
  squaredNorm: number | undefined;
}

function topHits(
  scores: Float64Array,
  topK: number,
  skip: (row: number) => boolean,
): Array<{ row: number; score: number }> {
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
  const { client, owned } = openDatabase(location, autopathStoreMigrations());
  const db = drizzle(client);
  const space = settings.space ?? 'default';
  const now = settings.now ?? (() => new Date());
  const newId = settings.newId ?? randomUUID;
  const autoRefit = settings.autoRefit ?? 0.1;
  const dimensions = embedder.dimensions;

  let matrix: VectorStore = new DenseRows(dimensions, 16);
  let rows: VectorEntry[] = [];
  let positions = new Map<string, number>();
  let rowLabels: number[] = [];
  let labelOrdinals = new Map<string, number>();
  let labelNames: string[] = [];
  let labelSums: LabelSum[] = [];
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

  /** Labels get small ordinals so a scan can keep per-label bests in typed arrays. */
  const ordinalOf = (label: string | null): number => {
    if (label === null) return -1;
    let ordinal = labelOrdinals.get(label);
    if (ordinal === undefined) {
      ordinal = labelNames.length;
      labelOrdinals.set(label, ordinal);
      labelNames.push(label);
      labelSums.push({ sum: new Float64Array(dimensions), count: 0, squaredNorm: undefined });
    }
    return ordinal;
  };

  const labelAdd = (ordinal: number, vector: Float32Array, sign: 1 | -1) => {
    if (ordinal < 0) return;
    const entry = labelSums[ordinal]!;
    for (let dimension = 0; dimension < dimensions; dimension++)
      entry.sum[dimension]! += sign * vector[dimension]!;
    entry.count += sign;
    entry.squaredNorm = undefined;
  };

  const appendRow = (entry: VectorEntry, vector: Float32Array) => {
    const ordinal = ordinalOf(entry.label);
    matrix.append(vector);
    positions.set(entry.id, rows.length);
    rows.push(entry);
    rowLabels.push(ordinal);
    labelAdd(ordinal, vector, 1);
  };

  const rebuild = (entries: VectorEntry[], vectors: Float32Array[]) => {
    matrix = storeFor(dimensions, vectors);
    rows = [];
    positions = new Map();
    rowLabels = [];
    labelOrdinals = new Map();
    labelNames = [];
    labelSums = [];
    entries.forEach((entry, position) => {
      appendRow(entry, vectors[position]!);
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
    if (isFittable(embedder))
      embedder.fit(current.map((entry) => ({ text: entry.text, label: entry.label })));
    const vectors = current.length > 0 ? await embedder.embed(current.map((entry) => entry.text)) : [];
    const before =
      stored ??
      new Map(current.map((entry, position) => [entry.id, matrix.row(positions.get(entry.id) ?? position)]));
    const changes = current
      .map((entry, position) => ({ id: entry.id, vector: vectors[position]! }))
      .filter(
        (change) =>
          !vectorToBlob(change.vector).equals(vectorToBlob(before.get(change.id) ?? new Float32Array(0))),
      );
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
    if (vector && vector.length === dimensions && row.embedderId === embedder.id)
      storedVectors.set(row.id, vector);
  }
  if (isFittable(embedder) || storedVectors.size < rows.length) {
    await refit(storedVectors);
  } else {
    rebuild(
      rows,
      rows.map((entry) => storedVectors.get(entry.id)!),
    );
  }

  const insert = client.transaction((entries: Array<VectorEntry & { vector: Float32Array }>) => {
    for (const entry of entries) {
      db.insert(memoryVectors)
        .values({
          id: entry.id,
          space,
          text: entry.text,
          label: entry.label,
          embedderId: embedder.id,
          vector: vectorToBlob(entry.vector),
          createdAt: entry.createdAt,
        })
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
        return {
          id: entry.id ?? newId(),
          text: entry.text,
          label: entry.label ?? null,
          createdAt,
          vector: vectors[position]!,
        };
      });
      insert(added);
      if (rows.length === 0) matrix = storeFor(dimensions, vectors);
      for (const { vector, ...entry } of added) appendRow(entry, vector);
      version++;
      if (
        isFittable(embedder) &&
        autoRefit !== false &&
        rows.length >= Math.max(1, fittedAt) * (1 + autoRefit)
      )
        await refit();
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
        labelAdd(rowLabels[row]!, matrix.row(row), -1);
        const last = rows.length - 1;
        matrix.removeSwap(row);
        if (row !== last) {
          rows[row] = rows[last]!;
          rowLabels[row] = rowLabels[last]!;
          positions.set(rows[row]!.id, row);
        }
        rows.pop();
        rowLabels.pop();
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
      const scores = matrix.scores(vector, nonZeroOf(vector));
      return topHits(scores, topK, skipper(options)).map(({ row, score }) => ({ ...rows[row]!, score }));
    },
    labelSimilarities(vector, options) {
      checkVector(vector);
      const nonZero = nonZeroOf(vector);
      const scores = matrix.scores(vector, nonZero);
      const skip = skipper(options);
      const best = new Float64Array(labelNames.length).fill(Number.NEGATIVE_INFINITY);
      const bestRow = new Int32Array(labelNames.length).fill(-1);
      const excluded = new Map<number, number[]>();
      for (let row = 0; row < scores.length; row++) {
        const ordinal = rowLabels[row]!;
        if (ordinal < 0) continue;
        if (skip(row)) {
          const list = excluded.get(ordinal);
          if (list) list.push(row);
          else excluded.set(ordinal, [row]);
          continue;
        }
        if (scores[row]! > best[ordinal]!) {
          best[ordinal] = scores[row]!;
          bestRow[ordinal] = row;
        }
      }
      const result: LabelSimilarity[] = [];
      for (let ordinal = 0; ordinal < labelNames.length; ordinal++) {
        if (bestRow[ordinal]! < 0) continue;
        const sum = labelSums[ordinal]!;
        sum.squaredNorm ??= sum.sum.reduce((total, value) => total + value * value, 0);
        let projection = 0;
        for (const dimension of nonZero) projection += vector[dimension]! * sum.sum[dimension]!;
        let squaredNorm = sum.squaredNorm;
        const left = excluded.get(ordinal) ?? [];
        if (left.length > 0) {
          // Leave the excluded entries out of the centroid too: |s - e|² = |s|² - 2 s·e + |e|².
          const removed = new Float64Array(dimensions);
          for (const row of left) {
            const vectorOfRow = matrix.row(row);
            for (let dimension = 0; dimension < dimensions; dimension++)
              removed[dimension]! += vectorOfRow[dimension]!;
            projection -= scores[row]!;
          }
          let along = 0;
          let own = 0;
          for (let dimension = 0; dimension < dimensions; dimension++) {
            along += sum.sum[dimension]! * removed[dimension]!;
            own += removed[dimension]! * removed[dimension]!;
          }
          squaredNorm += own - 2 * along;
        }
        const centroid = squaredNorm > 1e-12 ? projection / Math.sqrt(squaredNorm) : 0;
        result.push({
          label: labelNames[ordinal]!,
          nearest: best[ordinal]!,
          nearestId: rows[bestRow[ordinal]!]!.id,
          centroid,
          count: sum.count - left.length,
        });
      }
      return result.sort((first, second) => second.nearest - first.nearest);
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
