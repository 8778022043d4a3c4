// What a README block may ask for with `<!-- docs-setup: name -->` on the line above its fence.
//
// A TypeScript fixture's `setup()` returns the names it lists in `names`; the docs check binds
// them before the block's first line (`const { catalog, … } = await fixtures.planner.setup();`)
// and calls `teardown()` after its last. A shell fixture is a few lines of bash run before the
// block, in the same shell. Fixtures stand in only for what a README leaves to the reader (a
// loaded catalog, a model): the seed executors, the sandbox and the stores are the real ones.
// This file is copied next to the generated blocks, so its imports resolve as theirs do.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fixture: bindings for a TypeScript block, or lines of bash for a shell block. */
export interface Fixture {
  names?: readonly string[];
  setup?: () => Promise<Record<string, unknown>>;
  shell?: string;
}

const cleanups: Array<() => Promise<void> | void> = [];

/** Runs what the fixtures of this block left open (servers), last first. */
export async function teardown(): Promise<void> {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

/** A temp workspace holding `files`, as a reader's own folder would. */
async function workspaceWith(files: Record<string, string>): Promise<string> {
  const workspace = await mkdtemp(join(tmpdir(), 'metnos-docs-workspace-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(workspace, path, '..'), { recursive: true });
    await writeFile(join(workspace, path), text);
  }
  return workspace;
}

/** The repository's seed executors, verified against the release key, called through the sandbox. */
async function seedExecutors(workspace: string) {
  const { createAuditLog, createCatalog, createInvoker, readPublicKey } = await import(
    '@metnos/executor-sdk'
  );
  const { createSandboxRunner } = await import('@metnos/sandbox');
  const catalog = createCatalog({
    root: 'executors',
    trustedKeys: [await readPublicKey('keys/metnos-release.pub')],
  });
  await catalog.load();
  const invoker = createInvoker({
    catalog,
    runner: createSandboxRunner(),
    audit: createAuditLog({ workspace }),
  });
  return { catalog, invoker };
}

const DIARY = 'Monday: rain.\nTuesday: sun.\nWednesday: wind.\nThursday: sun again.\n';

/** The turn-by-turn planner: seeds, a vaglio, and a scripted model that reads diary.md's tail. */
async function planner() {
  const { createScriptedModel } = await import('@metnos/planner/test');
  const { createVaglio } = await import('@metnos/vaglio');
  const workspace = await workspaceWith({ 'diary.md': DIARY });
  const { catalog, invoker } = await seedExecutors(workspace);
  const fast = createScriptedModel([
    { toolCalls: [{ name: 'fs_read', args: { path: 'diary.md', mode: 'tail', lines: 3 } }] },
    { text: 'The last three lines: Tuesday: sun. Wednesday: wind. Thursday: sun again.' },
  ]);
  const vaglio = createVaglio();
  return { catalog, invoker, fast, middle: fast, wise: fast, vaglio, approvals: vaglio.approvals, workspace };
}

/** The engine that learns: seeds, a vaglio, the default embedder, a Proposer that plans one read. */
async function engine() {
  const { createScriptedModel } = await import('@metnos/planner/test');
  const { createVaglio } = await import('@metnos/vaglio');
  const { createDefaultEmbedder } = await import('@metnos/autopath');
  const workspace = await workspaceWith({ 'notes/a.md': DIARY });
  const { catalog, invoker } = await seedExecutors(workspace);
  const plan = JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path: 'notes/a.md', mode: 'tail', lines: 3 } }],
    final_message: 'The last lines:\n${step1.content.content}',
  });
  const proposer = createScriptedModel(Array.from({ length: 4 }, () => ({ text: plan })));
  return {
    catalog,
    invoker,
    reviewer: createVaglio(),
    models: { fast: proposer, wise: proposer },
    embedder: createDefaultEmbedder(),
    workspace,
  };
}

/** A vaglio and a call to a side-effecting, non-idempotent executor, as the confirmation example needs. */
async function confirmation() {
  const { createVaglio } = await import('@metnos/vaglio');
  const vaglio = createVaglio();
  const context = { home: '/home/ada', workspace: '/home/ada/metnos' };
  const sendCall = {
    executor: {
      name: 'telegram_send',
      version: '1.0.0',
      capabilities: ['net:http'],
      sideEffects: true,
      idempotent: false,
    },
    args: { text: 'the backup finished' },
    request: 'tell me on telegram when the backup is done',
    turnId: 't1',
    stepIndex: 1,
  };
  return { vaglio, context, sendCall };
}

/**
 * A stand-in for a local Ollama on its default address (127.0.0.1:11434) that answers one chat
 * request with a call of `time_now`. Fails when the port is taken, e.g. by a real Ollama.
 */
async function ollama() {
  const { startOllamaServer } = await import('@metnos/planner/test');
  const server = await startOllamaServer(
    [{ toolCalls: [{ name: 'time_now', args: { zone: 'Europe/Rome' } }] }],
    { port: 11434 },
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    throw new Error('port 11434 is taken (a running Ollama?): the docs check serves a stand-in there');
  });
  cleanups.push(() => server.close());
  return {};
}

/** The fixture a `docs-setup` comment names, if any. */
export function fixtureNamed(name: string | undefined): Fixture | undefined {
  return name === undefined ? undefined : (fixtures as Record<string, Fixture>)[name];
}

export const fixtures = {
  planner: {
    names: ['catalog', 'invoker', 'fast', 'middle', 'wise', 'vaglio', 'approvals', 'workspace'],
    setup: planner,
  },
  engine: { names: ['catalog', 'invoker', 'reviewer', 'models', 'embedder', 'workspace'], setup: engine },
  confirmation: { names: ['vaglio', 'context', 'sendCall'], setup: confirmation },
  ollama: { names: [], setup: ollama },
  workspace: {
    // the folder `metnos init` makes, made first if an earlier block of the README did not
    shell: `[ -f "$XDG_DATA_HOME/metnos-workspace/metnos.toml" ] || metnos init > /dev/null
cd "$XDG_DATA_HOME/metnos-workspace"`,
  },
} satisfies Record<string, Fixture>;
