import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAiServer } from '../test/openai-server.ts';
import type { WireServer } from '../test/wire-server.ts';
import { ANTHROPIC_PRICING, costOf, lookupPrice, OPENAI_PRICING } from './pricing.ts';
import { createOpenAiModel } from './providers.ts';

describe('lookupPrice', () => {
  it('finds an exact name first', () => {
    expect(lookupPrice(OPENAI_PRICING, 'gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(lookupPrice(ANTHROPIC_PRICING, 'claude-opus-4-5')).toEqual({ input: 5, output: 25 });
  });

  it('falls back to the longest prefix at a name boundary', () => {
    expect(lookupPrice(OPENAI_PRICING, 'gpt-4o-2024-11-20')).toEqual(OPENAI_PRICING['gpt-4o']);
    expect(lookupPrice(OPENAI_PRICING, 'gpt-4o-mini-2024-07-18')).toEqual(OPENAI_PRICING['gpt-4o-mini']);
    expect(lookupPrice(ANTHROPIC_PRICING, 'claude-sonnet-4-5-20250929')).toEqual(
      ANTHROPIC_PRICING['claude-sonnet-4-5'],
    );
    expect(lookupPrice(ANTHROPIC_PRICING, 'claude-opus-4-20250514')).toEqual(
      ANTHROPIC_PRICING['claude-opus-4'],
    );
  });

  it('does not match across a name boundary, and gives undefined for the unknown', () => {
    expect(lookupPrice(OPENAI_PRICING, 'gpt-4oz')).toBeUndefined();
    expect(lookupPrice(OPENAI_PRICING, 'llama-3.1-70b')).toBeUndefined();
    expect(lookupPrice(OPENAI_PRICING, 'constructor')).toBeUndefined();
  });

  it('prices usage per million tokens', () => {
    expect(costOf({ input: 3, output: 15 }, { inputTokens: 1_000_000, outputTokens: 100_000 })).toBeCloseTo(
      4.5,
      10,
    );
    expect(costOf(undefined, { inputTokens: 10, outputTokens: 10 })).toBeUndefined();
  });
});

describe('cost on a real request', () => {
  let server: WireServer | undefined;
  afterEach(() => server?.close());

  it('is undefined for a model with no price, and follows a custom table when given one', async () => {
    server = await startOpenAiServer([
      { text: 'a' },
      { text: 'b', usage: { inputTokens: 2_000_000, outputTokens: 0 } },
    ]);
    const unknown = createOpenAiModel({ model: 'my-local-llama', apiKey: 'k', baseUrl: server.baseUrl });
    expect(
      (await unknown.generate({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [] })).costUsd,
    ).toBeUndefined();
    const priced = createOpenAiModel({
      model: 'my-local-llama',
      apiKey: 'k',
      baseUrl: server.baseUrl,
      pricing: { 'my-local-llama': { input: 0.5, output: 1 } },
    });
    expect(
      (await priced.generate({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [] })).costUsd,
    ).toBe(1);
  });
});
