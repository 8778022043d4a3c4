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
