import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import {
  contractSchema,
  type ExecutorResult,
  type Invoker,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import { z } from 'zod';
import { hardenArgs, keptArgs, TOOL_UNAVAILABLE } from './hardening.ts';
import type { ChatMessage, ChatModel, ChatResponse, ToolCall, ToolSpec } from './model.ts';
import { hasReferences, PipingError, referencedSteps, resolveReferences } from './piping.ts';
import { type PrefilterSettings, rankExecutors } from './prefilter.ts';
import {
  type ApprovalChecker,
  type CallReviewer,
  executorContract,
  type ReviewedCall,
  type ReviewVerdict,
} from './review.ts';
import {
  SCRATCHPAD_READ_TOOL,
  SCRATCHPAD_THRESHOLD_BYTES,
  type Scratchpad,
  type ScratchpadReadMode,
} from './scratchpad.ts';
import type { TurnLog, TurnLogStep } from './turn-log.ts';

/** How a turn ended. */
export type FinalKind =
  | 'answer'
  | 'cap_steps'
  | 'cap_same_executor'
  | 'budget'
  | 'error'
  | 'pending_approval';

/** The planner modes: `local` (ReAct, one model call per step), `online` (one call plans everything), `hybrid` (a router picks). */
export type PlannerMode = 'local' | 'online' | 'hybrid';

/** Rules that send a hybrid turn to online mode. */
export interface HybridRules {
  /** Escalate when a top candidate has one of these capabilities (e.g. `code:exec`). */
  escalateOnCapabilities?: string[];
  /** Escalate when the request contains one of these words. */
  escalateOnKeywords?: string[];
  /** Escalate when the pre-filter is this unsure (confidence below). */
  escalateBelowConfidence?: number;
}

/** Settings of {@link createPlanner}. */
export interface PlannerSettings {
  catalog: { executors(): VerifiedExecutor[] };
  invoker: Pick<Invoker, 'invoke'>;
  /** Tier models; `fast` is required, the others alias down (wise → middle → fast). */
  models: { fast: ChatModel; middle?: ChatModel; wise?: ChatModel };
  reviewer: CallReviewer;
  approvals?: ApprovalChecker;
  scratchpad: Scratchpad;
  turnLog?: TurnLog;
  workspace: string;
  home?: string;
  mode?: PlannerMode;
  hybrid?: HybridRules;
  /** Which tier each mode uses. Default: local → fast, online → wise. */
  tiers?: { local?: 'fast' | 'middle' | 'wise'; online?: 'fast' | 'middle' | 'wise' };
  caps?: { steps?: number; sameExecutor?: number };
  budget?: { toolCalls?: number; tokens?: number; costUsd?: number };
  prefilter?: PrefilterSettings;
  /** Per-executor settings passed as `ctx.config`. */
  executorConfig?: Record<string, Record<string, unknown>>;
  /** Executors whose repeated call on the same path/url is answered from history. */
  duplicateReadGuard?: string[];
  /** Extra system prompt text (e.g. the tier's prompt). */
  systemPrompt?: string;
  retry?: {
    attempts?: number;
    baseDelayMs?: number;
    sleep?: (ms: number) => Promise<void>;
    random?: () => number;
  };
  modelTimeoutMs?: number;
  clock?: () => Date;
  ids?: () => string;
}

/** One executed (or refused) step. */
export interface StepRecord extends TurnLogStep {
  observation: Record<string, unknown>;
}

/** What a turn returns. */
export interface TurnResult {
  turnId: string;
  finalKind: FinalKind;
  finalMessage: string;
  mode: PlannerMode;
  routedMode: 'local' | 'online';
  candidates: string[];
  steps: StepRecord[];
  tokens: { input: number; output: number };
  costUsd: number | undefined;
  /** Set when the turn paused for a reinforced confirmation. */
  pending?: { approvalId: string; callHash: string; expiresAt: string; executor: string; args: unknown };
}

interface TurnState {
  turnId: string;
  request: string;
  tsStart: number;
  mode: PlannerMode;
  routedMode: 'local' | 'online';
  candidates: VerifiedExecutor[];
  history: ChatMessage[];
  observations: Record<string, unknown>[];
  steps: StepRecord[];
  calls: Map<string, number>;
  reads: Map<string, number>;
  toolCallsUsed: number;
  tokens: { input: number; output: number };
  costUsd: number | undefined;
  /** A tool call the model made that waits for approval, with its remaining siblings. */
  waiting?: { call: ToolCall; rest: ToolCall[]; approvalId: string };
  /** Online mode: the plan and the next step to run. */
  plan?: { steps: Array<{ tool: string; args: unknown }>; answer?: string; next: number };
}

const BASE_PROMPT = `You are Metnos, a personal assistant that acts through tools (executors).
Call one tool at a time when you need data or an action; when you have what the user asked for, answer in plain text without calling a tool.
To pass an earlier result into a tool argument, write {{stepN.field}} where N is the step number (1 = first tool call) and field is a key of that step's observation, e.g. {{step1.content}} or {{step2.metadata.path}}. Never invent a syntax of your own and never copy large data by hand.
If a tool reports an error, read it and either fix the arguments or explain to the user what is missing.`;

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

function isTransientModelError(error: unknown): boolean {
  const record = error as {
    status?: number;
    statusCode?: number;
    code?: string;
    transient?: boolean;
    classification?: string;
  };
  if (record?.classification === 'transient' || record?.transient === true) return true;
  const status = record?.status ?? record?.statusCode;
  if (typeof status === 'number') return status >= 500 || status === 429 || status === 408;
  return ['ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(record?.code ?? '');
}

const TRANSIENT_EXECUTOR_CLASSES = new Set(['Timeout', 'RateLimited', 'Network', 'DnsError', 'Unavailable']);

/** Transient / permanent / policy, for an executor's failed result. */
export function classifyExecutorFailure(
  result: ExecutorResult,
): 'transient' | 'permanent' | 'policy' | undefined {
  if (result.ok) return undefined;
  const errorClass = result.error.class;
  if (errorClass === 'PolicyViolation' || errorClass === 'IsolationUnavailable') return 'policy';
  return TRANSIENT_EXECUTOR_CLASSES.has(errorClass) ? 'transient' : 'permanent';
}

function describeModelFailure(error: unknown): string {
  const record = error as { name?: string; message?: string; hint?: string; status?: number };
  const unreachable =
    /unreachable|ECONNREFUSED|fetch failed|connect/i.test(`${record?.name} ${record?.message}`) &&
    record?.status === undefined;
  if (unreachable) {
    return `I could not reach the language model (${record?.message ?? 'connection failed'}). ${record?.hint ?? 'Check that the model server is running (for Ollama: `ollama serve`) and that the base URL is right.'}`;
  }
  return `The language model failed: ${record?.message ?? String(error)}${record?.hint ? ` (${record.hint})` : ''}`;
}

function observationOf(result: ExecutorResult): Record<string, unknown> {
  const { isolation: _isolation, ...rest } = result as ExecutorResult & { isolation?: unknown };
  return rest as Record<string, unknown>;
}

function toolSpec(executor: VerifiedExecutor): ToolSpec {
  const parameters = { ...contractSchema(executor, 'input') };
  const definitions =
    (executor.schema as Record<string, unknown>).definitions ??
    (executor.schema as Record<string, unknown>).$defs;
  if (definitions && JSON.stringify(parameters).includes('"$ref"')) parameters.definitions = definitions;
  return { name: executor.name, description: executor.manifest.executor.summary, parameters };
}

/**
 * The turn-by-turn planner. A turn: load the catalog, rank it with the
 * pre-filter, then either loop (local: one model call per step, native tool
 * calls) or plan once (online), reviewing every call with the vaglio, piping
 * `{{stepN.field}}` between steps, keeping large observations in the
 * scratchpad, enforcing caps and budgets, and writing one turn-log line.
 * Every ending is a structured result, never an exception.
 *
 * @example
 * const planner = createPlanner({ catalog, invoker, models: { fast }, reviewer, scratchpad, workspace });
 * const result = await planner.runTurn('read ~/notes/diary.md and tell me the last three lines');
 * result.finalKind; // 'answer'
 */
export function createPlanner(settings: PlannerSettings) {
  const clock = settings.clock ?? (() => new Date());
  const ids = settings.ids ?? randomUUID;
  const capSteps = settings.caps?.steps ?? 5;
  const capSame = settings.caps?.sameExecutor ?? 2;
  const guarded = new Set(settings.duplicateReadGuard ?? ['fs_read', 'fs_write', 'web_fetch']);
  const home = settings.home ?? homedir();
  const paused = new Map<string, TurnState>();
  const models = {
    fast: settings.models.fast,
    middle: settings.models.middle ?? settings.models.fast,
    wise: settings.models.wise ?? settings.models.middle ?? settings.models.fast,
  };
  const sleep =
    settings.retry?.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = settings.retry?.random ?? Math.random;

  async function callModel(
    model: ChatModel,
    state: TurnState,
    tools: ToolSpec[],
    system: string,
    signal?: AbortSignal,
  ): Promise<ChatResponse> {
    const attempts = settings.retry?.attempts ?? 3;
    const base = settings.retry?.baseDelayMs ?? 250;
    for (let attempt = 1; ; attempt++) {
      try {
        return await model.generate({
          system,
          messages: state.history,
          tools,
          signal,
          timeoutMs: settings.modelTimeoutMs,
        });
      } catch (error) {
        if (attempt >= attempts || !isTransientModelError(error) || signal?.aborted) throw error;
        const retryAfter = (error as { retryAfterMs?: number }).retryAfterMs;
        await sleep(retryAfter ?? Math.min(8000, base * 2 ** (attempt - 1)) * (0.5 + random()));
      }
    }
  }

  function account(state: TurnState, response: ChatResponse): void {
    state.tokens.input += response.usage.inputTokens;
    state.tokens.output += response.usage.outputTokens;
    if (response.costUsd !== undefined) state.costUsd = (state.costUsd ?? 0) + response.costUsd;
  }

  function overBudget(state: TurnState): string | undefined {
    const budget = settings.budget;
    if (!budget) return undefined;
    if (budget.tokens !== undefined && state.tokens.input + state.tokens.output > budget.tokens) {
      return `the token budget (${budget.tokens}) is spent`;
    }
    if (budget.costUsd !== undefined && (state.costUsd ?? 0) > budget.costUsd)
      return `the cost budget ($${budget.costUsd}) is spent`;
    if (budget.toolCalls !== undefined && state.toolCallsUsed >= budget.toolCalls) {
      return `the tool-call budget (${budget.toolCalls}) is spent`;
    }
    return undefined;
  }

  async function finish(
    state: TurnState,
    finalKind: FinalKind,
    finalMessage: string,
    pending?: TurnResult['pending'],
  ): Promise<TurnResult> {
    const result: TurnResult = {
      turnId: state.turnId,
      finalKind,
      finalMessage,
      mode: state.mode,
      routedMode: state.routedMode,
      candidates: state.candidates.map((executor) => executor.name),
      steps: state.steps,
      tokens: state.tokens,
      costUsd: state.costUsd,
      ...(pending ? { pending } : {}),
    };
    if (finalKind === 'pending_approval') paused.set(state.turnId, state);
    else paused.delete(state.turnId);
    if (settings.turnLog && finalKind !== 'pending_approval') {
      try {
        await settings.turnLog.append({
          turn_id: state.turnId,
          ts_start: state.tsStart,
          ts_end: clock().getTime() / 1000,
          user_query: state.request,
          mode: state.mode,
          routed_mode: state.routedMode,
          candidates: result.candidates,
          steps: state.steps.map(({ observation: _observation, ...step }) => step),
          final_message: finalMessage,
          final_kind: finalKind,
          tokens: state.tokens,
          cost_usd: state.costUsd,
        });
      } catch {
        // the turn's answer matters more than its log line
      }
    }
    return result;
  }

  function record(state: TurnState, step: Omit<StepRecord, 'number'>): Record<string, unknown> {
    const number = state.steps.length + 1;
    state.steps.push({ ...step, number });
    state.observations.push(step.observation);
    return step.observation;
  }

  function reviewed(state: TurnState, executor: VerifiedExecutor, args: unknown): ReviewedCall {
    return {
      executor: executorContract(executor),
      args,
      request: state.request,
      stepIndex: state.steps.length + 1,
      turnId: state.turnId,
    };
  }

  function summarizeVerdict(verdict: ReviewVerdict): TurnLogStep['vaglio'] {
    return {
      approved: verdict.approved,
      blocked_by: verdict.blocked_by,
      score: verdict.score,
      reason: verdict.reason,
    };
  }

  async function invoke(
    state: TurnState,
    executor: VerifiedExecutor,
    args: unknown,
    signal?: AbortSignal,
  ): Promise<ExecutorResult> {
    const attempts = executor.manifest.contract.idempotent ? (settings.retry?.attempts ?? 3) : 1;
    const base = settings.retry?.baseDelayMs ?? 250;
    for (let attempt = 1; ; attempt++) {
      state.toolCallsUsed++;
      const result = await settings.invoker.invoke(executor.name, args, {
        workspace: settings.workspace,
        caller: { kind: 'planner', turnId: state.turnId },
        turnId: state.turnId,
        traceId: `${state.turnId}:${state.steps.length + 1}`,
        config: settings.executorConfig?.[executor.name],
        signal,
      });
      if (result.ok || classifyExecutorFailure(result) !== 'transient' || attempt >= attempts) return result;
      await sleep(Math.min(8000, base * 2 ** (attempt - 1)) * (0.5 + random()));
    }
  }

  function storeLarge(
    state: TurnState,
    observation: Record<string, unknown>,
    executor: string,
  ): Record<string, unknown> {
    const serialized = JSON.stringify(observation);
    if (Buffer.byteLength(serialized) <= SCRATCHPAD_THRESHOLD_BYTES || executor === SCRATCHPAD_READ_TOOL.name)
      return observation;
    const content = observation.content ?? observation;
    const metadata = (observation.metadata as Record<string, unknown> | undefined) ?? {};
    return { ...settings.scratchpad.put(state.turnId, content, { ...metadata, executor }) };
  }

  /** Runs one tool call in local mode. Returns a final result when the turn must end. */
  async function runToolCall(
    state: TurnState,
    call: ToolCall,
    approved: boolean,
    signal?: AbortSignal,
  ): Promise<TurnResult | { observation: Record<string, unknown> }> {
    type Base = 'tokens_in' | 'tokens_out' | 'latency_ms' | 'raw_args' | 'sandbox';
    const base: Pick<StepRecord, Base> = {
      tokens_in: 0,
      tokens_out: 0,
      latency_ms: 0,
      raw_args: keptArgs(call.args),
      sandbox: null,
    };
    /** Records this call's step (refused or run) and hands its observation back to the loop. */
    const settle = (step: Omit<StepRecord, 'number' | Base> & Partial<Pick<StepRecord, Base>>) => ({
      observation: record(state, { ...base, ...step }),
    });
    const hardened = hardenArgs(call.args);
    if (
      call.name === SCRATCHPAD_READ_TOOL.name &&
      settings.scratchpad.count(state.turnId) > 0 &&
      hardened.ok
    ) {
      const args = hardened.args as {
        scratchpad_id?: string;
        mode?: string;
        chars?: number;
        start?: number;
        end?: number;
      };
      const how = {
        mode: args.mode ?? 'head',
        chars: args.chars,
        start: args.start ?? 0,
        end: args.end ?? 0,
      } as ScratchpadReadMode;
      const read =
        typeof args.scratchpad_id === 'string'
          ? settings.scratchpad.read(state.turnId, args.scratchpad_id, how)
          : undefined;
      const observation = read
        ? { ok: true, content: read.content, metadata: { total_chars: read.total_chars } }
        : {
            ok: false,
            error: { class: 'NotFound', message: 'no scratchpad entry with that id in this turn' },
          };
      return settle({
        tool: call.name,
        resolved_args: args,
        validation: 'ok',
        vaglio: null,
        result: observation.ok ? 'ok' : 'NotFound',
        observation,
      });
    }
    const executor = state.candidates.find((candidate) => candidate.name === call.name);
    if (!executor || !hardened.ok) {
      const observation = { ok: false, error: { class: 'ToolUnavailable', message: TOOL_UNAVAILABLE } };
      return settle({
        tool: null,
        resolved_args: null,
        validation: 'rejected',
        vaglio: null,
        result: 'tool unavailable',
        observation,
      });
    }
    const used = state.calls.get(executor.name) ?? 0;
    if (used >= capSame) {
      return finish(
        state,
        'cap_same_executor',
        `I stopped: ${executor.name} was already called ${used} times in this turn (limit ${capSame}). ${lastUsefulText(state)}`.trim(),
      );
    }
    let resolved: unknown;
    try {
      resolved = resolveReferences(hardened.args, state.observations);
    } catch (error) {
      if (!PipingError.isInstance(error)) throw error;
      const observation = { ok: false, error: { class: 'BadReference', message: error.message } };
      return settle({
        tool: executor.name,
        resolved_args: null,
        validation: 'rejected',
        vaglio: null,
        result: 'BadReference',
        observation,
      });
    }
    const target = (resolved as Record<string, unknown>).path ?? (resolved as Record<string, unknown>).url;
    if (guarded.has(executor.name) && typeof target === 'string') {
      const key = `${executor.name}\u0000${target}`;
      const earlier = state.reads.get(key);
      if (earlier !== undefined) {
        const observation = {
          ok: true,
          content: `You already have this data at step ${earlier}. Use it and give the final answer.`,
          metadata: { duplicate_of_step: earlier },
        };
        return settle({
          tool: executor.name,
          resolved_args: resolved,
          validation: 'skipped',
          vaglio: null,
          result: 'duplicate',
          observation,
        });
      }
    }
    const reviewCall = reviewed(state, executor, resolved);
    let verdict: ReviewVerdict;
    if (approved && state.waiting && settings.approvals) {
      const check = await settings.approvals.check(state.waiting.approvalId, reviewCall);
      if (!check.ok) {
        const observation = { ok: false, error: { class: 'ApprovalInvalid', message: check.reason } };
        return settle({
          tool: executor.name,
          resolved_args: resolved,
          validation: 'ok',
          vaglio: null,
          result: 'ApprovalInvalid',
          observation,
        });
      }
      verdict = { approved: true, reason: 'approved by the user', score: 1, blocked_by: null };
    } else {
      verdict = await settings.reviewer.evaluate(reviewCall, { home, workspace: settings.workspace });
    }
    if (!verdict.approved) {
      if (verdict.blocked_by === 'confirmation' && verdict.pending) {
        return finish(
          state,
          'pending_approval',
          `${executor.name} has side effects and cannot be undone automatically; it needs your approval before it runs.`,
          {
            approvalId: verdict.pending.id,
            callHash: verdict.pending.callHash,
            expiresAt: verdict.pending.expiresAt,
            executor: executor.name,
            args: resolved,
          },
        );
      }
      const observation = {
        ok: false,
        error: { class: 'Blocked', message: `blocked by the ${verdict.blocked_by}: ${verdict.reason}` },
      };
      return settle({
        tool: executor.name,
        resolved_args: resolved,
        validation: 'ok',
        vaglio: summarizeVerdict(verdict),
        result: 'Blocked',
        observation,
      });
    }
    state.calls.set(executor.name, used + 1);
    const started = performance.now();
    const result = await invoke(state, executor, resolved, signal);
    const observation = storeLarge(state, observationOf(result), executor.name);
    if (result.ok && guarded.has(executor.name) && typeof target === 'string') {
      state.reads.set(`${executor.name}\u0000${target}`, state.steps.length + 1);
    }
    return settle({
      latency_ms: Math.round(performance.now() - started),
      tool: executor.name,
      resolved_args: resolved,
      validation: result.ok || result.error.class !== 'InvalidInput' ? 'ok' : 'rejected',
      vaglio: summarizeVerdict(verdict),
      sandbox: result.isolation?.tier ?? null,
      result: result.ok ? 'ok' : result.error.class,
      observation,
    });
  }

  function lastUsefulText(state: TurnState): string {
    const last = [...state.observations].reverse().find((observation) => observation.ok === true);
    if (!last) return '';
    const content = last.content ?? last.summary;
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    return `Last result: ${text.slice(0, 500)}`;
  }

  function tools(state: TurnState): ToolSpec[] {
    const specs = state.candidates.map(toolSpec);
    if (settings.scratchpad.count(state.turnId) > 0)
      specs.push({ ...SCRATCHPAD_READ_TOOL, parameters: { ...SCRATCHPAD_READ_TOOL.parameters } });
    return specs;
  }

  async function localLoop(
    state: TurnState,
    signal?: AbortSignal,
    resumeApproved = false,
  ): Promise<TurnResult> {
    const model = models[settings.tiers?.local ?? 'fast'];
    const system = [BASE_PROMPT, settings.systemPrompt].filter(Boolean).join('\n\n');
    if (state.waiting) {
      const { call, rest } = state.waiting;
      const outcome = await runToolCall(state, call, resumeApproved, signal);
      state.waiting = undefined;
      if ('finalKind' in outcome) return outcome;
      state.history.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: JSON.stringify(outcome.observation),
      });
      for (const sibling of rest) {
        const next = await runToolCall(state, sibling, false, signal);
        if ('finalKind' in next) return next;
        state.history.push({
          role: 'tool',
          toolCallId: sibling.id,
          toolName: sibling.name,
          content: JSON.stringify(next.observation),
        });
      }
    }
    for (;;) {
      const budget = overBudget(state);
      if (budget)
        return finish(state, 'budget', `I stopped because ${budget}. ${lastUsefulText(state)}`.trim());
      if (state.steps.length >= capSteps) {
        return finish(
          state,
          'cap_steps',
          `I stopped after ${capSteps} steps without a final answer. ${lastUsefulText(state)}`.trim(),
        );
      }
      let response: ChatResponse;
      try {
        response = await callModel(model, state, tools(state), system, signal);
      } catch (error) {
        return finish(state, 'error', describeModelFailure(error));
      }
      account(state, response);
      if (response.toolCalls.length === 0) {
        state.history.push({ role: 'assistant', content: response.text });
        const text = response.text.trim();
        return finish(state, 'answer', text || '(the model gave an empty answer)');
      }
      state.history.push({
        role: 'assistant',
        content: response.text,
        toolCalls: response.toolCalls.map((call) => ({ ...call, args: keptArgs(call.args) })),
      });
      const [first, ...others] = response.toolCalls;
      const queue = [first!, ...others];
      for (let index = 0; index < queue.length; index++) {
        const call = queue[index]!;
        if (state.steps.length >= capSteps) {
          return finish(
            state,
            'cap_steps',
            `I stopped after ${capSteps} steps without a final answer. ${lastUsefulText(state)}`.trim(),
          );
        }
        const outcome = await runToolCall(state, call, false, signal);
        if ('finalKind' in outcome) {
          if (outcome.finalKind === 'pending_approval') {
            state.waiting = { call, rest: queue.slice(index + 1), approvalId: outcome.pending!.approvalId };
          }
          return outcome;
        }
        const lastStep = state.steps.at(-1)!;
        lastStep.tokens_in = index === 0 ? response.usage.inputTokens : 0;
        lastStep.tokens_out = index === 0 ? response.usage.outputTokens : 0;
        state.history.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.name,
          content: JSON.stringify(outcome.observation),
        });
      }
    }
  }

  async function onlinePlan(
    state: TurnState,
    signal?: AbortSignal,
    resumeApproved = false,
  ): Promise<TurnResult> {
    if (!state.plan) {
      const model = models[settings.tiers?.online ?? 'wise'];
      const catalogText = state.candidates.map((executor) => JSON.stringify(toolSpec(executor))).join('\n');
      const system = [BASE_PROMPT, ONLINE_PROMPT, `Tools:\n${catalogText}`, settings.systemPrompt]
        .filter(Boolean)
        .join('\n\n');
      let response: ChatResponse;
      try {
        response = await callModel(model, state, [], system, signal);
      } catch (error) {
        return finish(state, 'error', describeModelFailure(error));
      }
      account(state, response);
      const parsed = parsePlanText(response.text);
      if (!parsed.ok) return finish(state, 'error', `I could not use the model's plan: ${parsed.reason}.`);
      if (parsed.plan.steps.length > capSteps) {
        return finish(
          state,
          'cap_steps',
          `The plan has ${parsed.plan.steps.length} steps; the limit is ${capSteps}.`,
        );
      }
      state.plan = { ...parsed.plan, next: 0 };
      for (const [index, step] of parsed.plan.steps.entries()) {
        const executor = state.candidates.find((candidate) => candidate.name === step.tool);
        if (!executor)
          return finish(
            state,
            'error',
            `The plan uses a tool that is not available (step ${index + 1}): ${TOOL_UNAVAILABLE}.`,
          );
        const hardened = hardenArgs(step.args);
        if (!hardened.ok)
          return finish(
            state,
            'error',
            `The plan's step ${index + 1} has unusable arguments: ${hardened.reason}.`,
          );
        step.args = hardened.args;
        const bad = referencedSteps(step.args).find((number) => number < 1 || number > index);
        if (bad !== undefined)
          return finish(
            state,
            'error',
            `The plan's step ${index + 1} refers to step ${bad}, which does not run before it.`,
          );
        const verdict = await settings.reviewer.evaluate(
          { ...reviewed(state, executor, step.args), stepIndex: index + 1 },
          { home, workspace: settings.workspace },
        );
        if (!verdict.approved && verdict.blocked_by !== 'confirmation') {
          return finish(
            state,
            'error',
            `The plan was blocked by the ${verdict.blocked_by} at step ${index + 1} (${executor.name}): ${verdict.reason}`,
          );
        }
      }
    }
    const plan = state.plan;
    for (; plan.next < plan.steps.length; plan.next++) {
      const step = plan.steps[plan.next]!;
      const usedBefore = state.steps.length;
      const outcome = await runToolCall(
        state,
        { id: `plan-${plan.next + 1}`, name: step.tool, args: step.args },
        resumeApproved,
        signal,
      );
      resumeApproved = false;
      state.waiting = undefined;
      if ('finalKind' in outcome) {
        if (outcome.finalKind === 'pending_approval')
          state.waiting = {
            call: { id: `plan-${plan.next + 1}`, name: step.tool, args: step.args },
            rest: [],
            approvalId: outcome.pending!.approvalId,
          };
        return outcome;
      }
      if (state.steps.length === usedBefore || outcome.observation.ok !== true) {
        const error = outcome.observation.error as { class?: string; message?: string } | undefined;
        return finish(
          state,
          'error',
          `Step ${plan.next + 1} (${step.tool}) failed: ${error?.message ?? 'unknown error'}`,
        );
      }
      const budget = overBudget(state);
      if (budget)
        return finish(state, 'budget', `I stopped because ${budget}. ${lastUsefulText(state)}`.trim());
    }
    if (plan.answer?.trim()) {
      try {
        return finish(state, 'answer', String(resolveReferences(plan.answer, state.observations)));
      } catch (error) {
        if (!PipingError.isInstance(error)) throw error;
        return finish(
          state,
          'error',
          `The plan's answer refers to something that does not exist: ${error.message}`,
        );
      }
    }
    return finish(state, 'answer', lastUsefulText(state).replace(/^Last result: /, '') || 'Done.');
  }

  function route(request: string, state: TurnState, confidence: number): 'local' | 'online' {
    const mode = settings.mode ?? 'local';
    if (mode !== 'hybrid') return mode;
    const rules = settings.hybrid ?? {};
    const lowered = request.toLowerCase();
    if (rules.escalateOnKeywords?.some((word) => lowered.includes(word.toLowerCase()))) return 'online';
    const top = state.candidates.slice(0, 3);
    if (
      rules.escalateOnCapabilities?.some((capability) =>
        top.some((executor) => executor.manifest.executor.capabilities.includes(capability)),
      )
    ) {
      return 'online';
    }
    if (rules.escalateBelowConfidence !== undefined && confidence < rules.escalateBelowConfidence)
      return 'online';
    return 'local';
  }

  return {
    /** Runs one turn for a request. Always resolves. */
    async runTurn(
      request: string,
      options: { signal?: AbortSignal; turnId?: string } = {},
    ): Promise<TurnResult> {
      const catalog = settings.catalog.executors();
      const state: TurnState = {
        turnId: options.turnId ?? ids(),
        request,
        tsStart: clock().getTime() / 1000,
        mode: settings.mode ?? 'local',
        routedMode: 'local',
        candidates: [],
        history: [{ role: 'user', content: request }],
        observations: [],
        steps: [],
        calls: new Map(),
        reads: new Map(),
        toolCallsUsed: 0,
        tokens: { input: 0, output: 0 },
        costUsd: undefined,
      };
      if (catalog.length === 0) {
        return finish(
          state,
          'error',
          'I have no executors to work with (empty catalog): add or re-sign executors, then run `metnos executor list`.',
        );
      }
      const ranked = rankExecutors(request, catalog, settings.prefilter);
      state.candidates = ranked.executors;
      state.routedMode = route(request, state, ranked.confidence);
      try {
        return state.routedMode === 'online'
          ? await onlinePlan(state, options.signal)
          : await localLoop(state, options.signal);
      } catch (error) {
        return finish(
          state,
          'error',
          `Something went wrong inside the planner: ${(error as Error)?.message ?? String(error)}`,
        );
      }
    },

    /** Continues a turn that paused for approval, once the user approved it in the approval store. */
    async resume(turnId: string, options: { approved: boolean; signal?: AbortSignal }): Promise<TurnResult> {
      const state = paused.get(turnId);
      if (!state?.waiting) {
        return {
          turnId,
          finalKind: 'error',
          finalMessage: 'There is no paused turn with that id (it may have finished or expired).',
          mode: settings.mode ?? 'local',
          routedMode: 'local',
          candidates: [],
          steps: [],
          tokens: { input: 0, output: 0 },
          costUsd: undefined,
        };
      }
      paused.delete(turnId);
      if (!options.approved) {
        const { call } = state.waiting;
        state.waiting = undefined;
        return finish(state, 'answer', `Cancelled: ${call.name} did not run because you did not approve it.`);
      }
      try {
        return state.routedMode === 'online'
          ? await onlinePlan(state, options.signal, true)
          : await localLoop(state, options.signal, true);
      } catch (error) {
        return finish(
          state,
          'error',
          `Something went wrong inside the planner: ${(error as Error)?.message ?? String(error)}`,
        );
      }
    },

    /** True when a paused turn waits for approval. */
    isPaused(turnId: string): boolean {
      return paused.has(turnId);
    },
  };
}

export type Planner = ReturnType<typeof createPlanner>;

/** True when the args contain references (a piping hook for the mnestome). */
export { hasReferences };
