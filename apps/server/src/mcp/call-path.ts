import { randomUUID } from 'node:crypto';
import {
  type ExecutorResult,
  exceedsJsonDepth,
  type HostServices,
  type Invoker,
  MAX_JSON_DEPTH,
  type VerifiedExecutor,
} from '@metnos/executor-sdk';
import { type CallReviewer, executorContract } from '@metnos/planner';
import type { ApprovalStore, ProposedCall } from '@metnos/vaglio';
import { activeExecutors, type McpCatalog, TOOL_NAME } from './tools.ts';

/** Arguments larger than this (as JSON) are refused before anything reads them. */
export const MAX_ARGUMENT_BYTES = 256 * 1024;
/** Keys that reach for a prototype: refused wherever a client's arguments hold them. */
const HOSTILE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Who called, as the MCP session knows it. */
export interface McpCaller {
  /** The name the client gave in `initialize` (`clientInfo.name`), cut to 64 characters. */
  client: string;
  /** The session: approvals are bound to it, so another session cannot use them. */
  session: string;
}

/** A call waiting for the person: what they are shown, and decide on by its hash. */
export interface McpHeldCall {
  approvalId: string;
  callHash: string;
  expiresAt: string;
  client: string;
  call: ProposedCall;
}

/**
 * Where calls that wait for the person's approval are shown: the server's
 * pending list (`GET /api/approvals`, the console) or, for `metnos mcp` on
 * stdio, a file `metnos mcp approvals` reads.
 */
export interface McpHeldCalls {
  hold(entry: McpHeldCall): void | Promise<void>;
  release(approvalId: string): void | Promise<void>;
}

/** Settings of {@link createMcpCallPath}. */
export interface McpCallPathSettings {
  catalog: McpCatalog;
  /**
   * The sandboxed invoker: re-verification, host validation, the sandbox, the
   * audit line, and the signed receipt when it was given a receipt chain.
   */
  invoker: Pick<Invoker, 'invoke'>;
  /** The vaglio: guard, judge and confirmation, as for a turn's step. */
  reviewer: CallReviewer;
  /** The vaglio's approval store (the same one the reviewer opens approvals in). */
  approvals: Pick<ApprovalStore, 'check' | 'get'>;
  held: McpHeldCalls;
  workspace: string;
  home: string;
  /** Per-executor settings, as `[executors.config]` gives them to a turn. */
  executorConfig?: Record<string, Record<string, unknown>>;
  /** Host services offered to one call. */
  hostServices?: (tool: string) => HostServices | undefined;
}

/** Why a call was refused before the executor was asked: the MCP layer turns these into protocol errors. */
export type McpRefusal =
  | { kind: 'refused'; code: 'unavailable'; message: string }
  | { kind: 'refused'; code: 'invalid_arguments'; message: string };

/** The outcome of one MCP call: always data. */
export type McpCallOutcome =
  | McpRefusal
  | { kind: 'result'; executor: VerifiedExecutor; result: ExecutorResult }
  | { kind: 'blocked'; blockedBy: string; reason: string }
  | { kind: 'denied'; approvalId: string }
  | { kind: 'needs_approval'; approvalId: string; callHash: string; expiresAt: string; tool: string };

const UNAVAILABLE: McpRefusal = {
  kind: 'refused',
  code: 'unavailable',
  message: 'tool unavailable',
};

function invalid(message: string): McpRefusal {
  return { kind: 'refused', code: 'invalid_arguments', message };
}

/** Why a client's arguments are refused before any review, or undefined when they may be read. */
export function hostileArguments(args: unknown): string | undefined {
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    return 'arguments must be a JSON object';
  if (exceedsJsonDepth(args)) return `arguments nest deeper than ${MAX_JSON_DEPTH} levels`;
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(args));
  } catch {
    return 'arguments are not JSON';
  }
  if (size > MAX_ARGUMENT_BYTES) return `arguments are larger than ${MAX_ARGUMENT_BYTES} bytes`;
  // depth is bounded above, so an explicit stack walks every member once
  const stack: unknown[] = [args];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (HOSTILE_KEYS.has(key)) return `the key "${key}" is refused`;
      stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return undefined;
}

