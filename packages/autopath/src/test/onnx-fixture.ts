import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A protobuf writer just big enough for an ONNX ModelProto: varints,
 * length-delimited fields, nothing else. Field numbers follow onnx.proto3.
 */
class ProtoWriter {
  private readonly bytes: number[] = [];

  varint(field: number, value: number): this {
    this.key(field, 0);
    this.raw(value);
    return this;
  }

  bytesField(field: number, value: Uint8Array): this {
    this.key(field, 2);
    this.raw(value.length);
    for (const byte of value) this.bytes.push(byte);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytesField(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (writer: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytesField(field, inner.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }

  private key(field: number, wire: number): void {
    this.raw(field * 8 + wire);
  }

  private raw(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.bytes.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.bytes.push(rest);
  }
}

const FLOAT = 1;
const INT64 = 7;

/** A tensor type with named (`batch`) or fixed (`4`) dimensions. */
function tensorType(writer: ProtoWriter, elementType: number, shape: Array<string | number>): void {
  writer.message(1, (tensor) => {
    tensor.varint(1, elementType);
    tensor.message(2, (dims) => {
      for (const dim of shape)
        dims.message(1, (dimension) =>
          typeof dim === 'number' ? dimension.varint(1, dim) : dimension.string(2, dim),
        );
    });
  });
}

function valueInfo(
  writer: ProtoWriter,
  field: number,
  name: string,
  elementType: number,
  shape: Array<string | number>,
): void {
  writer.message(field, (info) => {
    info.string(1, name);
    info.message(2, (type) => tensorType(type, elementType, shape));
  });
}

function initializer(writer: ProtoWriter, name: string, rows: number[][]): void {
  const width = rows[0]!.length;
  const data = new Float32Array(rows.flat());
  writer.message(5, (tensor) => {
    tensor.varint(1, rows.length);
    tensor.varint(1, width);
    tensor.varint(2, FLOAT);
    tensor.string(8, name);
    tensor.bytesField(9, new Uint8Array(data.buffer));
  });
}

function node(writer: ProtoWriter, opType: string, inputs: string[], outputs: string[]): void {
  writer.message(1, (entry) => {
    for (const input of inputs) entry.string(1, input);
    for (const output of outputs) entry.string(2, output);
    entry.string(3, `${opType.toLowerCase()}_${outputs[0]}`);
    entry.string(4, opType);
  });
}

/** Settings of {@link tinyOnnxModel}. */
export interface TinyModelSettings {
  /** One row per token id: the vector the model gives that token. */
  table: number[][];
  /** Add a `token_type_ids` input whose own table (`typeTable`, one row per type) is added to each token's vector. */
  typeTable?: number[][];
}

/**
 * The bytes of a real ONNX model, built by hand: `Gather(table, input_ids)`
 * gives `last_hidden_state` of shape [batch, sequence, dimensions]. It takes
 * `attention_mask` like a transformer (and ignores it: pooling must mask), and
 * optionally `token_type_ids`, added through a second table. onnxruntime loads
 * and runs it like any exported encoder.
 *
 * @example
 * writeFileSync('model.onnx', tinyOnnxModel({ table: [[1, 0], [0, 1]] }));
 */
export function tinyOnnxModel(settings: TinyModelSettings): Uint8Array {
  const dimensions = settings.table[0]!.length;
  const writer = new ProtoWriter();
  writer.varint(1, 8);
  writer.string(2, 'metnos-test');
  writer.message(7, (graph) => {
    if (settings.typeTable) {
      node(graph, 'Gather', ['table', 'input_ids'], ['token_part']);
      node(graph, 'Gather', ['type_table', 'token_type_ids'], ['type_part']);
      node(graph, 'Add', ['token_part', 'type_part'], ['last_hidden_state']);
    } else {
      node(graph, 'Gather', ['table', 'input_ids'], ['last_hidden_state']);
    }
    graph.string(2, 'tiny-encoder');
    initializer(graph, 'table', settings.table);
    if (settings.typeTable) initializer(graph, 'type_table', settings.typeTable);
    valueInfo(graph, 11, 'input_ids', INT64, ['batch', 'sequence']);
    valueInfo(graph, 11, 'attention_mask', INT64, ['batch', 'sequence']);
    if (settings.typeTable) valueInfo(graph, 11, 'token_type_ids', INT64, ['batch', 'sequence']);
    valueInfo(graph, 12, 'last_hidden_state', FLOAT, ['batch', 'sequence', dimensions]);
  });
  writer.message(8, (opset) => {
    opset.string(1, '');
    opset.varint(2, 13);
  });
  return writer.finish();
}

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];

/**
 * A BERT-style `tokenizer.json` (WordPiece or WordLevel model, lower-casing
 * normaliser, `[CLS] … [SEP]` template) over a small vocabulary. Ids 0–3 are
 * `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`; the given tokens follow in order.
 *
 * @example
 * const json = tinyTokenizerJson(['play', 'music', '##ing']);
 */
export function tinyTokenizerJson(
  tokens: string[],
  kind: 'wordpiece' | 'wordlevel' = 'wordpiece',
): Record<string, unknown> {
  const vocab = Object.fromEntries([...SPECIAL, ...tokens].map((token, id) => [token, id]));
  const special = (content: string) => ({
    id: vocab[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model:
      kind === 'wordpiece'
        ? {
            type: 'WordPiece',
            unk_token: '[UNK]',
            continuing_subword_prefix: '##',
            max_input_chars_per_word: 100,
            vocab,
          }
        : { type: 'WordLevel', unk_token: '[UNK]', vocab },
  };
}

/** Settings of {@link writeTinyModelDir}. */
export interface TinyModelDirSettings {
  /** Each token and the vector the model gives it; special tokens get small fixed vectors. */
  vectors: Record<string, number[]>;
  kind?: 'wordpiece' | 'wordlevel';
  /** Also take `token_type_ids` (BERT-style), with one row per type. */
  typeTable?: number[][];
}

/**
 * Writes a model folder as users download them — `model.onnx` and
 * `tokenizer.json` — so tests run the real loading path of
 * `createOnnxEmbedder` end to end without any download.
 *
 * @example
 * const modelDir = writeTinyModelDir(join(tmp, 'tiny'), { vectors: { play: [1, 0, 0], music: [0.9, 0.1, 0] } });
 * const embedder = await createOnnxEmbedder({ modelDir });
 */
export function writeTinyModelDir(directory: string, settings: TinyModelDirSettings): string {
  const tokens = Object.keys(settings.vectors);
  const dimensions = settings.vectors[tokens[0]!]!.length;
  const specialRow = (position: number) =>
    Array.from({ length: dimensions }, (_, index) => (index === position % dimensions ? 0.05 : 0));
  const table = [
    ...SPECIAL.map((_, position) => specialRow(position)),
    ...tokens.map((token) => settings.vectors[token]!),
  ];
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    join(directory, 'model.onnx'),
    tinyOnnxModel({ table, ...(settings.typeTable ? { typeTable: settings.typeTable } : {}) }),
  );
  writeFileSync(join(directory, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(tokens, settings.kind)));
  return directory;
}
