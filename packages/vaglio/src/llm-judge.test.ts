import { describe, expect, it } from 'vitest';
import { createLlmJudge, judgePrompt, parseJudgeAnswer } from './llm-judge.ts';
import { createScriptedModel, EXECUTORS } from './test/index.ts';

const input = {
  request: 'send "hi" to my chat',
  executor: EXECUTORS.telegram_send,
  args: { chat: 'me', text: 'hi' },
};

describe('LLM judge', () => {
  it('scores with a well-formed JSON answer', async () => {
    const judge = createLlmJudge({
      model: createScriptedModel(['{"score": 0.85, "reason": "exactly what was asked"}']),
    });
    expect(judge.kind).toBe('llm');
    expect(await judge.judge(input)).toEqual({ ok: true, score: 0.85, reason: 'exactly what was asked' });
  });

  it('accepts a fenced JSON block, with prose around it', async () => {
    const answer =
      'Here is my verdict:\n```json\n{ "score": 0.4, "reason": "broader than asked" }\n```\nHope it helps.';
    const judge = createLlmJudge({ model: createScriptedModel([answer]) });
    expect(await judge.judge(input)).toEqual({ ok: true, score: 0.4, reason: 'broader than asked' });
  });

  it('turns garbage into a typed unreadable failure, never an exception', async () => {
    for (const garbage of [
      'Sure! Looks fine to me.',
      '',
      '{"score": "high", "reason": "ok"}',
      '{"score": 0.5}',
      '[0.5]',
      '```json\n{ not json }\n```',
    ]) {
      const judge = createLlmJudge({ model: createScriptedModel([garbage]) });
      const judgement = await judge.judge(input);
      expect([garbage, judgement.ok]).toEqual([garbage, false]);
      if (!judgement.ok) {
        expect(judgement.failure).toBe('unreadable');
        expect(judgement.reason).toMatch(/^the judge's answer was unreadable/);
      }
    }
  });

  it('refuses scores outside [0, 1]', async () => {
    for (const answer of ['{"score": 1.5, "reason": "very good"}', '{"score": -0.1, "reason": "bad"}']) {
      const judgement = await createLlmJudge({ model: createScriptedModel([answer]) }).judge(input);
      expect(judgement).toMatchObject({
        ok: false,
        failure: 'unreadable',
        reason: "the judge's answer was unreadable (invalid score)",
      });
    }
  });

  it('fails closed when the model throws', async () => {
    const judge = createLlmJudge({
      model: createScriptedModel([new Error('connection refused: http://127.0.0.1:11434')]),
    });
    expect(await judge.judge(input)).toEqual({
      ok: false,
      failure: 'model_error',
      reason: 'the judge model failed to answer',
    });
  });

  it('fails closed when the model does not answer in time', async () => {
    const judge = createLlmJudge({ model: () => new Promise<string>(() => {}), timeoutMs: 20 });
    expect(await judge.judge(input)).toEqual({
      ok: false,
      failure: 'timeout',
      reason: 'the judge did not answer within 20 ms',
    });
  });

  it('sends only the request, the executor contract and the arguments, in a context of its own', async () => {
    const model = createScriptedModel(['{"score": 0.9, "reason": "fine"}']);
    const judge = createLlmJudge({ model });
    const smuggled = {
      ...input,
      place: { home: '/home/ada', workspace: '/w' },
      conversation: 'PROPOSER-SCRATCHPAD',
      turnId: 'turn-42',
    };
    await judge.judge(smuggled);
    expect(model.prompts).toHaveLength(1);
    const prompt = model.prompts[0]!;
    expect(prompt).toEqual(judgePrompt(input));
    expect(JSON.parse(prompt.user.slice(prompt.user.indexOf('{')))).toEqual({
      request: 'send "hi" to my chat',
      executor: {
        name: 'telegram_send',
        version: '1.0.0',
        capabilities: ['net:http'],
        side_effects: true,
        idempotent: false,
      },
      arguments: { chat: 'me', text: 'hi' },
    });
    expect(`${prompt.system}${prompt.user}`).not.toMatch(/PROPOSER-SCRATCHPAD|turn-42|\/home\/ada/);
    expect(prompt.system).toMatch(/never instructions/);
  });

  it('keeps long reasons short', () => {
    const judgement = parseJudgeAnswer(JSON.stringify({ score: 0.5, reason: 'x'.repeat(2000) }));
    expect(judgement.ok && judgement.reason.length).toBe(401);
  });
});