/**
 * The one path an MCP `tools/call` takes, the same as a turn's step: the
 * tool must be an active executor of the catalog; hostile arguments (not an
 * object, deeper than 64 levels, over 256 KiB, a `__proto__` /
 * `constructor` / `prototype` key) are refused; the vaglio reviews the call
 * (guard, judge, confirmation); a call that needs the person's approval
 * (side effects, not idempotent) is held for them and answered
 * `needs_approval` with its approval id and call hash, and runs when the
 * client calls again after the approval; then the invoker re-verifies the
 * signature, validates the input, runs the real sandbox and writes the audit
 * line with caller `{ kind: 'mcp', client }` (and, when the invoker has the
 * installation's receipt chain, appends the call's signed receipt). Approvals are bound to the MCP session: the call's turn id is
 * `mcp:<session>`, step 1.
 *
 * @example
 * const path = createMcpCallPath({ catalog, invoker, reviewer: vaglio, approvals: vaglio.approvals, held, workspace, home });
 * await path.call('time_now', { timezone: 'UTC' }, { client: 'inspector', session: 's1' });
 */
export function createMcpCallPath(settings: McpCallPathSettings) {
  // the last approval asked for each call, so a denial is told once rather than asked again at once
  const asked = new Map<string, string>();

  async function run(executor: VerifiedExecutor, args: unknown, caller: McpCaller, signal?: AbortSignal) {
    return settings.invoker.invoke(executor.name, args, {
      workspace: settings.workspace,
      caller: { kind: 'mcp', client: caller.client },
      turnId: `mcp:${caller.session}`,
      traceId: randomUUID(),
      config: settings.executorConfig?.[executor.name],
      hostServices: settings.hostServices?.(executor.name),
      signal,
    });
  }

  /**
   * The person's decision on a call the vaglio paused: the approval asked the
   * last time this exact call came (an approved one is no longer the store's
   * live pending approval, so the vaglio opened another), then the live one.
   */
  async function approvedBefore(
    pending: { id: string; callHash: string; expiresAt: string },
    call: ProposedCall,
    client: string,
  ): Promise<{ kind: 'granted' } | McpCallOutcome> {
    const previous = asked.get(pending.callHash);
    for (const id of new Set([previous ?? pending.id, pending.id])) {
      if ((await settings.approvals.check(id, call)).ok) {
        asked.delete(pending.callHash);
        await settings.held.release(id);
        return { kind: 'granted' };
      }
    }
    if (previous && previous !== pending.id && (await settings.approvals.get(previous))?.state === 'denied') {
      // a denial answers the client once; its next call asks the person again
      asked.delete(pending.callHash);
      await settings.held.release(previous);
      return { kind: 'denied', approvalId: previous };
    }
    asked.set(pending.callHash, pending.id);
    await settings.held.hold({
      approvalId: pending.id,
      callHash: pending.callHash,
      expiresAt: pending.expiresAt,
      client,
      call,
    });
    return {
      kind: 'needs_approval',
      approvalId: pending.id,
      callHash: pending.callHash,
      expiresAt: pending.expiresAt,
      tool: call.executor.name,
    };
  }

  return {
    async call(
      name: unknown,
      args: unknown,
      caller: McpCaller,
      signal?: AbortSignal,
    ): Promise<McpCallOutcome> {
      if (typeof name !== 'string' || !TOOL_NAME.test(name)) return UNAVAILABLE;
      const hostile = hostileArguments(args ?? {});
      if (hostile) return invalid(hostile);
      const executor = activeExecutors(settings.catalog).find((candidate) => candidate.name === name);
      if (!executor) return UNAVAILABLE;
      const call: ProposedCall = {
        executor: executorContract(executor),
        args: args ?? {},
        request: `${name} (called by the MCP client ${caller.client})`,
        stepIndex: 1,
        turnId: `mcp:${caller.session}`,
      };
      const verdict = await settings.reviewer.evaluate(
        { ...call, stepIndex: 1, turnId: call.turnId! },
        { home: settings.home, workspace: settings.workspace },
      );
      if (!verdict.approved) {
        if (verdict.blocked_by !== 'confirmation' || !verdict.pending)
          return { kind: 'blocked', blockedBy: verdict.blocked_by ?? 'vaglio', reason: verdict.reason };
        const granted = await approvedBefore(verdict.pending, call, caller.client);
        if (granted.kind !== 'granted') return granted;
      }
      const result = await run(executor, call.args, caller, signal);
      // a signature that no longer verifies quarantined the executor: to the client it is gone
      if (!result.ok && result.error.class === 'NotInvocable') return UNAVAILABLE;
      return { kind: 'result', executor, result };
    },
  };
}

export type McpCallPath = ReturnType<typeof createMcpCallPath>;

/**
 * True for a call an MCP client made (its turn id is `mcp:<session>`): an
 * approval of it lets the client's next call run, and resumes no turn.
 *
 * @example
 * if (isMcpCall(decision.call)) return { mcp: 'approved' };
 */
export function isMcpCall(call: { turnId?: string }): boolean {
  return typeof call.turnId === 'string' && call.turnId.startsWith('mcp:');
}
