import { AsyncLocalStorage } from 'node:async_hooks';
import type { VerifiedExecutor } from '@metnos/executor-sdk';
import { type EngineResult, executorContract, type TurnOptions } from '@metnos/planner';
import { type ApprovalStore, callHash, type ProposedCall } from '@metnos/vaglio';
import { publicTurn } from './app.ts';
import type { PendingCall, PendingCalls } from './routes/approvals.ts';
import type { ChannelReply, TelegramChannelOptions } from './telegram/channel.ts';

/** Where a turn came from, so the answer of its resumed run goes back there. */
export type TurnOrigin = { kind: 'http' } | { kind: 'telegram'; chatId: number };

/** A call a turn stopped at, as the flow holds it: the routes' {@link PendingCall} and more. */
export interface HeldCall extends PendingCall {
  /** The vaglio's hash of the call, as the approval store holds it. */
  callHash: string;
  origin: TurnOrigin;
}

/** What {@link createApprovalsFlow} needs. */
export interface ApprovalsFlowSettings {
  /** The engine whose turns stop at calls that need approval (built with the flow's `approved` hook). */
  engine: { runTurn(request: string, options?: TurnOptions): Promise<EngineResult> };
  /** The vaglio's approval store: where the approval is given, and consumed by the re-run. */
  approvals: Pick<ApprovalStore, 'get' | 'approve' | 'deny' | 'check'>;
  /** The executors, to know the exact contract (name, version, side effects) of a held call. */
  catalog: { get(name: string): VerifiedExecutor | undefined };
  /** Where held calls are kept for `GET /api/approvals` (the approval routes read the same). */
  pending: PendingCalls;
  /** Sends text to a chat a turn came from, when its approval was decided elsewhere (over HTTP). */
  deliver?: (origin: Extract<TurnOrigin, { kind: 'telegram' }>, text: string) => Promise<void>;
  /** Told when something could not be recorded or delivered; never given arguments or tokens. */
  onWarning?: (message: string) => void;
}

/** Why a decision was refused: the approval store's reasons, and the flow's own. */
export type DecisionRefusal =
  | { ok: false; reason: 'not_found' | 'hash_mismatch' | 'other_chat'; message: string }
  | { ok: false; reason: string; message: string };

/** The approval being resumed: the re-run may run this call, and only it, once. */
interface Resuming {
  approvalId: string;
  call: ProposedCall;
}

const SUMMARY_LIMIT = 300;

/** One line saying what a held call would do: its arguments as JSON, cut. */
function summaryOf(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? '';
  } catch {
    text = '(arguments that are not JSON)';
  }
  return text.length > SUMMARY_LIMIT ? `with ${text.slice(0, SUMMARY_LIMIT)}…` : `with ${text}`;
}

/**
 * Approvals end to end for the server. A turn that stops at a call needing
 * approval (`pending_approval`) is held — the exact call rebuilt from the
 * catalog's contract, the turn id and step, its hash read back from the
 * vaglio's approval store by approval id — in `pending`, which the approval
 * routes list. A decision (over HTTP through `onDecision`, from Telegram
 * through `decide`) bound to that hash approves the call in the store, then
 * the flow runs the turn's request again: when the engine's review stops at
 * the same call (same executor and version, arguments and step), the
 * engine's `approved` hook — {@link ApprovalsFlow.approved} — consumes the
 * approval with `approvals.check` and the call runs. Only the re-run of that
 * approval may consume it (it is scoped to that run), and only once. The
 * re-run's answer goes back where the turn came from.
 *
 * @example
 * let flow: ApprovalsFlow | undefined;
 * const engine = createEngine({ ..., approved: (call) => flow?.approved(call) ?? false });
 * flow = createApprovalsFlow({ engine, approvals: vaglio.approvals, catalog, pending: createPendingCalls() });
 * startServer({ token, engine: flow.wrap(engine), api: { approvals: { approvals, pending, onDecision: flow.onDecision } } });
 */
