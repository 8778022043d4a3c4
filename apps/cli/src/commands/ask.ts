import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  createAuditLog,
  type createCatalog,
  createInvoker,
  type HostServices,
  type ReceiptChain,
} from '@metnos/executor-sdk';
import { createMnestome } from '@metnos/mnestome';
import {
  type ChatModel,
  createEngine,
  createFillerCache,
  createGapLog,
  createPlanner,
  createReplayStore,
  createScratchpad,
  createTiers,
  createTurnLog,
  ENGINE_VARIANTS,
  type EngineResult,
  type EngineVariant,
  engineVariant,
  executorContract,
  withReceipts,
} from '@metnos/planner';
import { createSandboxRunner } from '@metnos/sandbox';
import { createComposer } from '@metnos/synt';
import { createApprovalStore, createFileApprovalDb, createVaglio, createVerifier } from '@metnos/vaglio';
import { openAgentGraphs, printAgentRun } from '../agents.ts';
import { type AppConfig, DEFAULT_LLM, dataDir, readAppConfig, sandboxPool } from '../config.ts';
import { loadMemoryEmbedder } from '../memory-embedder.ts';
import { CliFailure, type CliIo } from '../output.ts';
import { openReceiptChain } from '../receipts.ts';
import { cliReminders } from '../reminders.ts';
import { formatNotices, openOrDoWithout, type StoreName, type StoreNotice, storePath } from '../stores.ts';
import {
  type CliPlace,
  placeCatalog,
  placeCredentials,
  placeProtection,
  resolvePlace,
  trustedKeys,
} from '../workspace.ts';

export const ASK_HELP = `metnos ask — one turn: a request in plain words, answered through the executors

Usage:
  metnos ask "<request>" [options]
  metnos feedback <turn-id> <up|down|retry>

Options:
  --engine <name>           which engine answers (default: METNOS_ENGINE, else [runtime] engine, else learning):
                              learning  memory first, then the model's plan, Recovery, the Terminator
                              oneshot   every turn to the model's plan (memory is recorded, never served)
                              strict    as learning, without Recovery: a failed plan ends the turn
                              loop      the turn-by-turn loop with native tool calls
  --mode <local|online|hybrid>  loop mode (default from metnos.toml, else local)
  --agents <name>           run the agent graph [agents.<name>] of metnos.toml on the request instead
  --yes                     approve calls with side effects without asking (each is still reviewed)
  --json                    print the whole result as JSON
  --executors <dir>         the executors folder
  --workspace <dir>         the workspace the executors work in

The models come from [runtime.llm] in metnos.toml (default: Ollama qwen3:8b on http://localhost:11434).
The learning engines save each turn's replay bundle in <data>/replay (see metnos replay --help).
Every model call and executor invocation is receipted (metnos receipts verify).
`;

/** The engines `ask` runs: the learning engine's variants, and the step-by-step loop. */
export const ENGINE_KINDS = [...(Object.keys(ENGINE_VARIANTS) as EngineVariant[]), 'loop'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/**
 * The engine of a turn: `--engine`, else `METNOS_ENGINE`, else `[runtime] engine` (the config
 * schema already refused any other value there). An unknown name is a usage error (exit 2).
 */
export function engineKindOf(flag: string | undefined, config: AppConfig, env = process.env): EngineKind {
  const [name, from] =
    flag !== undefined
      ? [flag, '--engine']
      : env.METNOS_ENGINE
        ? [env.METNOS_ENGINE, 'METNOS_ENGINE']
        : [config.runtime.engine, '[runtime] engine'];
  if (!(ENGINE_KINDS as readonly string[]).includes(name))
    throw new CliFailure(
      `unknown engine "${name}" (${from}): known engines are ${ENGINE_KINDS.join(', ')}`,
      2,
    );
  return name as EngineKind;
}

export async function confirm(io: CliIo, question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await readline.question(`${question} [y/N] `)).trim());
  } finally {
    readline.close();
    io.err('');
  }
}

interface ExecutionParts {
  catalog: ReturnType<typeof createCatalog>;
  invoker: ReturnType<typeof createInvoker>;
  vaglio: ReturnType<typeof createVaglio>;
  /** The workspace's signed receipt chain: the invoker and the models write through it. */
  receipts: ReceiptChain;
}

export interface Runtime {
  place: CliPlace;
  config: AppConfig;
  data: string;
  /** The catalog, the sandboxed invoker and the vaglio of this place: what runs a plan (`replay` needs no model). */
  execution(): Promise<ExecutionParts>;
  build(): Promise<ExecutionParts & { models: { fast: ChatModel; middle: ChatModel; wise: ChatModel } }>;
}

