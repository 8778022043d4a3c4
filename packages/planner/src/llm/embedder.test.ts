import { afterEach, describe, expect, it } from 'vitest';
import { startOllamaEmbedServer, startOpenAiEmbedServer, wireEmbedding } from '../test/embedding-server.ts';
import type { WireServer } from '../test/wire-server.ts';
import { createOllamaEmbedder, createOpenAiEmbedder } from './embedder.ts';
import {
  ProviderConfigError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderUnreachableError,
} from './errors.ts';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function track(server: Promise<WireServer>): Promise<WireServer> {
  const started = await server;
  servers.push(started);
  return started;
}

/** What a promise rejected with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

const norm = (vector: Float32Array) => Math.hypot(...vector);
const unit = (values: number[]) => {
  const length = Math.hypot(...values);
  return values.map((value) => value / length);
};

describe('createOllamaEmbedder', () => {
  it('embeds one text with one request and a batch with one request, in order, at unit length', async () => {
    const server = await track(startOllamaEmbedServer([{}, {}, {}], { dimensions: 8 }));
    const embedder = await createOllamaEmbedder({ baseUrl: server.url });
    const [single] = await embedder.embed(['play some jazz']);
    const batch = await embedder.embed(['play some jazz', 'weather in rome', 'set an alarm']);

    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['POST', '/api/embed'],
      ['POST', '/api/embed'],
      ['POST', '/api/embed'],
    ]);
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: 'bge-m3', input: ['metnos'] },
      { model: 'bge-m3', input: ['play some jazz'] },
      { model: 'bge-m3', input: ['play some jazz', 'weather in rome', 'set an alarm'] },
    ]);
    expect(batch).toHaveLength(3);
    for (const vector of [single!, ...batch]) expect(norm(vector)).toBeCloseTo(1, 5);
    expect([...single!]).toEqual([...batch[0]!]);
    expect([...batch[1]!].map((value) => Number(value.toFixed(5)))).toEqual(
      unit(wireEmbedding('weather in rome', 8)).map((value) => Number(value.toFixed(5))),
    );
    expect(await embedder.embed([])).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it('names provider, model and dimension in its id, learned from one probe', async () => {
    const server = await track(startOllamaEmbedServer([{}], { dimensions: 12 }));
    const embedder = await createOllamaEmbedder({ model: 'nomic-embed-text', baseUrl: `${server.url}/` });
    expect(embedder.id).toBe('ollama:nomic-embed-text:12');
    expect(embedder.dimensions).toBe(12);
    expect(server.remaining()).toBe(0);
  });

  it('refuses an answer whose vectors change length or are not numbers', async () => {
    const server = await track(
      startOllamaEmbedServer(
        [
          {},
          {
            status: 200,
            body: {
              model: 'bge-m3',
              embeddings: [[1, 2, 3]],
              total_duration: 1,
              load_duration: 1,
              prompt_eval_count: 1,
            },
          },
          { status: 200, body: '{"model":"bge-m3","embeddings":"many"}' },
        ],
        { dimensions: 8 },
      ),
    );
    const embedder = await createOllamaEmbedder({ baseUrl: server.url });
    const shorter = await rejection(embedder.embed(['a']));
    expect(ProviderResponseError.isInstance(shorter)).toBe(true);
    expect((shorter as Error).message).toContain('has 3 dimensions where the model first gave 8');
    expect(ProviderResponseError.isInstance(await rejection(embedder.embed(['a'])))).toBe(true);
  });

  it('says how to start Ollama when nothing listens, and how to pull a missing model', async () => {
    const gone = await startOllamaEmbedServer();
    await gone.close();
    const unreachable = await rejection(createOllamaEmbedder({ baseUrl: gone.url }));
    expect(ProviderUnreachableError.isInstance(unreachable)).toBe(true);
    expect((unreachable as Error).message).toContain('ollama serve');

    const server = await track(startOllamaEmbedServer([{}], { models: ['nomic-embed-text'] }));
    const missing = await rejection(createOllamaEmbedder({ baseUrl: server.url }));
    expect(ProviderHttpError.isInstance(missing)).toBe(true);
    expect((missing as ProviderHttpError).status).toBe(404);
    expect((missing as Error).message).toContain('ollama pull bge-m3');
  });

  it('refuses plain http to a host that is not loopback before any request', () => {
    expect(() => createOllamaEmbedder({ baseUrl: 'http://10.0.0.5:11434' })).toThrow(ProviderConfigError);
  });
});

describe('createOpenAiEmbedder', () => {
  it('posts to {baseUrl}/embeddings with the key and names the vector space', async () => {
    const server = await track(startOpenAiEmbedServer([{}, {}], { apiKey: 'sk-test', dimensions: 6 }));
    const embedder = await createOpenAiEmbedder({
      model: 'text-embedding-3-small',
      apiKeyEnv: 'EMBEDDING_KEY',
      env: { EMBEDDING_KEY: 'sk-test' },
      baseUrl: server.baseUrl,
    });
    const vectors = await embedder.embed(['play some jazz', 'weather in rome']);

    expect(embedder.id).toBe('openai:text-embedding-3-small:6');
    expect(vectors.map(norm).map((length) => Number(length.toFixed(5)))).toEqual([1, 1]);
    expect(server.requests[1]).toMatchObject({
      path: '/v1/embeddings',
      headers: { authorization: 'Bearer sk-test' },
      body: { model: 'text-embedding-3-small', input: ['play some jazz', 'weather in rome'] },
    });
  });

  it('needs a model and a key', () => {
    expect(() => createOpenAiEmbedder({ model: '', apiKey: 'k' })).toThrow(/explicit embedding model/);
    expect(() => createOpenAiEmbedder({ model: 'm', env: {} })).toThrow(/OPENAI_API_KEY/);
  });
});
