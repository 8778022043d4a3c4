import { appendFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createReceiptChain,
  generateSigningKey,
  ReceiptError,
  verifyReceiptChain,
} from '@metnos/executor-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../test/scripted-model.ts';
import { ProviderHttpError } from './errors.ts';
import { isReceipted, withReceipts } from './receipts.ts';

const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));
const PROMPT = 'my door code is 4711, remind me tomorrow';

async function chain() {
  const dir = await mkdtemp(join(tmpdir(), 'metnos-model-receipts-'));
  made.push(dir);
  const key = await generateSigningKey();
  return { dir, key, chain: createReceiptChain({ dir, key }) };
}

const lines = async (dir: string) => {
  const [file] = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'));
  return (await readFile(join(dir, file!), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
};

describe('withReceipts', () => {
  it('signs a receipt per call, answered or failed, holding digests and counts, never the prompt', async () => {
    const { dir, key, chain: receipts } = await chain();
    const failure = new ProviderHttpError({
      status: 429,
      bodySnippet: '',
      providerName: 'openai',
      hint: 'slow down',
    });
    const model = withReceipts(
      createScriptedModel(
        [{ text: 'noted', usage: { inputTokens: 12, outputTokens: 3 }, costUsd: 0.001 }, { error: failure }],
        { id: 'gpt-4o-mini', provider: 'openai', tier: 'fast' },
      ),
      receipts,
      { run: 'turn-9' },
    );
    const request = {
      system: 'You are Metnos.',
      messages: [{ role: 'user' as const, content: PROMPT }],
      tools: [],
    };
    expect((await model.generate(request)).text).toBe('noted');
    await expect(model.generate(request)).rejects.toBe(failure);
    const [answered, failed] = await lines(dir);
    expect(answered).toMatchObject({
      kind: 'model',
      data: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        tier: 'fast',
        run: 'turn-9',
        request: expect.stringMatching(/^blake3:/),
        response: expect.stringMatching(/^blake3:/),
        input_tokens: 12,
        output_tokens: 3,
        cost_usd: 0.001,
        outcome: 'ok',
      },
    });
    expect(failed).toMatchObject({ data: { outcome: 'ProviderHttpError', response: null } });
    expect(JSON.stringify([answered, failed])).not.toContain('4711');
    expect(await verifyReceiptChain({ dir, keys: [key] })).toMatchObject({ status: 'ok', receipts: 2 });
  });

  it('fails closed: a chain with a torn tail stops the call before the model is asked', async () => {
    const { dir, chain: receipts } = await chain();
    const inner = createScriptedModel([{ text: 'one' }, { text: 'two' }]);
    const model = withReceipts(inner, receipts);
    const request = { system: '', messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
    await model.generate(request);
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'));
    await appendFile(join(dir, file!), '{"v":1,"seq":1,');
    await expect(model.generate(request)).rejects.toSatisfy(
      (error) => ReceiptError.isInstance(error) && error.reason === 'torn_tail',
    );
    expect(inner.requests).toHaveLength(1);
  });

  it('wraps a model once', async () => {
    const { chain: receipts } = await chain();
    const once = withReceipts(createScriptedModel([]), receipts);
    expect(isReceipted(once)).toBe(true);
    expect(withReceipts(once, receipts)).toBe(once);
  });
});
