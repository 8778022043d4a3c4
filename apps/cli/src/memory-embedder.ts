import { createOnnxEmbedder } from '@metnos/autopath';
import {
  createEmbedderWithFallback,
  createMemoryEmbedder,
  type Environment,
  type MemoryEmbedderResult,
  ProviderConfigError,
} from '@metnos/planner';
import type { AppConfig } from './config.ts';
import { CliFailure } from './output.ts';

/** What {@link loadMemoryEmbedder} takes from the edge besides the config. */
export interface MemoryEmbedderOptions {
  /** Where `embedder_api_key_env` is read; the CLI passes `process.env`. */
  env?: Environment;
  /** Transport for the remote embedders; tests inject their own. */
  fetch?: typeof fetch;
  /**
   * Told once when the lexical default answers in the configured embedder's
   * place (at start, or when it stops answering mid-run): print it on stderr.
   */
  onNote?: (note: string) => void;
}

/**
 * The embedder L0 and L1 use, from `[runtime.memory]` in metnos.toml:
 * `embedder = "lexical" | "onnx" | "ollama" | "openai"` (default `onnx` when
 * `model_dir` is set, else `lexical`), `embedder_model` (Ollama default
 * `bge-m3`), `embedder_url`, `embedder_api_key_env` (openai). A model that
 * cannot answer leaves memory on the lexical default with one note through
 * `onNote` (also returned as `note` when it happened at start), never an
 * exception; a configuration mistake is a `CliFailure` naming the section.
 *
 * @example
 * const { embedder } = await loadMemoryEmbedder(config, { env: process.env, onNote: (note) => io.err(note) });
 * const engine = createEngine({ ...parts, embedder });
 * // result.embedder.id: 'ollama:bge-m3:1024', or the lexical default's id after a fallback
 */
export async function loadMemoryEmbedder(
  config: AppConfig,
  options: MemoryEmbedderOptions = {},
): Promise<MemoryEmbedderResult> {
  const memory = config.runtime.memory ?? {};
  const kind = memory.embedder ?? (memory.model_dir ? 'onnx' : 'lexical');
  try {
    if (kind === 'onnx') {
      const modelDir = memory.model_dir;
      if (!modelDir) throw new CliFailure('metnos.toml [runtime.memory]: embedder = "onnx" needs model_dir');
      return await createEmbedderWithFallback({
        create: () => createOnnxEmbedder({ modelDir }),
        configured: `onnx ${modelDir}`,
        onNote: options.onNote,
      });
    }
    return await createMemoryEmbedder({
      embedder: kind,
      model: memory.embedder_model,
      baseUrl: memory.embedder_url,
      apiKeyEnv: memory.embedder_api_key_env,
      env: options.env,
      fetch: options.fetch,
      onNote: options.onNote,
    });
  } catch (error) {
    if (ProviderConfigError.isInstance(error))
      throw new CliFailure(`metnos.toml [runtime.memory]: ${error.message}`);
    throw error;
  }
}
