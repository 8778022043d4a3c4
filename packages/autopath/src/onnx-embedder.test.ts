import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbedderError } from './errors.ts';
import { createOnnxEmbedder } from './onnx-embedder.ts';
import { tinyOnnxModel, tinyTokenizerJson, writeTinyModelDir } from './test/onnx-fixture.ts';

const root = mkdtempSync(join(tmpdir(), 'metnos-onnx-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const vectors = {
  play: [1, 0, 0, 0],
  music: [0.8, 0.6, 0, 0],
  song: [0.7, 0.7, 0, 0],
  rain: [0, 0, 1, 0],
  tomorrow: [0, 0, 0.6, 0.8],
  '##ing': [0.5, 0, 0, 0.5],
};
const dot = (left: Float32Array, right: Float32Array) =>
  left.reduce((sum, value, index) => sum + value * right[index]!, 0);
const unit = (values: number[]) => {
  const length = Math.hypot(...values);
  return values.map((value) => value / length);
};
/** [CLS] and [SEP] rows as writeTinyModelDir builds them (ids 2 and 3). */
const CLS = [0, 0, 0.05, 0];
const SEP = [0, 0, 0, 0.05];

describe('createOnnxEmbedder', () => {
  const wordpiece = writeTinyModelDir(join(root, 'wordpiece'), { vectors });

  it('tokenises with tokenizer.json, runs the ONNX graph and mean-pools over real tokens', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece });
    expect(embedder.dimensions).toBe(4);
    expect(embedder.id).toBe('onnx:wordpiece:mean:512');
    const [vector] = await embedder.embed(['Play MUSIC']);
    const expected = unit(
      CLS.map((value, index) => value + vectors.play[index]! + vectors.music[index]! + SEP[index]!),
    );
    expect(Array.from(vector!).map((value) => Number(value.toFixed(5)))).toEqual(
      expected.map((value) => Number(value.toFixed(5))),
    );
  });

  it('gives the same vector alone or padded inside a batch', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece, batchSize: 8 });
    const [alone] = await embedder.embed(['play']);
    const [padded] = await embedder.embed(['play', 'play music song rain tomorrow playing']);
    expect(dot(alone!, padded!)).toBeCloseTo(1, 6);
  });

  it('splits unknown words into word pieces', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece });
    const [playing, play] = await embedder.embed(['playing', 'play']);
    expect(dot(playing!, play!)).toBeLessThan(0.99);
    expect(dot(playing!, play!)).toBeGreaterThan(0.7);
  });

  it('pools the first token with pooling: cls', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece, pooling: 'cls' });
    const [vector] = await embedder.embed(['rain tomorrow']);
    expect(Array.from(vector!)).toEqual(unit(CLS));
  });

  it('puts related requests closer than unrelated ones, with unit vectors', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece });
    const [music, song, rain] = await embedder.embed(['play music', 'play a song', 'rain tomorrow']);
    expect(dot(music!, song!)).toBeGreaterThan(dot(music!, rain!));
    expect(Math.hypot(...music!)).toBeCloseTo(1, 5);
  });

  it('truncates to maxLength and keeps the closing special token', async () => {
    const embedder = await createOnnxEmbedder({ modelDir: wordpiece, maxLength: 3 });
    const [short] = await embedder.embed(['play music song rain']);
    const expected = unit(CLS.map((value, index) => value + vectors.play[index]! + SEP[index]!));
    expect(Array.from(short!).map((value) => Number(value.toFixed(5)))).toEqual(
      expected.map((value) => Number(value.toFixed(5))),
    );
  });

  it('feeds token_type_ids when the graph takes them, and reads a WordLevel tokenizer', async () => {
    const modelDir = writeTinyModelDir(join(root, 'typed'), {
      vectors,
      kind: 'wordlevel',
      typeTable: [
        [0, 0, 0, 1],
        [0, 1, 0, 0],
      ],
    });
    const embedder = await createOnnxEmbedder({ modelDir });
    const [vector] = await embedder.embed(['rain']);
    const typed = [CLS, vectors.rain, SEP].map((row) =>
      row.map((value, index) => value + (index === 3 ? 1 : 0)),
    );
    const expected = unit([0, 1, 2, 3].map((index) => typed.reduce((sum, row) => sum + row[index]!, 0)));
    expect(Array.from(vector!).map((value) => Number(value.toFixed(5)))).toEqual(
      expected.map((value) => Number(value.toFixed(5))),
    );
  });

  it('names the missing file when the folder is incomplete', async () => {
    const empty = join(root, 'empty');
    writeTinyModelDir(empty, { vectors });
    rmSync(join(empty, 'tokenizer.json'));
    const error = await createOnnxEmbedder({ modelDir: empty }).catch((caught: unknown) => caught);
    expect(EmbedderError.isInstance(error) && error.reason).toBe('model_missing');
    const nowhere = await createOnnxEmbedder({ modelDir: join(root, 'nowhere') }).catch(
      (caught: unknown) => caught,
    );
    expect(EmbedderError.isInstance(nowhere) && nowhere.message).toMatch(/model\.onnx not found/);
  });

  it('refuses a tokenizer.json it cannot read and a graph without attention_mask', async () => {
    const broken = join(root, 'broken');
    writeTinyModelDir(broken, { vectors });
    writeFileSync(join(broken, 'tokenizer.json'), '{"not": "a tokenizer"}');
    const error = await createOnnxEmbedder({ modelDir: broken }).catch((caught: unknown) => caught);
    expect(EmbedderError.isInstance(error) && error.reason).toBe('tokenizer_invalid');

    const garbage = join(root, 'garbage');
    writeTinyModelDir(garbage, { vectors });
    writeFileSync(join(garbage, 'model.onnx'), 'not a model');
    const invalid = await createOnnxEmbedder({ modelDir: garbage }).catch((caught: unknown) => caught);
    expect(EmbedderError.isInstance(invalid) && invalid.reason).toBe('model_invalid');
    expect(tinyTokenizerJson(['a']).model).toMatchObject({ type: 'WordPiece' });
    expect(tinyOnnxModel({ table: [[1]] }).byteLength).toBeGreaterThan(50);
  });
});
