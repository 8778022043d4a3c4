import { type ComposeReport, desiredSignatureOf, quietly } from '../passages.ts';
import { rankExecutors } from '../prefilter.ts';
import { SCRATCHPAD_READ_TOOL } from '../scratchpad.ts';
import type { LoopContext } from './context.ts';
import type { TurnState } from './types.ts';

const REFERENCE = /\{\{\s*step(\d+)((?:\.[A-Za-z0-9_-]+|\[\d+\])*)\s*\}\}/g;

/** One argument fed from an earlier step: the argument, the executor that step ran, the field read. */
interface Pipe {
  arg: string;
  from: string;
  field: string;
}

/** The real executor step `number` ran successfully (not a refusal, not `scratchpad_read`). */
function realSource(state: TurnState, number: number): string | undefined {
  const step = state.steps[number - 1];
  if (!step || step.tool === null || step.tool === SCRATCHPAD_READ_TOOL.name || step.result !== 'ok')
    return undefined;
  return step.tool;
}

/** The top-level arguments that hold `{{stepM.field}}` references to real executors' steps. */
function pipesOf(state: TurnState, args: unknown): Pipe[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const pipes: Pipe[] = [];
  for (const [arg, value] of Object.entries(args)) {
    for (const match of JSON.stringify(value ?? null).matchAll(REFERENCE)) {
      const from = realSource(state, Number(match[1]));
      if (from) pipes.push({ arg, from, field: match[2]!.replace(/^\./, '') });
    }
  }
  return pipes;
}

const sourcesOf = (pipes: readonly Pipe[]) => [...new Set(pipes.map((pipe) => pipe.from))];

/**
 * Seed 000's first hook: a step that ran with a resolved `{{stepM.field}}`
 * from a real executor is a passage from that executor into this one. Every
 * successful step also counts as a use. Without a mnestome, nothing.
 */
export function recordLoopPassages(context: LoopContext, state: TurnState, args: unknown, executor: string) {
  const mnestome = context.settings.mnestome;
  if (!mnestome) return;
  quietly(() => mnestome.recordUse?.(executor));
  for (const source of sourcesOf(pipesOf(state, args)))
    quietly(() => mnestome.recordPassing(source, executor, true));
}

/**
 * Seed 000's second hook: a tool that is not in the catalog, called with
 * references to real executors' steps, is a proto-mnest from each of them,
 * with the signature it was wished for; then reactive compose tries to close
 * it, and its report goes beside the observation (`synt`). Without piping,
 * no mnest and no compose.
 */
export function registerProtoMnest(
  context: LoopContext,
  state: TurnState,
  tool: string,
  args: unknown,
): ComposeReport | undefined {
  const { mnestome, composer, catalog } = context.settings;
  if (!mnestome && !composer) return undefined;
  const executors = catalog.executors();
  if (executors.some((executor) => executor.name === tool)) return undefined;
  const pipes = pipesOf(state, args);
  if (pipes.length === 0) return undefined;
  const [from] = sourcesOf(pipes);
  const desired = desiredSignatureOf({
    tool,
    args,
    piped: pipes,
    source: executors.find((executor) => executor.name === from),
    request: state.request,
  });
  for (const source of sourcesOf(pipes)) quietly(() => mnestome?.recordPassing(source, tool, false, desired));
  return composer ? quietly(() => composer.compose({ from, desired, executors })) : undefined;
}

/**
 * The history boost in a local turn: once a step ran, the candidates are
 * ranked again with what usually follows its executor (the mnestome's
 * passages) ranking higher; those come first, and every candidate offered
 * before stays offered. Without a mnestome that reads passages, nothing.
 */
export function rankWithHistory(context: LoopContext, state: TurnState): void {
  const { mnestome, catalog, prefilter } = context.settings;
  const passagesFrom = mnestome?.passagesFrom?.bind(mnestome);
  const previous = [...state.steps].reverse().find((step) => realSource(state, step.number))?.tool;
  if (!passagesFrom || !previous) return;
  const ranked = quietly(
    () =>
      rankExecutors(state.request, catalog.executors(), { ...prefilter, history: { previous, passagesFrom } })
        .executors,
  );
  if (!ranked) return;
  const names = new Set(ranked.map((executor) => executor.name));
  state.candidates = [...ranked, ...state.candidates.filter((executor) => !names.has(executor.name))];
}