/** The place, its config and data folder, and how to build what a turn runs on. */
export async function runtime(options: {
  executors?: string;
  workspace?: string;
  /** The sandbox's warm pool unless `[sandbox] pool` says otherwise (`metnos serve`). */
  pool?: boolean;
}): Promise<Runtime> {
  const place = await resolvePlace(options);
  const config = readAppConfig(place);
  const data = dataDir(place, config);
  const execution = async (): Promise<ExecutionParts> => {
    const keys = await trustedKeys(place, place.executors);
    const catalog = await placeCatalog(place, keys);
    await catalog.load();
    const runner = createSandboxRunner({
      hostOverrides: config.sandbox?.host_overrides,
      pool: sandboxPool(config, options.pool ?? false),
    });
    // every invocation and every model call appends a signed receipt beside the audit log
    const receipts = await openReceiptChain(place.workspace);
    const invoker = createInvoker({
      catalog,
      runner,
      audit: createAuditLog({ workspace: place.workspace }),
      receipts,
      protect: placeProtection(place, data),
      credentials: await placeCredentials(place),
    });
    const approvals = createApprovalStore({ db: createFileApprovalDb(join(data, 'approvals.json')) });
    const vaglio = createVaglio({
      threshold: config.vaglio?.threshold,
      log: { dir: join(data, 'vaglio') },
      approvals,
      protect: placeProtection(place, data).map((entry) => entry.path),
    });
    return { catalog, invoker, vaglio, receipts };
  };
  return {
    place,
    config,
    data,
    execution,
    async build() {
      const parts = await execution();
      const tiers = createTiers(config.runtime.llm ?? DEFAULT_LLM, { env: process.env });
      const models = {
        fast: withReceipts(tiers.fast, parts.receipts),
        middle: withReceipts(tiers.middle, parts.receipts),
        wise: withReceipts(tiers.wise, parts.receipts),
      };
      return { ...parts, models };
    },
  };
}

/** Where the learning engine keeps one replay bundle per turn. */
export function replayDir(data: string): string {
  return join(data, 'replay');
}

/**
 * An answer goes to stdout; a turn that ended otherwise (a model to start, an executor
 * missing, an approval to give) goes to stderr, as every failure of the CLI does, with the
 * exit code 1. `--json` prints the whole result to stdout either way.
 */
function printTurn(io: CliIo, answered: boolean, lines: string[]): void {
  for (const line of lines) (answered ? io.out : io.err)(line);
}

/** Opens the engine's stores (memory, the gap log, the mnestome, the fillers' answers); closes what it opened when one fails. */
function openEngineStores(open: <T>(name: StoreName, create: (at: { path: string }) => T) => T) {
  const opened: Array<{ close(): void }> = [];
  const keep = <T extends { close(): void }>(store: T): T => {
    opened.push(store);
    return store;
  };
  try {
    return {
      fastpath: keep(open('fastpath', createFastpathStore)),
      autopath: keep(open('autopath', createAutopathStore)),
      gaps: keep(open('gaps', createGapLog)),
      mnestome: keep(open('mnestome', createMnestome)),
      fillers: keep(open('fillers', createFillerCache)),
      close: () => {
        for (const store of opened) store.close();
      },
    };
  } catch (error) {
    for (const store of opened) store.close();
    throw error;
  }
}

/**
 * The learning engine over the memory of the data folder, as `ask` and
 * `feedback` both use it: one engine, so feedback takes the same path as a
 * turn (`engine.feedback`). For `ask` a store that cannot be opened is
 * replaced by an empty one for this run, and said so on stderr; `strict`
 * (feedback, which is about what the store holds) stops with its `StoreError`.
 * `serve` builds the same engine with `ask: false`: no question on the terminal,
 * a call that needs approval ends its turn pending, for the client to answer.
 */
