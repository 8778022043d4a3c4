import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { createEngine, createEngineParts } from '../engine/engine.ts';
import { createGapLog } from '../engine/terminator.ts';
import { createTurnContext, type TurnContext } from '../engine/turn-context.ts';
import type { EngineSettings, TurnOptions } from '../engine/types.ts';
import type { ChatModel } from '../model.ts';
import { testEmbedder } from './embedder.ts';
import { approveAll, type createWorld, scripted } from './world.ts';

type World = Awaited<ReturnType<typeof createWorld>>;

let counter = 0;

/** Fresh L0, L1 and gap stores in real SQLite files under the world's root. */
export function openStores(world: World, options: { name?: string; clock?: () => Date } = {}) {
  const name = options.name ?? `stores-${process.pid}-${counter++}`;
  const file = (store: string) => join(world.root, `${name}-${store}.sqlite`);
  const stores = {
    fastpath: createFastpathStore({ path: file('fastpath'), clock: options.clock }),
    autopath: createAutopathStore({ path: file('autopath'), clock: options.clock }),
    gaps: createGapLog({ path: file('gaps') }),
  };
  return {
    ...stores,
    files: { fastpath: file('fastpath'), autopath: file('autopath'), gaps: file('gaps') },
    close() {
      stores.fastpath.close();
      stores.autopath.close();
      stores.gaps.close();
    },
  };
}

/** Engine settings over the test world: a scripted wise model, no fast model unless given, eager memory. */
export function engineSettings(
  world: World,
  stores: Pick<EngineSettings, 'fastpath' | 'autopath' | 'gaps'>,
  models: { wise: ChatModel; fast?: ChatModel },
  extra: Partial<EngineSettings> = {},
): EngineSettings {
  return {
    catalog: world.catalog,
    invoker: world.invoker,
    reviewer: approveAll,
    models: { fast: models.fast ?? scripted([]), wise: models.wise },
    embedder: testEmbedder(),
    ...stores,
    workspace: world.workspace,
    recognition: { fastpathThreshold: 0.8, autopathThreshold: 0.8 },
    ...extra,
  };
}

/** An engine over fresh stores. */
export function engineOver(
  world: World,
  models: { wise: ChatModel; fast?: ChatModel },
  extra: Partial<EngineSettings> = {},
) {
  const stores = openStores(world);
  const settings = engineSettings(world, stores, models, extra);
  return { engine: createEngine(settings), stores, settings };
}

/** A turn context for a layer test, over the same parts an engine would build. */
export function turnOf(settings: EngineSettings, request: string, options: TurnOptions = {}): TurnContext {
  return createTurnContext(createEngineParts(settings), request, options);
}

/** Adds an `echo` executor (returns `{ echo: args }`) to the world, for plans that carry any argument. */
export async function addEchoExecutor(world: World): Promise<void> {
  await writeSignedExecutor({
    root: world.executors,
    name: 'echo',
    key: world.key,
    sandboxToml: `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576`,
  });
  await world.catalog.load();
}

/**
 * Adds a `words_count` executor (takes a free `text`, answers `{ words }`):
 * what reactive compose can offer in the place of a missing `word_count`.
 */
export async function addWordsCountExecutor(world: World): Promise<void> {
  await writeSignedExecutor({
    root: world.executors,
    name: 'words_count',
    key: world.key,
    sandboxToml: `[sandbox]
profile = "test"
min_tier = "none"
max_duration_ms = 5000
max_memory_mb = 128
max_output_bytes = 1048576`,
    code: `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run(args) { return ok({ words: args.text.split(/\\s+/).filter(Boolean).length }); } });
`,
    schema: {
      definitions: {
        Input: {
          type: 'object',
          properties: { text: { type: 'string', format: 'text' } },
          required: ['text'],
          additionalProperties: false,
        },
        Output: { type: 'object', properties: { words: { type: 'integer' } } },
      },
    },
  });
  await world.catalog.load();
}

/** A plan of one `echo` step whose answer says `says`. */
export const echoPlan = (says: string | number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    steps: [{ tool: 'echo', args: { says, ...extra } }],
    final_message: 'Did ${step1.content.echo.says}.',
  });

/** A plan of one `fs_read` step that reads the last `tail` lines of `path`. */
export const readPlan = (path: string, tail: number) =>
  JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path, tail } }],
    final_message: 'Last lines:\n${step1.content}',
  });
