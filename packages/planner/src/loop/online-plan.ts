import { z } from 'zod';
import { hardenArgs, TOOL_UNAVAILABLE } from '../hardening.ts';
import type { ChatResponse } from '../model.ts';
import { PipingError, referencedSteps, resolveReferences } from '../piping.ts';
import {
  account,
  finishTurn,
  type LoopContext,
  lastUsefulText,
  reviewed,
  stopIfOverBudget,
} from './context.ts';
import { BASE_PROMPT, callModel, describeModelFailure, toolSpec } from './model-call.ts';
import { runToolCall } from './tool-call.ts';
import type { TurnResult, TurnState } from './types.ts';

/** What online mode adds to the system prompt. */
const ONLINE_PROMPT = `Plan the whole request at once. Reply with JSON only, no prose:
{"steps": [{"tool": "<tool name>", "args": {…}}], "answer": "<final message to the user; may contain {{stepN.field}}>"}
Steps run in order; use {{stepN.field}} (1-indexed) to pass an earlier step's result. Use only the tools listed.`;

const planSchema = z
  .object({
    steps: z
      .array(
        z.object({ tool: z.string().min(1).max(128), args: z.record(z.string(), z.unknown()).default({}) }),
      )
      .max(20),
    answer: z.string().max(20_000).optional(),
  })
  .strict();

/** Pulls a JSON object out of model text (bare or fenced) and validates it; never throws. */
export function parsePlanText(
  text: string,
): { ok: true; plan: z.infer<typeof planSchema> } | { ok: false; reason: string } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const candidate = fenced ? fenced[1]! : text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  if (!candidate.trim()) return { ok: false, reason: 'the model did not reply with a JSON plan' };
  let data: unknown;
  try {
    data = JSON.parse(candidate);
  } catch {
    return { ok: false, reason: 'the model replied with text that is not valid JSON' };
  }
  const parsed = planSchema.safeParse(data);
  if (!parsed.success)
    return {
      ok: false,
      reason: `the plan does not have the expected shape (${parsed.error.issues[0]?.message})`,
    };
  return { ok: true, plan: parsed.data };
}

type OnlinePlan = z.infer<typeof planSchema>;

/**
 * Checks a plan before anything runs: every tool is a candidate, arguments
 * harden, references point at earlier steps, and the vaglio lets every step
 * through (a step that needs confirmation is asked when it runs). Returns
 * why the plan cannot run, or nothing.
 */
async function checkPlan(
  context: LoopContext,
  state: TurnState,
  plan: OnlinePlan,
): Promise<string | undefined> {
  for (const [index, step] of plan.steps.entries()) {
    const executor = state.candidates.find((candidate) => candidate.name === step.tool);
    if (!executor)
      return `The plan uses a tool that is not available (step ${index + 1}): ${TOOL_UNAVAILABLE}.`;
    const hardened = hardenArgs(step.args);
    if (!hardened.ok) return `The plan's step ${index + 1} has unusable arguments: ${hardened.reason}.`;
    step.args = hardened.args;
    const bad = referencedSteps(step.args).find((number) => number < 1 || number > index);
    if (bad !== undefined)
      return `The plan's step ${index + 1} refers to step ${bad}, which does not run before it.`;
    const verdict = await context.settings.reviewer.evaluate(
      { ...reviewed(state, executor, step.args), stepIndex: index + 1 },
      { home: context.home, workspace: context.settings.workspace },
    );
    if (!verdict.approved && verdict.blocked_by !== 'confirmation')
      return `The plan was blocked by the ${verdict.blocked_by} at step ${index + 1} (${executor.name}): ${verdict.reason}`;
  }
  return undefined;
}

/** Asks the model for the whole plan and checks it; keeps it on the turn, or ends the turn. */
async function proposeOnlinePlan(
  context: LoopContext,
  state: TurnState,
  signal?: AbortSignal,
): Promise<TurnResult | undefined> {
  const { settings } = context;
  const model = context.models[settings.tiers?.online ?? 'wise'];
  const catalogText = state.candidates.map((executor) => JSON.stringify(toolSpec(executor))).join('\n');
  const system = [BASE_PROMPT, ONLINE_PROMPT, `Tools:\n${catalogText}`, settings.systemPrompt]
    .filter(Boolean)
    .join('\n\n');
  let response: ChatResponse;
  try {
    response = await callModel(context, model, state, [], system, signal);
  } catch (error) {
    return finishTurn(context, state, 'error', describeModelFailure(error));
  }
  account(state, response);
  const parsed = parsePlanText(response.text);
  if (!parsed.ok)
    return finishTurn(context, state, 'error', `I could not use the model's plan: ${parsed.reason}.`);
  if (parsed.plan.steps.length > context.capSteps) {
    return finishTurn(
      context,
      state,
      'cap_steps',
      `The plan has ${parsed.plan.steps.length} steps; the limit is ${context.capSteps}.`,
    );
  }
  state.plan = { ...parsed.plan, next: 0 };
  const problem = await checkPlan(context, state, parsed.plan);
  return problem === undefined ? undefined : finishTurn(context, state, 'error', problem);
}

/** The plan's answer, its references resolved, once every step ran. */
function answerOf(context: LoopContext, state: TurnState, answer: string | undefined): Promise<TurnResult> {
  if (!answer?.trim())
    return finishTurn(
      context,
      state,
      'answer',
      lastUsefulText(state).replace(/^Last result: /, '') || 'Done.',
    );
  try {
    return finishTurn(context, state, 'answer', String(resolveReferences(answer, state.observations)));
  } catch (error) {
    if (!PipingError.isInstance(error)) throw error;
    return finishTurn(
      context,
      state,
      'error',
      `The plan's answer refers to something that does not exist: ${error.message}`,
    );
  }
}

/**
 * Online mode: one model call plans the whole request as JSON, every step
 * is checked before anything runs, then the steps run in order (each still
 * through `runToolCall`: caps, vaglio, approvals, scratchpad).
 */
export async function onlinePlan(
  context: LoopContext,
  state: TurnState,
  signal?: AbortSignal,
  resumeApproved = false,
): Promise<TurnResult> {
  if (!state.plan) {
    const ended = await proposeOnlinePlan(context, state, signal);
    if (ended) return ended;
  }
  const plan = state.plan!;
  for (; plan.next < plan.steps.length; plan.next++) {
    const step = plan.steps[plan.next]!;
    const call = { id: `plan-${plan.next + 1}`, name: step.tool, args: step.args };
    const usedBefore = state.steps.length;
    const outcome = await runToolCall(context, state, call, resumeApproved, signal);
    resumeApproved = false;
    state.waiting = undefined;
    if ('finalKind' in outcome) {
      if (outcome.finalKind === 'pending_approval')
        state.waiting = { call, rest: [], approvalId: outcome.pending!.approvalId };
      return outcome;
    }
    if (state.steps.length === usedBefore || outcome.observation.ok !== true) {
      const error = outcome.observation.error as { class?: string; message?: string } | undefined;
      return finishTurn(
        context,
        state,
        'error',
        `Step ${plan.next + 1} (${step.tool}) failed: ${error?.message ?? 'unknown error'}`,
      );
    }
    const stopped = stopIfOverBudget(context, state);
    if (stopped) return stopped;
  }
  return answerOf(context, state, plan.answer);
}
