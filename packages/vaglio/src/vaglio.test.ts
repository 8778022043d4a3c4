import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.ts';
import { VaglioSettingsError } from './errors.ts';
import type { Judge } from './judge.ts';
import { createLlmJudge } from './llm-judge.ts';
import { createManualClock, createScriptedModel, EXECUTORS, proposedCall } from './test/index.ts';
import type { Autonomy, EvaluationContext } from './types.ts';
import { createVaglio } from './vaglio.ts';

const temp = useTempDirs('metnos-vaglio-');
const context: EvaluationContext = { home: '/home/ada', workspace: '/home/ada/metnos' };
const previousThreshold = process.env.METNOS_JUDGE_THRESHOLD;

afterEach(() => {
  if (previousThreshold === undefined) delete process.env.METNOS_JUDGE_THRESHOLD;
  else process.env.METNOS_JUDGE_THRESHOLD = previousThreshold;
});

/** A judge that always gives `score` and counts how often it was asked. */
function fixedJudge(score: number): Judge & { calls: number } {
  const judge = {
    kind: 'rules' as const,
    calls: 0,
    judge() {
      judge.calls++;
      return { ok: true as const, score, reason: `fixed ${score}` };
    },
  };
  return judge;
}

async function readLog(
  dir: string,
): Promise<{ files: string[]; lines: Record<string, unknown>[]; text: string }> {
  const files = (await readdir(dir)).sort();
  const text = (await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))).join('');
  return {
    files,
    text,
    lines: text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('vaglio: verdicts', () => {
  it('approves an ordinary call with the verdict shape the planner reads', async () => {
    const vaglio = createVaglio({ clock: createManualClock('2026-04-27T10:00:00Z') });
    const verdict = await vaglio.evaluate(proposedCall({ request: 'fs read notes.md' }), context);
    expect(verdict).toEqual({
      approved: true,
      blocked_by: null,
      score: 0.9,
      judge_kind: 'rules',
      ts: '2026-04-27T10:00:00.000Z',
      reason: 'score 0.90 (rules-1: base 0.7; +0.2 request names the executor)',
    });
  });

  it('stops a forbidden path at the guard with score 0, without asking the judge', async () => {
    const judge = fixedJudge(1);
    const vaglio = createVaglio({ judge });
    const verdict = await vaglio.evaluate(
      proposedCall({ args: { path: '~/.ssh/id_rsa' }, request: 'fs_read my ssh key, I insist' }),
      context,
    );
    expect(verdict).toMatchObject({
      approved: false,
      blocked_by: 'guard',
      score: 0,
      reason: 'argument "path" mentions a forbidden path (~/.ssh)',
    });
    expect(judge.calls).toBe(0);
  });

  it('never relaxes the guard, whatever the autonomy level', async () => {
    const vaglio = createVaglio({ judge: fixedJudge(1) });
    for (const autonomy of ['ask', 'normal', 'full'] as Autonomy[]) {
      const destructive = await vaglio.evaluate(
        proposedCall({ executor: EXECUTORS.shell_exec, args: { command: 'rm', args: ['-rf', '/'] } }),
        { ...context, autonomy },
      );
      expect([autonomy, destructive.blocked_by]).toEqual([autonomy, 'guard']);
      const secret = await vaglio.evaluate(proposedCall({ args: { path: '/etc/shadow' } }), {
        ...context,
        autonomy,
      });
      expect([autonomy, secret.blocked_by]).toEqual([autonomy, 'guard']);
    }
  });

  it('blocks below the threshold and approves at or above it', async () => {
    expect(await createVaglio({ judge: fixedJudge(0.29) }).evaluate(proposedCall(), context)).toMatchObject({
      approved: false,
      blocked_by: 'judge',
      score: 0.29,
      reason: 'score 0.29 is below the threshold 0.30 (fixed 0.29)',
    });
    expect(await createVaglio({ judge: fixedJudge(0.3) }).evaluate(proposedCall(), context)).toMatchObject({
      approved: true,
      blocked_by: null,
    });
    expect(await createVaglio({ judge: fixedJudge(0.299) }).evaluate(proposedCall(), context)).toMatchObject({
      approved: false,
      reason: 'score 0.299 is below the threshold 0.30 (fixed 0.299)',
    });
  });

  it('blocks a traversal with an anomalous key under the rules judge', async () => {
    const verdict = await createVaglio().evaluate(
      proposedCall({ args: { 'path;': '../../tmp/x' } }),
      context,
    );
    expect(verdict).toMatchObject({ approved: false, blocked_by: 'judge', score: 0.1 });
  });

  it('takes the threshold from the option, else METNOS_JUDGE_THRESHOLD, else 0.30', async () => {
    delete process.env.METNOS_JUDGE_THRESHOLD;
    expect(createVaglio().threshold).toBe(0.3);
    process.env.METNOS_JUDGE_THRESHOLD = '0.8';
    const fromEnv = createVaglio();
    expect(fromEnv.threshold).toBe(0.8);
    expect(await fromEnv.evaluate(proposedCall(), context)).toMatchObject({
      approved: false,
      blocked_by: 'judge',
      score: 0.7,
    });
    const fromOption = createVaglio({ threshold: 0.5 });
    expect(fromOption.threshold).toBe(0.5);
    expect(await fromOption.evaluate(proposedCall(), context)).toMatchObject({ approved: true });
  });

  it('refuses a threshold it cannot use, naming the setting to fix', () => {
    process.env.METNOS_JUDGE_THRESHOLD = 'high';
    const fromEnv = (() => {
      try {
        createVaglio();
      } catch (error) {
        return error;
      }
    })();
    expect(VaglioSettingsError.isInstance(fromEnv)).toBe(true);
    expect((fromEnv as VaglioSettingsError).setting).toBe('METNOS_JUDGE_THRESHOLD');
    expect((fromEnv as Error).message).toMatch(/METNOS_JUDGE_THRESHOLD must be a number from 0 to 1/);
    expect(() => createVaglio({ threshold: 1.5 })).toThrow(/threshold option must be a number from 0 to 1/);
  });
});

describe('vaglio: LLM judge', () => {
  it('approves on a good answer and reports the llm judge kind', async () => {
    const vaglio = createVaglio({
      judge: createLlmJudge({ model: createScriptedModel(['{"score": 0.8, "reason": "what was asked"}']) }),
    });
    expect(await vaglio.evaluate(proposedCall(), context)).toMatchObject({
      approved: true,
      score: 0.8,
      judge_kind: 'llm',
      reason: 'score 0.80 (what was asked)',
    });
  });

  it('fails closed on garbage, out-of-range scores, errors and throwing judges', async () => {
    const cases: [Judge, RegExp][] = [
      [
        createLlmJudge({ model: createScriptedModel(['I think it is fine']) }),
        /^the judge's answer was unreadable/,
      ],
      [
        createLlmJudge({ model: createScriptedModel(['{"score": 7, "reason": "great"}']) }),
        /^the judge's answer was unreadable/,
      ],
      [createLlmJudge({ model: createScriptedModel([new Error('boom')]) }), /^the judge model failed/],
      [{ kind: 'llm', judge: () => ({ ok: true, score: Number.NaN, reason: 'x' }) }, /outside \[0, 1\]/],
      [
        {
          kind: 'llm',
          judge: () => {
            throw new Error('bug');
          },
        },
        /^the judge failed/,
      ],
    ];
    for (const [judge, reason] of cases) {
      const verdict = await createVaglio({ judge }).evaluate(proposedCall(), context);
      expect(verdict).toMatchObject({ approved: false, blocked_by: 'judge', score: 0, judge_kind: 'llm' });
      expect(verdict.reason).toMatch(reason);
    }
  });

  it('removes argument values the model quotes in its reason', async () => {
    const model = createScriptedModel([
      '{"score": 0.9, "reason": "it sends tok_live_8842 to the chat, as asked"}',
    ]);
    const vaglio = createVaglio({ judge: createLlmJudge({ model }) });
    const verdict = await vaglio.evaluate(proposedCall({ args: { token: 'tok_live_8842' } }), context);
    expect(verdict.reason).toBe('score 0.90 (it sends […] to the chat, as asked)');
  });
});

describe('vaglio: reinforced confirmation', () => {
  const send = proposedCall({
    executor: EXECUTORS.telegram_send,
    args: { chat: 'me', text: 'hi' },
    request: 'telegram send hi',
    turnId: 'turn-9',
    stepIndex: 1,
  });

  it('pauses a call with side effects that is not idempotent, at every autonomy level', async () => {
    const clock = createManualClock('2026-04-27T10:00:00Z');
    const vaglio = createVaglio({ clock });
    for (const autonomy of ['ask', 'normal', 'full'] as Autonomy[]) {
      const verdict = await vaglio.evaluate(send, { ...context, autonomy });
      expect(verdict).toMatchObject({
        approved: false,
        blocked_by: 'confirmation',
        score: 0.9,
        reason: "telegram_send has side effects and is not idempotent: waiting for the person's confirmation",
        pending: { expiresAt: '2026-04-27T10:15:00.000Z' },
      });
      expect(verdict.pending?.callHash).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('resumes only after the person approved that exact call', async () => {
    const vaglio = createVaglio();
    const { pending } = await vaglio.evaluate(send, context);
    expect(await vaglio.approvals.check(pending!.id, send)).toMatchObject({
      ok: false,
      reason: 'not_approved',
    });
    expect(
      await vaglio.approvals.approve(pending!.id, { ...send, args: { chat: 'me', text: 'bye' } }),
    ).toMatchObject({ ok: false, reason: 'different_call' });
    expect(await vaglio.approvals.approve(pending!.id, send)).toMatchObject({ ok: true });
    expect(await vaglio.approvals.check(pending!.id, send)).toMatchObject({ ok: true });
  });

  it('asks for confirmation only after the guard and the judge let the call through', async () => {
    const vaglio = createVaglio();
    expect(
      await vaglio.evaluate({ ...send, args: { chat: 'me', text: 'here is ~/.aws/credentials' } }, context),
    ).toMatchObject({ blocked_by: 'guard' });
    expect(await createVaglio({ judge: fixedJudge(0.1) }).evaluate(send, context)).toMatchObject({
      blocked_by: 'judge',
    });
  });

  it('lets idempotent side effects run, except when autonomy is "ask"', async () => {
    const write = proposedCall({
      executor: EXECUTORS.fs_write,
      args: { path: 'notes.md', content: 'x' },
      request: 'fs write notes',
    });
    const vaglio = createVaglio();
    expect(await vaglio.evaluate(write, { ...context, autonomy: 'full' })).toMatchObject({ approved: true });
    expect(await vaglio.evaluate(write, { ...context, autonomy: 'normal' })).toMatchObject({
      approved: true,
    });
    expect(await vaglio.evaluate(write, { ...context, autonomy: 'ask' })).toMatchObject({
      approved: false,
      blocked_by: 'confirmation',
      reason: 'fs_write has side effects and autonomy is "ask": waiting for the person\'s confirmation',
    });
  });
});

describe('vaglio: plans', () => {
  const read = proposedCall({ stepIndex: 1, request: 'fs read notes then send them' });
  const send = proposedCall({
    executor: EXECUTORS.telegram_send,
    args: { chat: 'me', text: '{{step1.content}}' },
    stepIndex: 2,
    request: 'fs read notes then send them',
  });
  const leak = proposedCall({
    args: { path: '/etc/passwd' },
    stepIndex: 3,
    request: 'fs read notes then send them',
  });

  it('approves a plan whose every step is approved', async () => {
    const plan = await createVaglio().evaluatePlan(
      [read, { ...read, stepIndex: 2, args: { path: 'todo.md' } }],
      context,
    );
    expect(plan).toMatchObject({
      approved: true,
      blocked_by: null,
      blocked_step: null,
      reason: 'all 2 steps approved',
    });
    expect(plan.verdicts.map((verdict) => verdict.approved)).toEqual([true, true]);
  });

  it('blocks the whole plan when one step is blocked, and says which', async () => {
    const vaglio = createVaglio();
    const plan = await vaglio.evaluatePlan([read, send, leak], context);
    expect(plan).toMatchObject({
      approved: false,
      blocked_by: 'guard',
      blocked_step: 3,
      reason:
        'blocked by the guard at step 3 (fs_read): argument "path" mentions a forbidden path (/etc/passwd)',
    });
    expect(plan.verdicts.map((verdict) => verdict.blocked_by)).toEqual([null, 'confirmation', 'guard']);
    // no approval is opened for a plan that cannot run
    expect(plan.verdicts[1]!.pending).toBeUndefined();
  });

  it('numbers steps by position when the calls carry no stepIndex', async () => {
    const { stepIndex: _one, ...first } = read;
    const { stepIndex: _three, ...third } = leak;
    const plan = await createVaglio().evaluatePlan([first, third], context);
    expect(plan.blocked_step).toBe(2);
  });

  it('pauses a plan on its steps that need confirmation, with a pending approval each', async () => {
    const plan = await createVaglio().evaluatePlan([read, send], context);
    expect(plan).toMatchObject({ approved: false, blocked_by: 'confirmation', blocked_step: 2 });
    expect(plan.reason).toMatch(/^step 2 \(telegram_send\) waits for confirmation/);
    expect(plan.verdicts[1]!.pending?.id).toEqual(expect.any(String));
  });
});

describe('vaglio: log', () => {
  it('writes one line per verdict to <dir>/YYYY-MM.jsonl, the month from the injected clock', async () => {
    const dir = await temp.make();
    const clock = createManualClock('2026-04-30T23:59:00Z');
    const vaglio = createVaglio({ log: { dir }, clock });
    await vaglio.evaluate(proposedCall({ turnId: 'turn-1', stepIndex: 1 }), context);
    clock.set('2026-05-01T00:01:00Z');
    await vaglio.evaluate(
      proposedCall({ turnId: 'turn-2', stepIndex: 4, args: { path: '/proc/self/environ' } }),
      context,
    );
    const { files, lines } = await readLog(dir);
    expect(files).toEqual(['2026-04.jsonl', '2026-05.jsonl']);
    expect(lines[0]).toEqual({
      ts: '2026-04-30T23:59:00.000Z',
      turn_id: 'turn-1',
      step: 1,
      executor: 'fs_read',
      executor_version: '1.0.0',
      arg_keys: ['path'],
      approved: true,
      blocked_by: null,
      score: 0.7,
      judge_kind: 'rules',
      reason: 'score 0.70 (rules-1: base 0.7)',
    });
    expect(lines[1]).toMatchObject({
      turn_id: 'turn-2',
      step: 4,
      approved: false,
      blocked_by: 'guard',
      score: 0,
    });
  });

  it('records argument keys, never values, even when the judge quotes them', async () => {
    const dir = await temp.make();
    const secret = 'hunter2-Pa55w0rd-XYZ';
    const model = createScriptedModel([`{"score": 0.9, "reason": "stores the password ${secret} as asked"}`]);
    const vaglio = createVaglio({ log: { dir }, judge: createLlmJudge({ model }) });
    await vaglio.evaluate(
      proposedCall({
        executor: EXECUTORS.fs_write,
        args: { path: 'vault.txt', content: secret, meta: { note: secret } },
      }),
      context,
    );
    await vaglio.evaluate(proposedCall({ args: { path: `/home/ada/.ssh/${secret}` } }), context);
    await vaglio.evaluate(
      proposedCall({ executor: EXECUTORS.shell_exec, args: { command: `rm -rf / #${secret}` } }),
      context,
    );
    await vaglio.evaluatePlan([proposedCall({ args: { path: secret } })], context);
    const { lines, text } = await readLog(dir);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('Pa55w0rd');
    expect(lines.map((line) => line.arg_keys)).toEqual([
      ['path', 'content', 'meta'],
      ['path'],
      ['command'],
      ['path'],
    ]);
  });

  it('logs every step of an evaluated plan', async () => {
    const dir = await temp.make();
    const vaglio = createVaglio({ log: { dir } });
    await vaglio.evaluatePlan(
      [proposedCall({ stepIndex: 1 }), proposedCall({ stepIndex: 2, args: { path: '/boot/grub' } })],
      context,
    );
    const { lines } = await readLog(dir);
    expect(lines.map((line) => [line.step, line.blocked_by])).toEqual([
      [1, null],
      [2, 'guard'],
    ]);
  });
});
