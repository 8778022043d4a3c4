import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { z } from 'zod';
import { type Embedder, normalizeVector } from './embedder.ts';
import { EmbedderError } from './errors.ts';

/** Settings of {@link createOnnxEmbedder}. */
export interface OnnxEmbedderSettings {
  /** A folder holding `model.onnx` and `tokenizer.json` (and optionally `tokenizer_config.json`). */
  modelDir: string;
  /** How token vectors become one vector: their masked mean, or the first token's. Default `mean`. */
  pooling?: 'mean' | 'cls';
  /** Tokens kept per text, special tokens included. Default 512. */
  maxLength?: number;
  /** The model file inside `modelDir`. Default `model.onnx`. */
  modelFile?: string;
  /** Texts per inference call. Default 16. */
  batchSize?: number;
  /** onnxruntime intra-op threads. Default 1: Metnos shares the machine. */
  threads?: number;
}

const tokenizerFile = z
  .object({ model: z.object({ type: z.string().optional() }).passthrough() })
  .passthrough();
const tokenizerConfig = z.record(z.string(), z.unknown());

/** Output names that carry per-token vectors, in order of preference. */
const TOKEN_OUTPUTS = ['last_hidden_state', 'token_embeddings', 'hidden_states'];
/** Output names that already carry one vector per text. */
const SENTENCE_OUTPUTS = ['sentence_embedding', 'pooler_output', 'embeddings', 'dense_vecs'];

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new EmbedderError({
      reason: 'tokenizer_invalid',
      message: `${path}: ${what} is not valid JSON`,
      cause,
    });
  }
}

function loadTokenizer(modelDir: string): { tokenizer: Tokenizer; padId: number } {
  const path = join(modelDir, 'tokenizer.json');
  if (!existsSync(path)) {
    throw new EmbedderError({
      reason: 'model_missing',
      message: `${path} not found: export the model's tokenizer.json next to model.onnx`,
    });
  }
  const parsed = tokenizerFile.safeParse(readJson(path, 'tokenizer.json'));
  if (!parsed.success)
    throw new EmbedderError({
      reason: 'tokenizer_invalid',
      message: `${path}: no "model" section`,
      cause: parsed.error,
    });
  const configPath = join(modelDir, 'tokenizer_config.json');
  const config = existsSync(configPath)
    ? tokenizerConfig.parse(readJson(configPath, 'tokenizer_config.json'))
    : {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(parsed.data, config);
  } catch (cause) {
    throw new EmbedderError({
      reason: 'tokenizer_invalid',
      message: `${path}: the tokenizer library cannot load it`,
      cause,
    });
  }
  const padding = (parsed.data as { padding?: { pad_id?: number } | null }).padding;
  const padId = padding?.pad_id ?? tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0;
  return { tokenizer, padId };
}

/**
 * Runs a sentence-embedding model exported to ONNX (BGE-M3, MiniLM, E5, …)
 * with onnxruntime on the CPU. The folder is what users download from a model
 * hub: `model.onnx` plus the Hugging Face `tokenizer.json`. Texts are
 * tokenised, padded into one batch, fed as `input_ids` and `attention_mask`
 * (and `token_type_ids` when the graph takes it), and the token vectors are
 * mean- or CLS-pooled and L2-normalised. A model that already outputs one
 * vector per text (`sentence_embedding`) is used as is. Nothing is downloaded.
 *
 * @example
 * const embedder = await createOnnxEmbedder({ modelDir: '/models/bge-m3', pooling: 'cls', maxLength: 256 });
 * const [vector] = await embedder.embed(['turn off the lights in the kitchen']);
 */