export async function openLearningEngine(
  context: Runtime,
  io: CliIo,
  options: {
    yes: boolean;
    strict?: boolean;
    variant: EngineVariant;
    ask?: boolean;
    /** Calls approved elsewhere (serve: an approval decided over HTTP or Telegram, in its re-run). */
    approved?: (call: { tool: string; args: unknown; step: number }) => Promise<boolean>;
    /** Host services beside the engine's `model`; default `reminders` over the data folder's scheduler store. */
    hostServices?: HostServices;
  },
) {
  const { config, data, place } = context;
  const parts = await context.build();
  const notices: StoreNotice[] = [];
  const { fastpath, autopath, gaps, mnestome, fillers, close } = openEngineStores((name, create) =>
    // feedback is about memory: its stores must open; the mnestome and the fillers' answers never stop a turn
    options.strict && name !== 'mnestome' && name !== 'fillers'
      ? create({ path: storePath(data, name) })
      : openOrDoWithout(name, data, create, notices),
  );
  for (const line of formatNotices(notices)) io.err(line);
  // reminders executors ask (host:reminders) go to the store `metnos schedule` lists, unless the caller brings its own
  const reminders = options.hostServices ? undefined : cliReminders(data, config);
  const closeAll = () => {
    reminders?.close();
    close();
  };
  try {
    const budget = config.runtime.budget;
    const engine = createEngine(
      {
        catalog: parts.catalog,
        invoker: parts.invoker,
        reviewer: parts.vaglio,
        models: parts.models,
        // [runtime.memory] embedder: lexical (default), onnx, ollama or openai; a model that does not
        // answer leaves the lexical default in its place, said once on stderr
        embedder: (await loadMemoryEmbedder(config, { env: process.env, onNote: (note) => io.err(note) }))
          .embedder,
        fastpath,
        autopath,
        gaps,
        // what a plan's fillers were answered, so the plan served from memory by a later run asks no model
        fillerCache: fillers,
        workspace: place.workspace,
        actor: config.runtime.actor,
        timeZone: config.runtime.time_zone,
        executorConfig: config.executors?.config,
        hostServices: options.hostServices ?? { reminders: reminders!.service },
        recognition: {
          fastpathThreshold: config.runtime.memory?.fastpath_threshold,
          autopathThreshold: config.runtime.memory?.autopath_threshold,
        },
        approved: async (call) =>
          options.yes ||
          (options.approved !== undefined && (await options.approved(call))) ||
          (options.ask !== false &&
            (await confirm(io, `Run ${call.tool} with ${JSON.stringify(call.args)}?`))),
        // plans' verify steps are ruled by the vaglio's verifier (without one, a verify step blocks)
        verifier: createVerifier(),
        budget: budget && { toolCalls: budget.tool_calls, tokens: budget.tokens, costUsd: budget.cost_usd },
        // one bundle per turn, for `metnos replay`; a bundle that cannot be written never fails the answer
        replay: createReplayStore({ dir: replayDir(data) }),
        // passages between executors and proto-mnests for missing tools; Recovery composes existing ones
        mnestome,
        composer: createComposer(),
      },
      engineVariant(options.variant),
    );
    const memory = notices.some((notice) => notice.store === 'fastpath' || notice.store === 'autopath')
      ? ' · without memory'
      : '';
    return {
      engine,
      memory,
      close: closeAll,
      invoker: parts.invoker,
      parts,
      stores: { fastpath, autopath, gaps },
      mnestome,
    };
  } catch (error) {
    closeAll();
    throw error;
  }
}

/** Prints a turn of the learning engine; returns the exit code. */
function printEngineTurn(
  io: CliIo,
  result: EngineResult,
  options: { json: boolean; memory: string },
): number {
  const answered = result.finalKind === 'answer';
  if (options.json) io.out(JSON.stringify(result, null, 2));
  else
    printTurn(io, answered, [
      result.finalMessage,
      ...(result.pending
        ? [`(not run: ${result.pending.tool} needs your approval — ask again with --yes to approve it)`]
        : []),
      `— layer: ${result.layer} · ${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'} · ${Math.round(result.latencyMs)} ms${options.memory} · turn ${result.turnId}`,
    ]);
  return answered ? 0 : 1;
}

