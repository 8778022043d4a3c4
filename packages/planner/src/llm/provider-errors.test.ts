import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../test/anthropic-server.ts';
import { startOpenAiServer } from '../test/openai-server.ts';
import type { WireServer } from '../test/wire-server.ts';
import { ProviderHttpError, ProviderResponseError } from './errors.ts';
import { cappedErrorBodyFetch, MAX_ERROR_BODY_BYTES, parseRetryAfter } from './provider-errors.ts';
import { createAnthropicModel, createOpenAiModel } from './providers.ts';
import { classifyFailure } from './retry.ts';

const hi = { system: '', messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-04-27T10:00:00Z');
  it('reads seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter({ 'retry-after': '3' }, now)).toBe(3000);
    expect(parseRetryAfter({ 'Retry-After': '1.5' }, now)).toBe(1500);
    expect(parseRetryAfter({ 'retry-after': 'Mon, 27 Apr 2026 10:00:20 GMT' }, now)).toBe(20_000);
    expect(parseRetryAfter({ 'retry-after': 'Mon, 27 Apr 2026 09:00:00 GMT' }, now)).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': '-4' }, now)).toBeUndefined();
  });
});

describe('cappedErrorBodyFetch', () => {
  it('reads an error body off the wire only up to 8 KiB, even an endless one', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1024;
        controller.enqueue(new Uint8Array(1024).fill(120));
      },
    });
    const guarded = cappedErrorBodyFetch(async () => new Response(endless, { status: 502 }));
    const response = await guarded('http://127.0.0.1/');
    expect(response.status).toBe(502);
    expect((await response.text()).length).toBe(MAX_ERROR_BODY_BYTES);
    expect(pulled).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES + 2 * 1024);
  });

  it('leaves successful responses alone', async () => {
    const original = new Response('fine');
    expect(await cappedErrorBodyFetch(async () => original)('http://127.0.0.1/')).toBe(original);
  });
});

describe('error mapping against real servers', () => {
  const servers: WireServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('keeps at most 500 characters of a huge error body', async () => {
    const server = await startOpenAiServer([{ status: 503, body: 'x'.repeat(50_000), retryAfter: 1 }]);
    servers.push(server);
    const error = await createOpenAiModel({ model: 'gpt-4o', apiKey: 'k', baseUrl: server.baseUrl })
      .generate(hi)
      .catch((caught: unknown) => caught);
    expect(ProviderHttpError.isInstance(error)).toBe(true);
    expect((error as ProviderHttpError).bodySnippet).toBe('x'.repeat(500));
    expect((error as ProviderHttpError).retryAfterMs).toBe(1000);
    expect((error as ProviderHttpError).message.length).toBeLessThan(700);
  });

  it('reports an overloaded Anthropic (529) as transient', async () => {
    const server = await startAnthropicServer([{ status: 529, message: 'Overloaded' }]);
    servers.push(server);
    const error = await createAnthropicModel({
      model: 'claude-haiku-4-5',
      apiKey: 'k',
      baseUrl: server.baseUrl,
    })
      .generate(hi)
      .catch((caught: unknown) => caught);
    expect((error as ProviderHttpError).hint).toMatch(/overloaded/);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('maps a 200 with a body of the wrong shape to ProviderResponseError', async () => {
    const server = await startOpenAiServer([{ status: 200, body: '<html>captive portal</html>' }]);
    servers.push(server);
    const error = await createOpenAiModel({ model: 'gpt-4o', apiKey: 'k', baseUrl: server.baseUrl })
      .generate(hi)
      .catch((caught: unknown) => caught);
    expect(ProviderResponseError.isInstance(error)).toBe(true);
    expect(classifyFailure(error)).toBe('permanent');
  });
});