export async function createOnnxEmbedder(settings: OnnxEmbedderSettings): Promise<Embedder> {
  const modelDir = resolve(settings.modelDir);
  const pooling = settings.pooling ?? 'mean';
  const maxLength = settings.maxLength ?? 512;
  const batchSize = settings.batchSize ?? 16;
  const modelPath = join(modelDir, settings.modelFile ?? 'model.onnx');
  if (!existsSync(modelPath)) {
    throw new EmbedderError({
      reason: 'model_missing',
      message: `${modelPath} not found: point modelDir at a folder with model.onnx and tokenizer.json`,
    });
  }
  const { tokenizer, padId } = loadTokenizer(modelDir);
  const ort = (await import('onnxruntime-node')).default;
  let session: Awaited<ReturnType<typeof ort.InferenceSession.create>>;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: settings.threads ?? 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
  } catch (cause) {
    throw new EmbedderError({
      reason: 'model_invalid',
      message: `${modelPath}: onnxruntime cannot load it`,
      cause,
    });
  }
  const inputs = new Map(session.inputMetadata.map((metadata) => [metadata.name, metadata]));
  for (const required of ['input_ids', 'attention_mask']) {
    if (!inputs.has(required)) {
      throw new EmbedderError({
        reason: 'model_invalid',
        message: `${modelPath}: the graph has no "${required}" input (it has ${[...inputs.keys()].join(', ')})`,
      });
    }
  }
  const wantsTypes = inputs.has('token_type_ids');
  const integerType = (name: string): 'int32' | 'int64' => {
    const metadata = inputs.get(name);
    return metadata?.isTensor && metadata.type === 'int32' ? 'int32' : 'int64';
  };
  const outputName =
    [...TOKEN_OUTPUTS, ...SENTENCE_OUTPUTS].find((name) => session.outputNames.includes(name)) ??
    session.outputNames[0]!;

  const tensor = (name: string, rows: number[][], width: number) => {
    const type = integerType(name);
    const data =
      type === 'int32' ? new Int32Array(rows.length * width) : new BigInt64Array(rows.length * width);
    rows.forEach((row, position) => {
      for (let column = 0; column < width; column++) {
        const value = row[column] ?? (name === 'input_ids' ? padId : 0);
        if (data instanceof Int32Array) data[position * width + column] = value;
        else data[position * width + column] = BigInt(value);
      }
    });
    return new ort.Tensor(type, data, [rows.length, width]);
  };

  const encode = (text: string) => {
    const encoding = tokenizer.encode(text, { return_token_type_ids: true });
    let ids = encoding.ids;
    let types = encoding.token_type_ids ?? ids.map(() => 0);
    if (ids.length > maxLength) {
      // Keep the closing special token (e.g. [SEP], </s>) the model was trained to see.
      ids = [...ids.slice(0, maxLength - 1), ids[ids.length - 1]!];
      types = [...types.slice(0, maxLength - 1), types[types.length - 1]!];
    }
    return { ids, types };
  };

  const runBatch = async (texts: string[]): Promise<Float32Array[]> => {
    const encoded = texts.map(encode);
    const width = Math.max(1, ...encoded.map((entry) => entry.ids.length));
    const masks = encoded.map((entry) => entry.ids.map(() => 1));
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
      input_ids: tensor(
        'input_ids',
        encoded.map((entry) => entry.ids),
        width,
      ),
      attention_mask: tensor('attention_mask', masks, width),
    };
    if (wantsTypes)
      feeds.token_type_ids = tensor(
        'token_type_ids',
        encoded.map((entry) => entry.types),
        width,
      );
    let output: InstanceType<typeof ort.Tensor>;
    try {
      output = (await session.run(feeds, [outputName]))[outputName]!;
    } catch (cause) {
      throw new EmbedderError({
        reason: 'inference_failed',
        message: `${modelPath}: inference failed`,
        cause,
      });
    }
    const data = output.data as Float32Array;
    const dims = output.dims;
    if (dims.length === 2) {
      const size = dims[1]!;
      return texts.map((_, row) =>
        normalizeVector(Float32Array.from(data.subarray(row * size, (row + 1) * size))),
      );
    }
    if (dims.length !== 3) {
      throw new EmbedderError({
        reason: 'model_invalid',
        message: `${modelPath}: output "${outputName}" has shape [${dims.join(', ')}]`,
      });
    }
    const [, length, size] = dims as [number, number, number];
    return texts.map((_, row) => {
      const vector = new Float32Array(size);
      const tokens = pooling === 'cls' ? 1 : encoded[row]!.ids.length;
      for (let token = 0; token < tokens; token++) {
        const offset = (row * length + token) * size;
        for (let index = 0; index < size; index++) vector[index]! += data[offset + index]!;
      }
      return normalizeVector(vector);
    });
  };

  const embed = async (texts: string[]): Promise<Float32Array[]> => {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize)
      vectors.push(...(await runBatch(texts.slice(start, start + batchSize))));
    return vectors;
  };

  const [probe] = await embed(['metnos']);
  return {
    id: `onnx:${basename(modelDir)}:${pooling}:${maxLength}`,
    dimensions: probe!.length,
    embed,
  };
}
