import { createDefaultEmbedder } from '@metnos/autopath';
import { afterEach, describe, expect, it } from 'vitest';
import { startOllamaEmbedServer } from '../test/embedding-server.ts';
import type { WireServer, WireStep } from '../test/wire-server.ts';
import { ProviderConfigError } from './errors.ts';
import { createMemoryEmbedder } from './memory-embedder.ts';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function ollama(script: WireStep[], dimensions = 8): Promise<WireServer> {
  const server = await startOllamaEmbedServer(script, { dimensions });
  servers.push(server);
  return server;
}

const lexicalId = createDefaultEmbedder().id;
const ollamaFields = { model: 'bge-m3', total_duration: 1, load_duration: 1, prompt_eval_count: 1 };

describe('createMemoryEmbedder', () => {
  it('is the lexical default when nothing else is configured', async () => {
    const result = await createMemoryEmbedder();
    expect(result.configured).toBe('lexical');
    expect(result.note).toBeUndefined();
    expect(result.embedder.id).toBe(lexicalId);
  });

  it('uses the configured Ollama model when it answers, under its own id', async () => {
    const server = await ollama([{}, {}]);
    const notes: string[] = [];
    const result = await createMemoryEmbedder({
      embedder: 'ollama',
      baseUrl: server.url,
      onNote: (note) => notes.push(note),
    });
    expect(result.configured).toBe('ollama bge-m3');
    expect(result.note).toBeUndefined();
    expect(result.embedder.id).toBe('ollama:bge-m3:8');
    const [vector] = await result.embedder.embed(['play some jazz']);
    expect(vector).toHaveLength(8);
    expect(notes).toEqual([]);
  });

  it('falls back to the lexical default with one note when Ollama is not running', async () => {
    const gone = await startOllamaEmbedServer();
    await gone.close();
    const notes: string[] = [];
    const result = await createMemoryEmbedder({
      embedder: 'ollama',
      baseUrl: gone.url,
      onNote: (note) => notes.push(note),
    });

    expect(result.embedder.id).toBe(lexicalId);
    expect(result.note).toMatch(
      /^memory: ollama bge-m3 could not be used, so the lexical default embedder answers in its place/,
    );
    expect(result.note).toContain(`unreachable at ${gone.url}`);
    expect(result.note).toContain('ollama serve');
    expect(notes).toEqual([result.note]);
    const [vector] = await result.embedder.embed(['play some jazz']);
    expect(vector).toHaveLength(result.embedder.dimensions);
  });

  it.each<[string, WireStep, RegExp]>([
    ['a 500', { status: 500, message: 'out of memory' }, /HTTP 500.*out of memory/],
    ['garbage', { status: 200, body: '<html>proxy error</html>' }, /expected shape/],
    [
      'an empty vector',
      { status: 200, body: { ...ollamaFields, embeddings: [[]] } },
      /the embedding is empty/,
    ],
    [
      'a value past 32-bit floats',
      { status: 200, body: { ...ollamaFields, embeddings: [[1e39, 1]] } },
      /not a finite 32-bit number/,
    ],
  ])('falls back when Ollama answers %s', async (_what, step, reason) => {
    const server = await ollama([step]);
    const result = await createMemoryEmbedder({ embedder: 'ollama', baseUrl: server.url });
    expect(result.embedder.id).toBe(lexicalId);
    expect(result.note).toMatch(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('falls back when Ollama does not answer in time', async () => {
    const server = await ollama([{ hang: true }]);
    const result = await createMemoryEmbedder({ embedder: 'ollama', baseUrl: server.url, timeoutMs: 50 });
    expect(result.embedder.id).toBe(lexicalId);
    expect(result.note).toContain('did not answer within 50 ms');
  });

  it('switches to the lexical default for good when a call fails after a good start, noting it once', async () => {
    const server = await ollama([{}, {}, { status: 500, message: 'model crashed' }]);
    const notes: string[] = [];
    const { embedder } = await createMemoryEmbedder({
      embedder: 'ollama',
      baseUrl: server.url,
      onNote: (note) => notes.push(note),
    });
    expect((await embedder.embed(['first']))[0]).toHaveLength(8);
    const [after] = await embedder.embed(['second']);
    await embedder.embed(['third']);

    expect(after).toHaveLength(createDefaultEmbedder().dimensions);
    expect(embedder.id).toBe(lexicalId);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^memory: ollama bge-m3 stopped answering, so the lexical default/);
    expect(notes[0]).toContain('model crashed');
    expect(server.requests).toHaveLength(3);
  });

  it('notes the switch once when calls in flight together fail together', async () => {
    const server = await ollama([{}, { status: 503 }, { status: 503 }]);
    const notes: string[] = [];
    const { embedder } = await createMemoryEmbedder({
      embedder: 'ollama',
      baseUrl: server.url,
      onNote: (note) => notes.push(note),
    });
    const answers = await Promise.all([embedder.embed(['first']), embedder.embed(['second'])]);
    expect(answers.map(([vector]) => vector?.length)).toEqual([embedder.dimensions, embedder.dimensions]);
    expect(embedder.id).toBe(lexicalId);
    expect(notes).toHaveLength(1);
  });

  it('throws configuration errors instead of hiding them behind the fallback', async () => {
    await expect(
      createMemoryEmbedder({ embedder: 'openai', model: 'text-embedding-3-small', env: {} }),
    ).rejects.toSatisfy(ProviderConfigError.isInstance);
    await expect(
      createMemoryEmbedder({ embedder: 'ollama', baseUrl: 'http://192.168.1.9:11434' }),
    ).rejects.toSatisfy(ProviderConfigError.isInstance);
    await expect(createMemoryEmbedder({ embedder: 'onnx' as 'lexical' })).rejects.toThrow(/unknown embedder/);
  });
});