export function createApprovalsFlow(settings: ApprovalsFlowSettings) {
  const { approvals, pending } = settings;
  const resuming = new AsyncLocalStorage<Resuming>();
  const held = new Map<string, HeldCall>();
  const warn = (message: string) => settings.onWarning?.(message);

  /** Holds the call a turn stopped at; returns it, or nothing when it cannot be bound to its hash. */
  async function hold(result: EngineResult, request: string, origin: TurnOrigin) {
    if (result.finalKind !== 'pending_approval' || !result.pending) return undefined;
    const { approvalId, tool, args, step } = result.pending;
    const executor = settings.catalog.get(tool);
    const record = await approvals.get(approvalId);
    if (!executor || !record) {
      warn(
        `approval ${approvalId} for ${tool} could not be held: ${executor ? 'not in the store' : 'no such executor'}`,
      );
      return undefined;
    }
    const call: ProposedCall = {
      executor: executorContract(executor),
      args,
      request,
      stepIndex: step,
      turnId: result.turnId,
    };
    // the call as rebuilt must be the one the vaglio asked about, else nobody could approve it
    if (callHash(call) !== record.callHash) {
      warn(`approval ${approvalId} for ${tool} could not be held: the call does not hash as the store's`);
      return undefined;
    }
    const entry: HeldCall = { approvalId, call, callHash: record.callHash, origin };
    pending.add({ approvalId, call });
    held.set(approvalId, entry);
    // the routes' holder forgets its oldest calls; the flow forgets what it forgot
    for (const id of held.keys()) if (!pending.get(id)) held.delete(id);
    return entry;
  }

  async function runTurn(request: string, options: TurnOptions = {}, origin: TurnOrigin = { kind: 'http' }) {
    const result = await settings.engine.runTurn(request, options);
    await hold(result, request, origin);
    return result;
  }

  /** Runs the approved call's turn again; the approval may be consumed only inside this run. */
  async function resume(approvalId: string, call: ProposedCall): Promise<EngineResult> {
    const origin = held.get(approvalId)?.origin ?? { kind: 'http' };
    pending.remove(approvalId);
    held.delete(approvalId);
    return resuming.run({ approvalId, call }, () => runTurn(call.request, {}, origin));
  }

  /** What a Telegram chat is told of a turn: its answer, and the buttons when it waits again. */
  async function replyOf(result: EngineResult, origin: TurnOrigin): Promise<ChannelReply> {
    const entry = result.pending ? held.get(result.pending.approvalId) : undefined;
    if (!entry || !result.pending || origin.kind !== 'telegram') return { text: result.finalMessage };
    return {
      text: result.finalMessage,
      approval: {
        approvalId: entry.approvalId,
        callHash: entry.callHash,
        tool: result.pending.tool,
        summary: summaryOf(result.pending.args),
      },
    };
  }

  /** Decides a held approval bound to `hash`: the same checks as `POST /api/approvals/:id`. */
  async function decide(input: {
    approvalId: string;
    callHash: string;
    approved: boolean;
    chatId?: number;
  }): Promise<{ ok: true; result?: EngineResult } | DecisionRefusal> {
    const entry = held.get(input.approvalId);
    const record = await approvals.get(input.approvalId);
    if (!entry || !record || !pending.get(input.approvalId))
      return { ok: false, reason: 'not_found', message: 'no such approval waits here' };
    if (
      input.chatId !== undefined &&
      (entry.origin.kind !== 'telegram' || entry.origin.chatId !== input.chatId)
    )
      return { ok: false, reason: 'other_chat', message: 'this approval was asked in another place' };
    if (input.callHash !== record.callHash || callHash(entry.call) !== record.callHash)
      return { ok: false, reason: 'hash_mismatch', message: 'the call is not the one this approval holds' };
    const decided = input.approved
      ? await approvals.approve(input.approvalId, entry.call)
      : await approvals.deny(input.approvalId);
    if (!decided.ok) return decided;
    if (!input.approved) {
      pending.remove(input.approvalId);
      held.delete(input.approvalId);
      return { ok: true };
    }
    return { ok: true, result: await resume(input.approvalId, entry.call) };
  }

  const flow = {
    /**
     * The engine's `approved` hook: true only inside the re-run of an approval,
     * for the call that approval holds (executor and version, arguments, step;
     * the turn id is the approved turn's), consuming it in the store.
     */
    async approved(call: { tool: string; args: unknown; step: number }): Promise<boolean> {
      const current = resuming.getStore();
      if (!current || call.tool !== current.call.executor.name) return false;
      const executor = settings.catalog.get(call.tool);
      if (!executor) return false;
      const checked = await approvals.check(current.approvalId, {
        ...current.call,
        executor: executorContract(executor),
        args: call.args,
        stepIndex: call.step,
      });
      return checked.ok;
    },

    runTurn,
    resume,
    decide,

    /** The call held for an approval id, with its hash and origin. */
    held: (approvalId: string): HeldCall | undefined => held.get(approvalId),

    /** `engine` with `runTurn` holding every call a turn stops at (for the HTTP API and the scheduler). */
    wrap<E extends { runTurn(request: string, options?: TurnOptions): Promise<EngineResult> }>(engine: E): E {
      return { ...engine, runTurn: (request: string, options?: TurnOptions) => runTurn(request, options) };
    },

    /**
     * The approval routes' `onDecision`: an approval resumes its turn, whose
     * answer the decision response carries (`resumed`) and, for a turn that
     * came from a chat, is sent there too.
     */
    async onDecision(decision: { approvalId: string; approved: boolean; call: ProposedCall }) {
      const origin = held.get(decision.approvalId)?.origin;
      if (!decision.approved) {
        pending.remove(decision.approvalId);
        held.delete(decision.approvalId);
        return undefined;
      }
      const result = await resume(decision.approvalId, decision.call);
      if (origin?.kind === 'telegram' && settings.deliver)
        await settings
          .deliver(origin, result.finalMessage)
          .catch(() => warn(`the answer of approval ${decision.approvalId} could not be sent to its chat`));
      return { resumed: publicTurn(result) };
    },

    /** The Telegram channel's `handleTurn` and `resolveApproval`. */
    telegram: {
      async handleTurn({ text, chatId }) {
        const origin = { kind: 'telegram', chatId } as const;
        return replyOf(await runTurn(text, {}, origin), origin);
      },
      async resolveApproval({ approvalId, callHash: hash, approved, chatId }) {
        const decided = await decide({ approvalId, callHash: hash, approved, chatId });
        if (!decided.ok) return { text: `Not done: ${decided.message}.` };
        if (!decided.result) return { text: 'Denied: nothing was run.' };
        return replyOf(decided.result, { kind: 'telegram', chatId });
      },
    } satisfies Pick<TelegramChannelOptions, 'handleTurn' | 'resolveApproval'>,
  };
  return flow;
}

export type ApprovalsFlow = ReturnType<typeof createApprovalsFlow>;
