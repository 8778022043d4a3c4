import { createDefaultEmbedder, type Embedder } from '@metnos/autopath';
import {
  createOllamaEmbedder,
  createOpenAiEmbedder,
  DEFAULT_OLLAMA_EMBEDDING_MODEL,
  type OpenAiEmbedderSettings,
} from './embedder.ts';
import { ProviderConfigError } from './errors.ts';

/** The embedders memory (L0 fast path, L1 autopath) can be configured with. */
export type MemoryEmbedderKind = 'lexical' | 'ollama' | 'openai';

/** The embedder kinds {@link createMemoryEmbedder} knows. */
export const MEMORY_EMBEDDER_KINDS: readonly MemoryEmbedderKind[] = ['lexical', 'ollama', 'openai'];

/** Settings of {@link createEmbedderWithFallback}. */
export interface FallbackEmbedderSettings {
  /** Builds the configured embedder; may throw (unreachable, HTTP error, bad answer). */
  create: () => Promise<Embedder>;
  /** How the note names it, e.g. `ollama bge-m3`. */
  configured: string;
  /** What answers when it cannot. Default: `createDefaultEmbedder()` (lexical, in process). */
  fallback?: Embedder;
  /**
   * Told once, when the fallback takes over: at creation or at the first
   * call that fails. `note` on the result repeats a note made at creation.
   */
  onNote?: (note: string) => void;
}

/** An embedder for memory and, when it is not the one configured, why. */
export interface MemoryEmbedderResult {
  /**
   * The embedder to give the engine. Its `id` names the vector space that
   * answers (`ollama:bge-m3:1024`, `hashing-v1:…`), so calibrations can be
   * stored per embedder; it changes if the fallback takes over later.
   */
  embedder: Embedder;
  /** What the configuration asked for, e.g. `ollama bge-m3` or `lexical`. */
  configured: string;
  /** Set when the lexical default answers from the start: what failed, what to do. */
  note?: string;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Answers with `configured` until one of its calls fails, then with
 * `fallback` for good: one process never alternates between two vector spaces.
 */
function switchOnFailure(configured: Embedder, fallback: Embedder, onFailure: (error: unknown) => void) {
  let active = configured;
  const embedder: Embedder = {
    get id() {
      return active.id;
    },
    get dimensions() {
      return active.dimensions;
    },
    async embed(texts) {
      if (active === configured) {
        try {
          return await configured.embed(texts);
        } catch (error) {
          if (active === configured) {
            active = fallback;
            onFailure(error);
          }
        }
      }
      return fallback.embed(texts);
    },
  };
  return embedder;
}

/**
 * Builds the configured embedder and falls back to the lexical default when
 * it cannot answer — unreachable, an HTTP error, a timeout, an answer of the
 * wrong shape — with a note said once instead of an exception: memory keeps
 * working, by shared words instead of meaning. A configuration error
 * (`ProviderConfigError`: a missing key, a plain-http remote URL) is thrown,
 * as for the chat models: it is the user's to fix before the first turn.
 *
 * @example
 * const { embedder, note } = await createEmbedderWithFallback({
 *   create: () => createOllamaEmbedder({ model: 'bge-m3' }),
 *   configured: 'ollama bge-m3',
 * });
 * if (note) console.error(note);
 */
export async function createEmbedderWithFallback(
  settings: FallbackEmbedderSettings,
): Promise<MemoryEmbedderResult> {
  const fallback = settings.fallback ?? createDefaultEmbedder();
  const tell = (note: string) => {
    settings.onNote?.(note);
    return note;
  };
  let configured: Embedder;
  try {
    configured = await settings.create();
  } catch (error) {
    if (ProviderConfigError.isInstance(error)) throw error;
    const note = tell(
      `memory: ${settings.configured} could not be used, so the lexical default embedder answers in its place for this run (requests are matched by shared words, not by meaning): ${reasonOf(error)}`,
    );
    return { embedder: fallback, configured: settings.configured, note };
  }
  const embedder = switchOnFailure(configured, fallback, (error) =>
    tell(
      `memory: ${settings.configured} stopped answering, so the lexical default embedder answers in its place from now on in this run (requests are matched by shared words, not by meaning): ${reasonOf(error)}`,
    ),
  );
  return { embedder, configured: settings.configured };
}

/** Settings of {@link createMemoryEmbedder}: which embedder, and its provider's settings. */
export interface MemoryEmbedderSettings extends OpenAiEmbedderSettings {
  /** Default `lexical`: the in-process default, no model. */
  embedder?: MemoryEmbedderKind;
  fallback?: Embedder;
  onNote?: (note: string) => void;
}

/**
 * The embedder memory uses, by name: `lexical` (the default, in process),
 * `ollama` (default model `bge-m3`, default URL `http://localhost:11434`) or
 * `openai` (any OpenAI-compatible `/embeddings`; model required). A remote
 * one that cannot answer is replaced by the lexical default, with a note
 * (see {@link createEmbedderWithFallback}).
 *
 * @example
 * const { embedder, note } = await createMemoryEmbedder({ embedder: 'ollama', model: 'bge-m3' });
 * if (note) console.error(note); // Ollama not running: the lexical default answers
 * const engine = createEngine({ ...parts, embedder });
 */
export async function createMemoryEmbedder(
  settings: MemoryEmbedderSettings = {},
): Promise<MemoryEmbedderResult> {
  const kind = settings.embedder ?? 'lexical';
  if (kind === 'lexical')
    return { embedder: settings.fallback ?? createDefaultEmbedder(), configured: 'lexical' };
  if (kind !== 'ollama' && kind !== 'openai') {
    throw new ProviderConfigError({
      field: 'embedder',
      message: `unknown embedder "${String(kind)}"; use one of ${MEMORY_EMBEDDER_KINDS.join(', ')}`,
    });
  }
  const model = kind === 'ollama' ? (settings.model ?? DEFAULT_OLLAMA_EMBEDDING_MODEL) : settings.model;
  return createEmbedderWithFallback({
    create: () =>
      kind === 'ollama' ? createOllamaEmbedder({ ...settings, model }) : createOpenAiEmbedder(settings),
    configured: `${kind} ${model ?? '(no model)'}`,
    fallback: settings.fallback,
    onNote: settings.onNote,
  });
}
