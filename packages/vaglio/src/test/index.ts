import type { JudgeModel, JudgePrompt } from '../llm-judge.ts';
import type { ExecutorContract, ProposedCall } from '../types.ts';

/** One scripted model answer: a text, an error to throw, or a function of the prompt. */
export type ScriptedAnswer = string | Error | ((prompt: JudgePrompt) => string | Promise<string>);

/**
 * A model for the LLM judge that plays back answers in order (the last one
 * repeats) and records every prompt it received.
 *
 * @example
 * const model = createScriptedModel(['{"score": 0.9, "reason": "asked for"}']);
 * const judge = createLlmJudge({ model });
 * model.prompts; // what the judge sent
 */
export function createScriptedModel(answers: ScriptedAnswer[]): JudgeModel & { prompts: JudgePrompt[] } {
  const prompts: JudgePrompt[] = [];
  let next = 0;
  const model = async (prompt: JudgePrompt): Promise<string> => {
    prompts.push(prompt);
    const answer = answers[Math.min(next++, answers.length - 1)];
    if (answer === undefined) throw new Error('the scripted model has no answers');
    if (answer instanceof Error) throw answer;
    return typeof answer === 'function' ? answer(prompt) : answer;
  };
  return Object.assign(model, { prompts });
}

/**
 * A clock that stays where it is put, for replayable verdicts and expiries.
 *
 * @example
 * const clock = createManualClock('2026-04-27T10:00:00Z');
 * clock.advance(16 * 60_000);
 */
export function createManualClock(
  start: string | Date,
): (() => Date) & { advance(ms: number): void; set(to: string | Date): void } {
  let now = new Date(start).getTime();
  const clock = () => new Date(now);
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    set(to: string | Date) {
      now = new Date(to).getTime();
    },
  });
}

/** Contracts of executors shaped like the seed ones, for tests. */
export const EXECUTORS = {
  fs_read: {
    name: 'fs_read',
    version: '1.0.0',
    capabilities: ['fs:read'],
    sideEffects: false,
    idempotent: true,
  },
  fs_write: {
    name: 'fs_write',
    version: '1.0.0',
    capabilities: ['fs:read', 'fs:write'],
    sideEffects: true,
    idempotent: true,
  },
  shell_exec: {
    name: 'shell_exec',
    version: '1.0.0',
    capabilities: ['code:exec', 'fs:read'],
    sideEffects: false,
    idempotent: true,
  },
  telegram_send: {
    name: 'telegram_send',
    version: '1.0.0',
    capabilities: ['net:http'],
    sideEffects: true,
    idempotent: false,
  },
} as const satisfies Record<string, ExecutorContract>;

/**
 * A proposed call with sensible defaults (`fs_read` of `notes.md`, turn `t1`, step 1).
 *
 * @example
 * proposedCall({ executor: EXECUTORS.shell_exec, args: { command: 'ls' } });
 */
export function proposedCall(overrides: Partial<ProposedCall> = {}): ProposedCall {
  const executor = overrides.executor ?? EXECUTORS.fs_read;
  return {
    args: { path: 'notes.md' },
    request: 'read my notes',
    turnId: 't1',
    stepIndex: 1,
    ...overrides,
    executor: { ...executor, capabilities: [...executor.capabilities] },
  };
}
