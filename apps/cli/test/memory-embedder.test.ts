import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultEmbedder } from '@metnos/autopath';
import { findWorkspaceConfig } from '@metnos/executor-sdk';
import { startOllamaEmbedServer } from '@metnos/planner/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AppConfig, readAppConfig } from '../src/config.ts';
import { loadMemoryEmbedder } from '../src/memory-embedder.ts';
import { CliFailure } from '../src/output.ts';
import { writeWorkspaceConfig } from './__fixtures__/cli.ts';

let work: string;
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-memory-embedder-'));
  await writeWorkspaceConfig(work, 'http://127.0.0.1:11434');
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await rm(work, { recursive: true, force: true });
});

/** Appends a `[runtime.memory]` table to the workspace's metnos.toml and reads the app config from the file. */
async function configWith(memoryTable: string): Promise<AppConfig> {
  await appendFile(join(work, 'metnos.toml'), `\n[runtime.memory]\n${memoryTable}\n`);
  const config = await findWorkspaceConfig(work);
  return readAppConfig({ cwd: work, config, executors: work, workspace: work, configDir: undefined });
}

const lexicalId = createDefaultEmbedder().id;

describe('loadMemoryEmbedder', () => {
  it('builds the Ollama embedder metnos.toml names with embedder, embedder_model and embedder_url', async () => {
    const server = await startOllamaEmbedServer([{}, {}], { dimensions: 16, models: ['nomic-embed-text'] });
    closers.push(server.close);
    const config = await configWith(
      `embedder = "ollama"\nembedder_model = "nomic-embed-text"\nembedder_url = "${server.url}"`,
    );
    const notes: string[] = [];
    const result = await loadMemoryEmbedder(config, { onNote: (note) => notes.push(note) });

    expect(result.embedder.id).toBe('ollama:nomic-embed-text:16');
    expect(await result.embedder.embed(['wake me up at 7'])).toHaveLength(1);
    expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual([
      'nomic-embed-text',
      'nomic-embed-text',
    ]);
    expect(notes).toEqual([]);
  });

  it('falls back to the lexical default with one note when embedder_url has no Ollama behind it', async () => {
    const gone = await startOllamaEmbedServer();
    await gone.close();
    const config = await configWith(`embedder = "ollama"\nembedder_url = "${gone.url}"`);
    const notes: string[] = [];
    const result = await loadMemoryEmbedder(config, { onNote: (note) => notes.push(note) });

    expect(result.embedder.id).toBe(lexicalId);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^memory: ollama bge-m3 could not be used, so the lexical default embedder/);
    expect(notes[0]).toContain('ollama serve');
    expect(result.note).toBe(notes[0]);
  });

  it('keeps the lexical default when [runtime.memory] names no embedder', async () => {
    const result = await loadMemoryEmbedder(await configWith('fastpath_threshold = 0.9'));
    expect(result).toMatchObject({ configured: 'lexical' });
    expect(result.embedder.id).toBe(lexicalId);
  });

  it('falls back with a note when the ONNX model folder holds no model', async () => {
    const result = await loadMemoryEmbedder(await configWith(`model_dir = "${join(work, 'no-model')}"`));
    expect(result.embedder.id).toBe(lexicalId);
    expect(result.note).toContain('model.onnx not found');
  });

  it('refuses an unknown embedder and names a missing key as a metnos.toml mistake', async () => {
    await expect(configWith('embedder = "word2vec"')).rejects.toThrow(/field "runtime.memory.embedder"/);
    await rm(join(work, 'metnos.toml'));
    await writeWorkspaceConfig(work, 'http://127.0.0.1:11434');
    const config = await configWith(
      'embedder = "openai"\nembedder_model = "text-embedding-3-small"\nembedder_api_key_env = "NO_SUCH_KEY"',
    );
    const failure = await loadMemoryEmbedder(config, { env: {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliFailure);
    expect((failure as Error).message).toBe(
      'metnos.toml [runtime.memory]: openai needs a non-empty API key: set the environment variable NO_SUCH_KEY',
    );
  });
});

describe('metnos ask with [runtime.memory] embedder = "ollama"', () => {
  it('answers with the lexical default and says once on stderr that the embedding model did not answer', async () => {
    const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { cli, writeWorkspaceConfig } = await import('./__fixtures__/cli.ts');
    const gone = await startOllamaEmbedServer();
    await gone.close();
    const dir = await mkdtemp(join(tmpdir(), 'metnos-ask-embedder-'));
    const saved = { ...process.env };
    try {
      await writeWorkspaceConfig(dir, 'http://127.0.0.1:9');
      const toml = join(dir, 'metnos.toml');
      await writeFile(
        toml,
        `${await readFile(toml, 'utf8')}\n[runtime.memory]\nembedder = "ollama"\nembedder_url = "${gone.url}"\n`,
      );
      process.env.INIT_CWD = dir;
      process.env.METNOS_CONFIG_DIR = join(dir, 'config');
      const answer = await cli(['ask', 'what time is it?']);
      expect(answer.code, answer.err).toBe(0);
      expect(answer.out).toMatch(/^It is \d\d:\d\d/m);
      expect(answer.err.match(/could not be used, so the lexical default embedder/g)).toHaveLength(1);
    } finally {
      process.env = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
