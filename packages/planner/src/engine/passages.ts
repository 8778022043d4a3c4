import { type DesiredSignature, desiredSignatureOf, quietly } from '../passages.ts';
import type { ExecutionOutcome } from './executor.ts';
import { isToolStep, type Plan, type ToolStep } from './plan.ts';
import { findPlaceholders } from './references.ts';
import type { TurnContext } from './turn-context.ts';
import type { EngineSettings } from './types.ts';

/** One argument of a plan step fed from an earlier step: the argument, the step, the field read. */
interface Pipe {
  arg: string;
  step: number;
  field: string;
}

/** The arguments of a step that read earlier steps: `from_step` (its entries) and each `${stepN…}`. */
function pipesOf(step: ToolStep): Pipe[] {
  const pipes: Pipe[] = [];
  for (const [arg, value] of Object.entries(step.args)) {
    if (arg === 'from_step') {
      if (typeof value === 'number') pipes.push({ arg: 'entries', step: value, field: 'entries' });
      continue;
    }
    for (const match of findPlaceholders(value))
      if (match.kind === 'step') pipes.push({ arg, step: match.step!, field: (match.path ?? []).join('.') });
  }
  return pipes;
}

/** The tool step `number` of the plan names, if it is one. */
function toolOf(plan: Plan, number: number): string | undefined {
  const step = plan.steps[number - 1];
  return step && isToolStep(step) ? step.tool : undefined;
}

/**
 * The engine's first hook: after a plan ran, each step that succeeded with
 * a `from_step` or `${stepN…}` from a step that succeeded too is a passage
 * from that step's executor into its own; every step that succeeded is a
 * use. Fail-safe: nothing here reaches the turn.
 */
export function recordPlanPassages(settings: EngineSettings, plan: Plan, outcome: ExecutionOutcome): void {
  const mnestome = settings.mnestome;
  if (!mnestome) return;
  const succeeded = new Map(
    outcome.steps.filter((step) => step.result.ok).map((step) => [step.number, step.tool]),
  );
  for (const [number, tool] of succeeded) {
    quietly(() => mnestome.recordUse?.(tool));
    const step = plan.steps[number - 1];
    if (!step || !isToolStep(step)) continue;
    const sources = new Set(pipesOf(step).map((pipe) => succeeded.get(pipe.step)));
    for (const source of sources)
      if (source !== undefined) quietly(() => mnestome.recordPassing(source, tool, true));
  }
}

/** A tool a proposed plan named that the catalog does not have: what Recovery may compose. */
export interface MissingTool {
  tool: string;
  /** The executor of the first step it was fed from, if any. */
  from?: string;
  desired: DesiredSignature;
}

const missingTools = new WeakMap<TurnContext, { found: MissingTool[]; recorded: Set<string> }>();

/**
 * The engine's second hook, on every proposed plan: a tool step whose tool
 * the catalog does not have is remembered for Recovery, with the signature
 * it was wished for; fed from earlier steps of existing executors, it is a
 * proto-mnest from each of them (once per turn, however often the Proposer
 * repeats it). Fail-safe.
 */
export function noteMissingTools(turn: TurnContext, plan: Plan): void {
  const known = new Set(turn.executors.map((executor) => executor.name));
  const noted = missingTools.get(turn) ?? { found: [], recorded: new Set<string>() };
  missingTools.set(turn, noted);
  plan.steps.forEach((step) => {
    if (!isToolStep(step) || known.has(step.tool)) return;
    const pipes = pipesOf(step)
      .map((pipe) => ({ arg: pipe.arg, from: toolOf(plan, pipe.step), field: pipe.field }))
      .filter((pipe): pipe is { arg: string; from: string; field: string } => known.has(pipe.from ?? ''));
    const from = pipes[0]?.from;
    const desired = desiredSignatureOf({
      tool: step.tool,
      args: step.args,
      piped: pipes,
      source: turn.executors.find((executor) => executor.name === from),
      request: turn.request,
    });
    if (!noted.found.some((missing) => missing.tool === step.tool))
      noted.found.push({ tool: step.tool, ...(from ? { from } : {}), desired });
    for (const source of new Set(pipes.map((pipe) => pipe.from))) {
      const key = `${source}\u0000${step.tool}`;
      if (noted.recorded.has(key)) continue;
      noted.recorded.add(key);
      quietly(() => turn.parts.settings.mnestome?.recordPassing(source, step.tool, false, desired));
    }
  });
}

/** The tools this turn's proposed plans named that do not exist, first named first. */
export function missingToolsOf(turn: TurnContext): readonly MissingTool[] {
  return missingTools.get(turn)?.found ?? [];
}