export async function askCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      engine: { type: 'string' },
      mode: { type: 'string' },
      agents: { type: 'string' },
      yes: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const request = positionals.join(' ').trim();
  if (values.help || !request) {
    io.out(ASK_HELP);
    return values.help ? 0 : 2;
  }
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  const { config, data, place } = context;
  if (values.agents !== undefined) {
    // an agent graph of metnos.toml instead of the engine: its calls with side effects ask here, as a turn's do
    const graphs = await openAgentGraphs(context, {
      approved: async (call) =>
        values.yes ||
        (await confirm(io, `Let ${call.agentId} run ${call.tool} with ${JSON.stringify(call.args)}?`)),
    });
    try {
      return printAgentRun(io, await graphs.run(values.agents, request), { json: values.json });
    } finally {
      graphs.close();
    }
  }
  const engineKind = engineKindOf(values.engine, config);

  if (engineKind !== 'loop') {
    const { engine, memory, close } = await openLearningEngine(context, io, {
      yes: values.yes,
      variant: engineKind,
    });
    try {
      return printEngineTurn(io, await engine.runTurn(request), { json: values.json, memory });
    } finally {
      close();
    }
  }

  const parts = await context.build();
  const notices: StoreNotice[] = [];
  const scratchpad = openOrDoWithout('scratchpad', data, createScratchpad, notices);
  const mnestome = openOrDoWithout('mnestome', data, createMnestome, notices);
  for (const line of formatNotices(notices)) io.err(line);
  try {
    const hybrid = config.runtime.hybrid;
    const planner = createPlanner({
      catalog: parts.catalog,
      invoker: parts.invoker,
      models: parts.models,
      reviewer: parts.vaglio,
      approvals: parts.vaglio.approvals,
      scratchpad,
      turnLog: createTurnLog({ dir: join(data, 'turns') }),
      workspace: place.workspace,
      mode: (values.mode as 'local' | 'online' | 'hybrid' | undefined) ?? config.runtime.mode,
      hybrid: hybrid && {
        escalateOnKeywords: hybrid.escalate_on_keywords,
        escalateOnCapabilities: hybrid.escalate_on_capabilities,
        escalateBelowConfidence: hybrid.escalate_below_confidence,
      },
      caps: config.runtime.caps && {
        steps: config.runtime.caps.steps,
        sameExecutor: config.runtime.caps.same_executor,
      },
      budget: config.runtime.budget && {
        toolCalls: config.runtime.budget.tool_calls,
        tokens: config.runtime.budget.tokens,
        costUsd: config.runtime.budget.cost_usd,
      },
      executorConfig: config.executors?.config,
      mnestome,
      composer: createComposer(),
    });
    let result = await planner.runTurn(request);
    while (result.finalKind === 'pending_approval' && result.pending) {
      const pending = result.pending;
      const yes =
        values.yes || (await confirm(io, `Run ${pending.executor} with ${JSON.stringify(pending.args)}?`));
      if (yes) {
        const executor = parts.catalog.get(pending.executor)!;
        await parts.vaglio.approvals.approve(pending.approvalId, {
          executor: executorContract(executor),
          args: pending.args,
          request,
          stepIndex: result.steps.length + 1,
          turnId: result.turnId,
        });
      }
      result = await planner.resume(result.turnId, { approved: yes });
    }
    const answered = result.finalKind === 'answer';
    if (values.json) io.out(JSON.stringify(result, null, 2));
    else
      printTurn(io, answered, [
        result.finalMessage,
        `— ${result.routedMode} loop · ${result.finalKind} · ${result.steps.length} step(s) · turn ${result.turnId}`,
      ]);
    return answered ? 0 : 1;
  } finally {
    scratchpad.close();
    mnestome.close();
  }
}

export const FEEDBACK_HELP = `metnos feedback — tell the memory how a turn went

Usage:
  metnos feedback <turn-id> <up|down|retry> [--yes] [--json] [--executors <dir>] [--workspace <dir>]

  up      the answer was right: the plan is promoted and replayed for requests like it
  down    the answer was wrong: the remembered shortcut is dropped, so the request goes back to
          the model; a second down on the same plan makes it one memory never uses again
  retry   as down, then ask again now, without the remembered plan

The turn id is printed at the end of every \`metnos ask\` answer.
`;

export async function feedbackCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      yes: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(FEEDBACK_HELP);
    return 0;
  }
  const [turnId, kind] = positionals;
  if (!turnId || (kind !== 'up' && kind !== 'down' && kind !== 'retry') || positionals.length > 2) {
    io.err(FEEDBACK_HELP);
    return 2;
  }
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  // feedback is about the learning engine's turns: a `retry` runs on its variant (loop → learning)
  const engineKind = engineKindOf(undefined, context.config);
  const { engine, memory, close } = await openLearningEngine(context, io, {
    yes: values.yes,
    strict: true,
    variant: engineKind === 'loop' ? 'learning' : engineKind,
  });
  try {
    const outcome = await engine.feedback(turnId, kind);
    if (!outcome.recorded)
      throw new CliFailure(`no turn ${turnId} in the memory (the id ends every metnos ask answer)`);
    if (values.json && outcome.retry) return printEngineTurn(io, outcome.retry, { json: true, memory });
    io.out(`feedback "${kind}" recorded for turn ${turnId}`);
    const dropped = outcome.droppedShortcuts.length;
    if (dropped > 0)
      io.out(
        `dropped ${dropped} remembered shortcut${dropped === 1 ? '' : 's'}: the request goes back to the model`,
      );
    if (outcome.anti) io.out('memory will not use this plan for this request again');
    return outcome.retry ? printEngineTurn(io, outcome.retry, { json: false, memory }) : 0;
  } finally {
    close();
  }
}
