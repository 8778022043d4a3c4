import { MetnosError } from '@metnos/executor-sdk';

const embedderMarker = Symbol.for('metnos.error.EmbedderError');

/** Why an embedder could not be built or could not embed. */
export type EmbedderFailure = 'model_missing' | 'tokenizer_invalid' | 'model_invalid' | 'inference_failed';

/**
 * An embedder that cannot run: a model directory without `model.onnx` or
 * `tokenizer.json`, a tokenizer the library cannot read, a graph whose inputs
 * or output Metnos does not understand, or a failed inference.
 *
 * @example
 * try { await createOnnxEmbedder({ modelDir: '/models/bge-m3' }); }
 * catch (error) { if (EmbedderError.isInstance(error)) console.error(error.reason, error.message); }
 */
export class EmbedderError extends MetnosError {
  private readonly [embedderMarker] = true;
  readonly reason: EmbedderFailure;

  constructor(settings: { reason: EmbedderFailure; message: string; cause?: unknown }) {
    super({ code: `embedder_${settings.reason}`, message: settings.message, cause: settings.cause });
    this.name = 'EmbedderError';
    this.reason = settings.reason;
  }

  static override isInstance(error: unknown): error is EmbedderError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[embedderMarker] === true
    );
  }
}

const indexMarker = Symbol.for('metnos.error.VectorIndexError');

/**
 * A vector that does not fit the index (wrong dimension) or a recognizer used
 * before it has what it needs.
 *
 * @example
 * try { index.searchVector(new Float32Array(3), 5); }
 * catch (error) { if (VectorIndexError.isInstance(error)) console.error(error.code); }
 */
export class VectorIndexError extends MetnosError {
  private readonly [indexMarker] = true;

  constructor(settings: { code: 'dimension_mismatch' | 'not_calibrated'; message: string; cause?: unknown }) {
    super(settings);
    this.name = 'VectorIndexError';
  }

  static override isInstance(error: unknown): error is VectorIndexError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[indexMarker] === true
    );
  }
}

const storeMarker = Symbol.for('metnos.error.StoreError');

/**
 * Why a SQLite store cannot be used: its bytes are not a SQLite database
 * (`not_a_database`), SQLite finds its pages damaged (`corrupt`), its path is
 * a folder (`not_a_file`), it cannot be opened at all (`unopenable`:
 * permissions, a missing disk), or a newer Metnos wrote it with migrations
 * this version does not know (`written_by_newer`).
 */
export type StoreFailure = 'not_a_database' | 'corrupt' | 'not_a_file' | 'unopenable' | 'written_by_newer';

const STORE_PROBLEMS: Record<StoreFailure, string> = {
  not_a_database: 'is not a SQLite database (its bytes were overwritten or it is another kind of file)',
  corrupt: 'is damaged: SQLite cannot read all of its pages (it may have been cut short or overwritten)',
  not_a_file: 'is a folder, where a database file should be',
  unopenable: 'cannot be opened',
  written_by_newer: 'was written by a newer Metnos: its schema has migrations this version does not know',
};

const FIXES: Partial<Record<StoreFailure, string>> = {
  unopenable:
    'Check that its folder exists and that you may read and write it; if the file itself is at fault, `metnos doctor --repair` moves it aside and creates a new one.',
  written_by_newer:
    'This version leaves it untouched. Open it with that Metnos or a later one; to start over with an empty store in this version instead, move the file aside.',
};

const STORE_FIX =
  'Move it aside and let Metnos start a fresh one: `metnos doctor --repair` keeps the old file as ' +
  '<file>.corrupt-<time> and creates a new, empty store (what it remembered is lost).';

/**
 * A SQLite store (remembered plans, autopaths, the scratchpad, the gap log)
 * that cannot be opened. The message names the file, what is wrong with it
 * and how to fix it; `file` and `reason` say the same for code. Callers that
 * can work without the store (a turn without memory) catch it and go on.
 *
 * @example
 * try { createFastpathStore({ path }); }
 * catch (error) { if (StoreError.isInstance(error)) console.error(error.file, error.reason); }
 */
export class StoreError extends MetnosError {
  private readonly [storeMarker] = true;
  readonly file: string;
  readonly reason: StoreFailure;

  constructor(settings: { file: string; reason: StoreFailure; detail?: string; cause?: unknown }) {
    const detail = settings.detail ? ` (${settings.detail})` : '';
    const fix = FIXES[settings.reason] ?? STORE_FIX;
    super({
      code: `store_${settings.reason}`,
      message: `the store ${settings.file} ${STORE_PROBLEMS[settings.reason]}${detail}. ${fix}`,
      cause: settings.cause,
    });
    this.name = 'StoreError';
    this.file = settings.file;
    this.reason = settings.reason;
  }

  static override isInstance(error: unknown): error is StoreError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[storeMarker] === true
    );
  }
}
